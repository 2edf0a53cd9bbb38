package cline

import (
	"encoding/json"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

// A session is two files in sessions/<id>/: <id>.json, its record (the
// row Cline also keeps in db/sessions.db: id, working directory,
// provider, model, parent, title), and <id>.messages.json, its
// messages in Anthropic's form (a role and content blocks: text,
// thinking, tool_use, tool_result), each reply with its model and token
// metrics. Only the fields the reader uses are declared.

type record struct {
	SessionID       string `json:"session_id"`
	Cwd             string `json:"cwd"`
	Provider        string `json:"provider"`
	Model           string `json:"model"`
	ParentSessionID string `json:"parent_session_id"`
	IsSubagent      bool   `json:"is_subagent"`
	StartedAt       string `json:"started_at"`
	Metadata        struct {
		Title  string `json:"title"`
		Origin struct {
			Version string `json:"version"`
		} `json:"sessionHistoryOrigin"`
		// LoomHandoff records the loom session a handed-off session
		// continues (handoff.OriginField).
		LoomHandoff *handoff.Origin `json:"loomHandoff"`
	} `json:"metadata"`
}

type messagesFile struct {
	SessionID string `json:"sessionId"`
	Origin    struct {
		Version string `json:"version"`
	} `json:"origin"`
	Messages []json.RawMessage `json:"messages"`
}

type message struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	TS      float64         `json:"ts"`
	// Metadata marks what cline shows but never sends the model (an
	// error it met: displayOnly, displayRole "error").
	Metadata struct {
		DisplayOnly bool   `json:"displayOnly"`
		DisplayRole string `json:"displayRole"`
	} `json:"metadata"`
	ModelInfo struct {
		ID       string `json:"id"`
		Provider string `json:"provider"`
	} `json:"modelInfo"`
	Metrics *struct {
		Input      float64 `json:"inputTokens"`
		Output     float64 `json:"outputTokens"`
		CacheRead  float64 `json:"cacheReadTokens"`
		CacheWrite float64 `json:"cacheWriteTokens"`
		Cost       float64 `json:"cost"`
	} `json:"metrics"`
}

// userInput is how Cline wraps what the user typed before the model
// sees it: <user_input mode="act">…</user_input>.
var userInput = regexp.MustCompile(`(?s)^\s*<user_input(?: [^>]*)?>(.*)</user_input>\s*$`)

type parser struct {
	path  string
	res   *importer.Result
	calls importer.ToolCalls
	ids   map[string]bool
}

// parse reads a session's messages file (data, at path) and its record
// (or nil); fi is the messages file's, whose time a message without one
// takes.
func parse(path string, data, rec []byte, fi fs.FileInfo) (*importer.Result, error) {
	p := &parser{path: path, res: &importer.Result{}, calls: importer.ToolCalls{}, ids: map[string]bool{}}
	var mf messagesFile
	if err := json.Unmarshal(data, &mf); err != nil {
		p.res.Problemf(path, 0, "not a Cline messages file: "+importer.Excerpt(err.Error()))
		return p.res, nil
	}
	id := strings.TrimSuffix(fileBase(path), messagesSuffix)
	s := &importer.Session{SourceID: importer.Clip(id, 128), Path: path, Version: importer.Clip(mf.Origin.Version, 64)}
	if len(rec) > 0 {
		var r record
		if err := json.Unmarshal(rec, &r); err != nil {
			p.res.Problemf(strings.TrimSuffix(path, messagesSuffix)+".json", 0, "not a Cline session record: "+importer.Excerpt(err.Error()))
		} else {
			s.Title, s.Cwd, s.Model, s.Provider = r.Metadata.Title, r.Cwd, r.Model, r.Provider
			s.Origin = r.Metadata.LoomHandoff
			if r.ParentSessionID != "" && r.ParentSessionID != id {
				s.Kind, s.ParentSourceID = loom.KindSubagent, importer.Clip(r.ParentSessionID, 128)
			}
			if s.Version == "" {
				s.Version = importer.Clip(r.Metadata.Origin.Version, 64)
			}
		}
	}
	for i, raw := range mf.Messages {
		if m := p.message(i, raw); m != nil {
			s.Messages = append(s.Messages, m)
		}
	}
	if len(s.Messages) == 0 {
		p.res.Skip("empty-session")
		return p.res, nil
	}
	// A message without a time of its own takes the next one's.
	next := fi.ModTime().UTC()
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.CreatedAt.IsZero() {
			m.CreatedAt = next
		} else {
			next = m.CreatedAt
		}
		m.CompletedAt = &m.CreatedAt
	}
	s.CreatedAt, s.UpdatedAt = s.Messages[0].CreatedAt, s.Messages[len(s.Messages)-1].CreatedAt
	p.res.Sessions = []*importer.Session{s}
	return p.res, nil
}

func (p *parser) message(i int, raw json.RawMessage) *loom.Message {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		p.res.Problemf(p.path, 0, "message "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
		return nil
	}
	blocks, ok := importer.ContentBlocks(m.Content)
	if !ok {
		p.res.Problemf(p.path, 0, "message "+strconv.Itoa(i)+": content is neither text nor blocks")
		return nil
	}
	id := importer.Clip(strings.TrimSpace(m.ID), 128)
	if id == "" || p.ids[id] {
		id = "message-" + strconv.Itoa(i)
	}
	p.ids[id] = true
	msg := &loom.Message{ID: id, CreatedAt: millis(m.TS)}
	switch {
	case m.Metadata.DisplayOnly:
		// Shown to the user, never sent to the model: a system message.
		msg.Role = loom.RoleSystem
	case m.Role == "user":
		msg.Role = loom.RoleUser
	case m.Role == "assistant":
		msg.Role = loom.RoleAssistant
		msg.Model, msg.Provider = importer.Clip(m.ModelInfo.ID, 256), importer.Clip(m.ModelInfo.Provider, 64)
		if u := m.Metrics; u != nil {
			// Cline's input counts the cached tokens (as the OpenAI
			// Chat Completions API does); loom's does not.
			msg.Usage = loom.Usage{InputTokens: max(0, importer.Tokens(u.Input)-importer.Tokens(u.CacheRead)), OutputTokens: importer.Tokens(u.Output),
				CacheReadTokens: importer.Tokens(u.CacheRead), CacheWriteTokens: importer.Tokens(u.CacheWrite), CostUSD: importer.Dollars(u.Cost)}
		}
	default:
		p.res.Skip("role:" + importer.TypeName(m.Role))
		return nil
	}
	p.calls.AddBlocks(p.res, msg, blocks, msg.CreatedAt, func(reason string) {
		p.res.Problemf(p.path, 0, "message "+strconv.Itoa(i)+": "+reason)
	})
	if msg.Role == loom.RoleUser {
		for k := range msg.Parts {
			if sub := userInput.FindStringSubmatch(msg.Parts[k].Text); msg.Parts[k].Type == loom.PartText && sub != nil {
				msg.Parts[k].Text = sub[1]
			}
		}
	}
	if len(msg.Parts) == 0 {
		if msg.Role != loom.RoleUser {
			p.res.Skip("empty-message")
		}
		// A user message of tool results only: they went to their calls.
		return nil
	}
	return msg
}

func fileBase(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}

// millis is a time in milliseconds since the epoch; the zero time for
// anything out of range.
func millis(f float64) time.Time {
	if !(f > 0 && f < 95_617_584_000_000) {
		return time.Time{}
	}
	return time.UnixMilli(int64(f)).UTC()
}
