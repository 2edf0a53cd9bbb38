package droid

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// A session file is JSON lines: a session_start line (id, title, cwd),
// then message lines, each one message of Anthropic's form (a role and
// content blocks: text, thinking, tool_use, tool_result), and
// bookkeeping lines (agent_turn_outcome and the like). Only the fields
// the reader uses are declared.

type line struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Cwd       string          `json:"cwd"`
	Timestamp string          `json:"timestamp"`
	Message   json.RawMessage `json:"message"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	ModelID string          `json:"modelId"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// contextPrefix starts the id of a message droid adds before a prompt
// for the model's sake (the tools available, reminders): not the user's.
const contextPrefix = "context-"

type reader struct {
	path  string
	res   *importer.Result
	s     *importer.Session
	ids   map[string]bool
	calls map[string]*loom.Part // tool calls by id, waiting for a result
}

// read reads one session file from r; mod is when it was last written,
// the time of a message whose line has none (and of any before it).
func read(ctx context.Context, path string, r io.Reader, mod time.Time) (*importer.Result, error) {
	rd := &reader{path: path, res: &importer.Result{}, ids: map[string]bool{}, calls: map[string]*loom.Part{}}
	lines, err := importer.SessionLines(ctx, path, r, rd.res, rd.line)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if rd.s == nil {
			return nil, fmt.Errorf("droid: %s: %w", path, err)
		}
		rd.res.Problemf(path, 0, "reading stopped: "+err.Error())
	}
	if rd.s == nil {
		if lines == 0 {
			return rd.res, nil
		}
		return nil, fmt.Errorf("droid: %s: not a droid session file (no session_start line)", path)
	}
	if len(rd.s.Messages) == 0 {
		rd.res.Skip("empty-session")
		return rd.res, nil
	}
	// A message without a time of its own takes the next one's.
	next := mod.UTC()
	for i := len(rd.s.Messages) - 1; i >= 0; i-- {
		m := rd.s.Messages[i]
		if m.CreatedAt.IsZero() {
			m.CreatedAt = next
		} else {
			next = m.CreatedAt
		}
		// droid records when a message was written, once whole.
		m.CompletedAt = &m.CreatedAt
	}
	rd.s.CreatedAt, rd.s.UpdatedAt = rd.s.Messages[0].CreatedAt, rd.s.Messages[len(rd.s.Messages)-1].CreatedAt
	rd.res.Sessions = []*importer.Session{rd.s}
	return rd.res, nil
}

func (rd *reader) line(n int, b []byte) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		rd.res.Problemf(rd.path, n, "not a session line: "+importer.Excerpt(err.Error()))
		return
	}
	switch {
	case l.Type == "session_start":
		if rd.s != nil {
			rd.res.Skip("session_start:duplicate")
			return
		}
		id := strings.TrimSpace(l.ID)
		if id == "" || strings.ContainsAny(id, "\n\r") {
			rd.res.Problemf(rd.path, n, "session_start without an id")
			return
		}
		rd.s = &importer.Session{SourceID: importer.Clip(id, 128), Title: l.Title, Cwd: l.Cwd, Path: rd.path}
		if l.Title == "New Session" {
			// droid's placeholder until the first prompt names it.
			rd.s.Title = ""
		}
	case rd.s == nil:
		rd.res.Problemf(rd.path, n, "line before the session_start line")
	case l.Type == "message":
		rd.message(n, &l)
	case l.Type == "":
		rd.res.Problemf(rd.path, n, "line without a type")
	default:
		rd.res.Skip(importer.TypeName(l.Type))
	}
}

func (rd *reader) message(n int, l *line) {
	var m message
	if err := json.Unmarshal(l.Message, &m); err != nil {
		rd.res.Problemf(rd.path, n, "message line without a message: "+importer.Excerpt(err.Error()))
		return
	}
	if strings.HasPrefix(l.ID, contextPrefix) {
		rd.res.Skip("context")
		return
	}
	var blocks []block
	if s, ok := text(m.Content); ok {
		blocks = []block{{Type: "text", Text: s}}
	} else if err := json.Unmarshal(m.Content, &blocks); err != nil {
		rd.res.Problemf(rd.path, n, "content is neither text nor blocks")
		return
	}
	id := importer.Clip(strings.TrimSpace(l.ID), 128)
	if id == "" || rd.ids[id] {
		id = "line-" + strconv.Itoa(n)
	}
	rd.ids[id] = true
	at := parseTime(l.Timestamp)
	msg := &loom.Message{ID: id, CreatedAt: at}
	switch m.Role {
	case "user":
		msg.Role = loom.RoleUser
	case "assistant":
		msg.Role, msg.Model = loom.RoleAssistant, importer.Clip(m.ModelID, 256)
		rd.s.Model = msg.Model
	default:
		rd.res.Skip("role:" + importer.TypeName(m.Role))
		return
	}
	for _, b := range blocks {
		pid := id + "/" + strconv.Itoa(len(msg.Parts))
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: b.Text})
			}
		case "thinking":
			if strings.TrimSpace(b.Thinking) == "" {
				rd.res.Skip("empty-reasoning")
				continue
			}
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: b.Thinking})
		case "tool_use":
			if msg.Role != loom.RoleAssistant || b.Name == "" {
				rd.res.Problemf(rd.path, n, "tool_use outside a reply, or without a name")
				continue
			}
			input := b.Input
			if !json.Valid(input) {
				input = nil
			}
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartTool, CallID: importer.Clip(b.ID, 256),
				Name: importer.Clip(b.Name, 256), Status: loom.ToolRunning, Input: input})
		case "tool_result":
			rd.result(n, &b, at)
		default:
			rd.res.Skip("block:" + importer.TypeName(b.Type))
		}
	}
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Type == loom.PartTool && p.CallID != "" {
			rd.calls[p.CallID] = p
		}
	}
	if len(msg.Parts) == 0 {
		if msg.Role == loom.RoleUser {
			// A user message of tool results only: they went to their calls.
			return
		}
		rd.res.Skip("empty-message")
		return
	}
	rd.s.Messages = append(rd.s.Messages, msg)
}

// result completes the tool call a tool_result answers.
func (rd *reader) result(n int, b *block, at time.Time) {
	p := rd.calls[b.ToolUseID]
	if p == nil {
		rd.res.Problemf(rd.path, n, "tool_result for no earlier call: "+importer.Clip(b.ToolUseID, 64))
		return
	}
	delete(rd.calls, b.ToolUseID)
	out, ok := text(b.Content)
	if !ok {
		var blocks []block
		json.Unmarshal(b.Content, &blocks)
		var parts []string
		for _, c := range blocks {
			if c.Type == "text" {
				parts = append(parts, c.Text)
			}
		}
		out = strings.Join(parts, "\n")
	}
	if !at.IsZero() {
		p.EndedAt = &at
	}
	if b.IsError {
		p.Status, p.Error = loom.ToolError, importer.Clip(out, 4000)
		return
	}
	p.Status = loom.ToolCompleted
	p.Output, _ = json.Marshal(out)
}

// text is raw as a JSON string.
func text(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}
	}
	return t.UTC()
}
