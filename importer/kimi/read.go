package kimi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// reading is one session being read: what its wire log said, then its
// context.
type reading struct {
	res      *importer.Result
	name, id string
	cwd      string
	modified time.Time
	// From the wire log: when each turn began, and each model call's
	// time and usage, in order.
	turns []time.Time
	steps []step
	// What the context made.
	msgs  []*loom.Message
	calls map[string]*loom.Part
}

type step struct {
	at    time.Time
	usage loom.Usage
}

// wireRecord is one line of wire.jsonl: a time in seconds and a wire
// message.
type wireRecord struct {
	Timestamp float64 `json:"timestamp"`
	Message   *struct {
		Type    string `json:"type"`
		Payload struct {
			TokenUsage *struct {
				InputOther         float64 `json:"input_other"`
				Output             float64 `json:"output"`
				InputCacheRead     float64 `json:"input_cache_read"`
				InputCacheCreation float64 `json:"input_cache_creation"`
			} `json:"token_usage"`
		} `json:"payload"`
	} `json:"message"`
}

// wire reads the wire log for what the context does not hold: times and
// usage.
func (s *reading) wire(ctx context.Context, name string, r io.Reader) error {
	return importer.Lines(ctx, r, func(n int, line []byte) error {
		var rec wireRecord
		if !s.res.DecodeLine(name, n, line, &rec) || rec.Message == nil {
			return nil // the metadata line, a blank line, or a problem
		}
		at := seconds(rec.Timestamp)
		switch rec.Message.Type {
		case "TurnBegin":
			s.turns = append(s.turns, at)
		case "StatusUpdate":
			if u := rec.Message.Payload.TokenUsage; u != nil {
				s.steps = append(s.steps, step{at: at, usage: loom.Usage{
					InputTokens: importer.Tokens(u.InputOther), OutputTokens: importer.Tokens(u.Output),
					CacheReadTokens: importer.Tokens(u.InputCacheRead), CacheWriteTokens: importer.Tokens(u.InputCacheCreation),
					APICalls: 1,
				}})
			}
		}
		return nil
	}, s.res.TooLong(name))
}

// contextLine is one line of context.jsonl: a message in OpenAI's chat
// form, or one of Kimi's own records (_checkpoint, _usage).
type contextLine struct {
	Role       string                  `json:"role"`
	Content    json.RawMessage         `json:"content"`
	ToolCalls  []importer.ChatToolCall `json:"tool_calls"`
	ToolCallID string                  `json:"tool_call_id"`
}

