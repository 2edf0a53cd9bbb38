package droid

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
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
	// A compaction_state line's summary of the history before it, and
	// what made it: "llm_summary" (the default) is the model's; others
	// ("provider_switch_serialization") are droid's own rewriting of the
	// history for another provider, no model call.
	SummaryText string `json:"summaryText"`
	SummaryKind string `json:"summaryKind"`
	// LoomHandoff records, in the session_start line, the loom session a
	// handed-off session (or a fork droid made of one) continues
	// (handoff.OriginField).
	LoomHandoff *handoff.Origin `json:"loomHandoff"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	ModelID string          `json:"modelId"`
}

// contextPrefix starts the id of a message droid adds before a prompt
// for the model's sake (the tools available, reminders): not the user's.
const contextPrefix = "context-"

type reader struct {
	path  string
	res   *importer.Result
	s     *importer.Session
	ids   map[string]bool
	calls importer.ToolCalls
}

// read reads one session file from r; mod is when it was last written,
// the time of a message whose line has none (and of any before it).
func read(ctx context.Context, path string, r io.Reader, mod time.Time) (*importer.Result, error) {
	rd := &reader{path: path, res: &importer.Result{}, ids: map[string]bool{}, calls: importer.ToolCalls{}}
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
	rd.res.CheckUTF8(rd.path, n, b)
	if rd.s == nil && l.Type != "session_start" && l.Type != "" && rd.res.LostBefore(rd.path, n) {
		// The session_start line could not be read: the lines after it
		// are the session's still, named by the file (<id>.jsonl).
		rd.s = &importer.Session{SourceID: importer.Clip(strings.TrimSuffix(filepath.Base(rd.path), ".jsonl"), 128), Path: rd.path}
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
		rd.s = &importer.Session{SourceID: importer.Clip(id, 128), Title: l.Title, Cwd: l.Cwd, Path: rd.path, Origin: l.LoomHandoff}
		if l.Title == "New Session" {
			// droid's placeholder until the first prompt names it.
			rd.s.Title = ""
		}
	case rd.s == nil:
		rd.res.Problemf(rd.path, n, "line before the session_start line")
	case l.Type == "message":
		rd.message(n, &l)
	case l.Type == "compaction_state":
		rd.compaction(n, &l)
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
	blocks, ok := importer.ContentBlocks(m.Content)
	if !ok {
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
	rd.calls.AddBlocks(rd.res, msg, blocks, at, rd.res.LineProblem(rd.path, n))
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

// compaction keeps the summary a compaction_state line holds, the
// model's summary of the history before it, as a summary message where
// the line stands.
func (rd *reader) compaction(n int, l *line) {
	if kind := l.SummaryKind; kind != "" && kind != "llm_summary" {
		rd.res.Skip("compaction_state:" + importer.TypeName(kind))
		return
	}
	text := strings.TrimSpace(l.SummaryText)
	if text == "" {
		rd.res.Skip("compaction_state:empty")
		return
	}
	id := importer.Clip(strings.TrimSpace(l.ID), 128)
	if id == "" || rd.ids[id] {
		id = "line-" + strconv.Itoa(n)
	}
	rd.ids[id] = true
	rd.s.Messages = append(rd.s.Messages, &loom.Message{ID: id, Role: loom.RoleSummary, CreatedAt: parseTime(l.Timestamp),
		Parts: []loom.Part{{ID: id + "/0", Type: loom.PartText, Text: text}}, Usage: loom.Usage{Compactions: 1}})
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}
	}
	return t.UTC()
}
