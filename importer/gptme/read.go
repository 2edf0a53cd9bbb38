package gptme

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// line is one message of a conversation log, as gptme writes it.
type line struct {
	Role      string    `json:"role"`
	Content   *string   `json:"content"`
	Timestamp string    `json:"timestamp"`
	Files     []string  `json:"files"`
	CallID    string    `json:"call_id"`
	Hide      bool      `json:"hide"`
	Metadata  *metadata `json:"metadata"`
}

// metadata is a message's model, cost and usage: nested under usage
// since gptme 0.28's change, at the top before.
type metadata struct {
	Model string  `json:"model"`
	Cost  float64 `json:"cost"`
	Usage *usage  `json:"usage"`
	usage
}

type usage struct {
	InputTokens         float64 `json:"input_tokens"`
	OutputTokens        float64 `json:"output_tokens"`
	CacheReadTokens     float64 `json:"cache_read_tokens"`
	CacheCreationTokens float64 `json:"cache_creation_tokens"`
	ReasoningTokens     float64 `json:"reasoning_tokens"`
}

// thinking is a reasoning block as gptme keeps it in a reply's text.
var thinking = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<think(?:ing)?>(.*?)</think(?:ing)?>`) })

// toolCall is how gptme's tool format writes a call in the reply:
// @<tool>(<call id>): <arguments as JSON>.
var toolCall = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^@([A-Za-z0-9_.-]+)\(([^()\s]+)\):[ \t]*`) })

func read(ctx context.Context, name, id, cwd string, r io.Reader) (*importer.Result, error) {
	res := &importer.Result{}
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: name, Cwd: cwd}
	calls := map[string]*loom.Part{}
	prompted := false
	err := importer.Lines(ctx, r, func(n int, raw []byte) error {
		if len(bytes.TrimSpace(raw)) == 0 {
			return nil
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil || l.Content == nil {
			res.Problemf(name, n, "not a message")
			return nil
		}
		res.CheckUTF8(name, n, raw)
		mid := strconv.Itoa(n)
		at := importer.ISOTime(l.Timestamp)
		msg := &loom.Message{ID: mid, CreatedAt: at, CompletedAt: &at}
		text := *l.Content
		switch l.Role {
		case "user":
			prompted = true
			msg.Role = loom.RoleUser
		case "assistant":
			msg.Role = loom.RoleAssistant
		case "system":
			if p := calls[l.CallID]; l.CallID != "" && p != nil {
				// The result of a call in gptme's tool format.
				out, _ := json.Marshal(text)
				p.Status, p.Output = loom.ToolCompleted, out
				res.Skip("tool-result")
				return nil
			}
			if !prompted {
				// The system prompt gptme sends first.
				res.Skip("system-prompt")
				return nil
			}
			msg.Role = loom.RoleSystem
		default:
			res.Skip("unknown:" + importer.TypeName(l.Role))
			return nil
		}
		if msg.Role == loom.RoleAssistant {
			msg.Parts = reply(mid, text)
			for i := range msg.Parts {
				if p := &msg.Parts[i]; p.Type == loom.PartTool {
					calls[p.CallID] = p
				}
			}
		} else if strings.TrimSpace(text) != "" {
			msg.Parts = []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: text}}
		}
		for j, f := range l.Files {
			if f = strings.TrimSpace(f); f != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/file/" + strconv.Itoa(j), Type: loom.PartFile, Filename: filepath.Base(f), Source: &loom.FileSource{Type: "file", Path: f}})
			}
		}
		if m := l.Metadata; m != nil {
			msg.Usage = m.loom()
			if prov, model, ok := strings.Cut(m.Model, "/"); ok {
				msg.Provider, msg.Model = prov, model
				s.Model, s.Provider = model, prov
			} else if m.Model != "" {
				msg.Model, s.Model = m.Model, m.Model
			}
		}
		if len(msg.Parts) == 0 {
			res.Skip("empty-" + msg.Role + "-message")
			return nil
		}
		s.Messages = append(s.Messages, msg)
		return nil
	}, res.TooLong(name))
	if err != nil {
		return nil, err
	}
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res, nil
	}
	// A message without a time has the one before it.
	var last time.Time
	for _, m := range s.Messages {
		if m.CreatedAt.IsZero() {
			m.CreatedAt = last
			done := last
			m.CompletedAt = &done
		}
		last = m.CreatedAt
	}
	s.CreatedAt, s.UpdatedAt = s.Messages[0].CreatedAt, last
	res.Sessions = []*importer.Session{s}
	return res, nil
}

// reply is an assistant message's parts: its text, and each call in
// gptme's tool format as a tool part where it was written (the calls
// of the markdown and XML formats are code blocks of the text, and
// their output the system message after them).
func reply(mid string, text string) []loom.Part {
	var parts []loom.Part
	add := func(typ, t string) {
		if t = strings.TrimSpace(t); t != "" {
			parts = append(parts, loom.Part{ID: mid + "/" + strconv.Itoa(len(parts)), Type: typ, Text: t})
		}
	}
	// Text, less the <thinking> blocks gptme keeps in the reply, which
	// are reasoning parts where they were.
	addText := func(t string) {
		for {
			loc := thinking().FindStringSubmatchIndex(t)
			if loc == nil {
				break
			}
			add(loom.PartText, t[:loc[0]])
			add(loom.PartReasoning, t[loc[2]:loc[3]])
			t = t[loc[1]:]
		}
		add(loom.PartText, t)
	}
	rest := text
	for {
		loc := toolCall().FindStringSubmatchIndex(rest)
		if loc == nil {
			break
		}
		args := rest[loc[1]:]
		dec := json.NewDecoder(strings.NewReader(args))
		var v json.RawMessage
		if dec.Decode(&v) != nil || len(bytes.TrimSpace(v)) == 0 || bytes.TrimSpace(v)[0] != '{' {
			// Not a call: text that looks like one.
			addText(rest[:loc[1]])
			rest = rest[loc[1]:]
			continue
		}
		addText(rest[:loc[0]])
		pid := mid + "/" + strconv.Itoa(len(parts))
		parts = append(parts, loom.Part{ID: pid, Type: loom.PartTool, CallID: cmp.Or(rest[loc[4]:loc[5]], pid), Name: rest[loc[2]:loc[3]], Status: loom.ToolRunning, Input: importer.CompactJSON(v)})
		rest = args[dec.InputOffset():]
	}
	addText(rest)
	return parts
}

func (m *metadata) loom() loom.Usage {
	u := m.usage
	if m.Usage != nil {
		u = *m.Usage
	}
	out := loom.Usage{
		InputTokens:      importer.Tokens(u.InputTokens),
		OutputTokens:     importer.Tokens(u.OutputTokens),
		CacheReadTokens:  importer.Tokens(u.CacheReadTokens),
		CacheWriteTokens: importer.Tokens(u.CacheCreationTokens),
		ReasoningTokens:  importer.Tokens(u.ReasoningTokens),
	}
	if m.Cost > 0 && m.Cost < 1e9 {
		out.CostUSD = m.Cost
	}
	if out != (loom.Usage{}) {
		out.APICalls = 1
	}
	return out
}