func (s *reading) context(ctx context.Context, r io.Reader) error {
	s.calls = map[string]*loom.Part{}
	users, replies := 0, 0
	var last time.Time
	return importer.Lines(ctx, r, func(n int, line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var l contextLine
		if err := json.Unmarshal(line, &l); err != nil || l.Role == "" {
			s.res.Problemf(s.name, n, "not a message")
			return nil
		}
		s.res.CheckUTF8(s.name, n, line)
		mid := strconv.Itoa(n)
		msg := &loom.Message{ID: mid}
		switch l.Role {
		case "user":
			if checkpointMark().MatchString(strings.TrimSpace(plain(l.Content))) {
				// Kimi's own mark of a checkpoint, sent as a user
				// message: no prompt, nor a turn.
				s.res.Skip("checkpoint-message")
				return nil
			}
			msg.Role = loom.RoleUser
			if users < len(s.turns) {
				last = cmp.Or(s.turns[users], last)
			}
			users++
			msg.Parts = content(mid, l.Content)
		case "assistant":
			msg.Role, msg.Provider = loom.RoleAssistant, provider
			if replies < len(s.steps) {
				last = cmp.Or(s.steps[replies].at, last)
				msg.Usage = s.steps[replies].usage
			}
			replies++
			msg.Parts = content(mid, l.Content)
			for j, c := range l.ToolCalls {
				pid := mid + "/call/" + strconv.Itoa(j)
				in := importer.CompactJSON(json.RawMessage(c.Function.Arguments))
				if in == nil || in[0] != '{' {
					in, _ = json.Marshal(map[string]string{"arguments": c.Function.Arguments})
				}
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartTool, CallID: cmp.Or(c.ID, pid), Name: cmp.Or(strings.TrimSpace(c.Function.Name), "unknown"), Status: loom.ToolRunning, Input: in})
			}
		case "tool":
			p := s.calls[l.ToolCallID]
			if p == nil {
				s.res.Skip("orphan-tool-result")
				return nil
			}
			text := plain(l.Content)
			if strings.HasPrefix(text, "<system>ERROR") {
				p.Status, p.Error = loom.ToolError, text
			} else {
				out, _ := json.Marshal(text)
				p.Status, p.Output = loom.ToolCompleted, out
			}
			s.res.Skip("tool-result")
			return nil
		case "system":
			msg.Role = loom.RoleSystem
			msg.Parts = content(mid, l.Content)
		case "_checkpoint", "_usage":
			// Kimi's marks of where it can rewind to and how full the
			// context is.
			s.res.Skip(l.Role)
			return nil
		default:
			s.res.Skip("unknown:" + importer.TypeName(l.Role))
			return nil
		}
		at := cmp.Or(last, s.modified)
		msg.CreatedAt, msg.CompletedAt = at, &at
		if len(msg.Parts) == 0 {
			s.res.Skip("empty-" + msg.Role + "-message")
			return nil
		}
		for i := range msg.Parts {
			if p := &msg.Parts[i]; p.Type == loom.PartTool {
				s.calls[p.CallID] = p
			}
		}
		s.msgs = append(s.msgs, msg)
		return nil
	}, s.res.TooLong(s.name))
}

func (s *reading) result() *importer.Result {
	if len(s.msgs) == 0 {
		s.res.Skip("empty-session")
		return s.res
	}
	out := &importer.Session{SourceID: s.id, Kind: loom.KindMain, Path: s.name, Cwd: s.cwd, Provider: provider, Messages: s.msgs}
	out.CreatedAt, out.UpdatedAt = s.msgs[0].CreatedAt, s.msgs[len(s.msgs)-1].CreatedAt
	s.res.Sessions = []*importer.Session{out}
	return s.res
}

// content is a message's content: a string, or a list of parts (text,
// think, image_url).
func content(mid string, raw json.RawMessage) []loom.Part {
	raw = bytes.TrimSpace(raw)
	var str string
	if json.Unmarshal(raw, &str) == nil {
		if strings.TrimSpace(str) == "" {
			return nil
		}
		return []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: str}}
	}
	var items []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Think    string `json:"think"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []loom.Part
	for i, it := range items {
		pid := mid + "/" + strconv.Itoa(i)
		switch {
		case it.Type == "text" && strings.TrimSpace(it.Text) != "":
			out = append(out, loom.Part{ID: pid, Type: loom.PartText, Text: it.Text})
		case it.Type == "think" && strings.TrimSpace(it.Think) != "":
			out = append(out, loom.Part{ID: pid, Type: loom.PartReasoning, Text: it.Think})
		case it.Type == "image_url" && it.ImageURL.URL != "":
			out = append(out, loom.Part{ID: pid, Type: loom.PartFile, URL: it.ImageURL.URL})
		}
	}
	return out
}

// plain is a tool result's text.
func plain(raw json.RawMessage) string {
	var parts []string
	for _, p := range content("", raw) {
		if p.Type == loom.PartText {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// seconds is a time in seconds since the epoch, as Python's time.time()
// writes it; the zero time for none or nonsense.
func seconds(f float64) time.Time {
	if !(f > 0 && f < 95_617_584_000) {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// checkpointMark is the user message Kimi CLI writes at a checkpoint
// (Context.checkpoint, with its okabe agent).
var checkpointMark = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<system>CHECKPOINT \d+</system>$`) })
