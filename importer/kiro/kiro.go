package kiro

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads the sessions of Kiro's CLI (kiro-cli, AWS's agent). It
// implements importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Kiro's name in loom: the surface of its imported sessions and
// the TOOL of `loom session import --from TOOL`.
const Tool = "kiro"

// homeEnv is the variable that names Kiro's .kiro directory.
const homeEnv = "KIRO_HOME"

// maxMeta bounds a session's metadata file.
const maxMeta = 64 << 20

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Kiro runs the models of its own service.
func (Format) Provider() string { return "" }

// Roots is Kiro's sessions directory: $KIRO_HOME/sessions, else
// ~/.kiro/sessions.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, homeEnv, ".kiro"), "sessions")
}

// Bundles finds Kiro's session logs under root: <id>.jsonl (in cli/),
// with its <id>.json metadata beside it, and the later layout's
// <workspace>/<session>/messages.jsonl, each one bundle.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	bs, err := importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".jsonl")
	})
	for i, b := range bs {
		if meta := metaPath(b.Name()); importer.RegularFile(meta) == nil {
			bs[i].Files = append(bs[i].Files, meta)
		}
	}
	return bs, err
}

// metaPath is the metadata file of a session log: <id>.json beside
// <id>.jsonl, session.json beside messages.jsonl.
func metaPath(log string) string {
	if filepath.Base(log) == "messages.jsonl" {
		return filepath.Join(filepath.Dir(log), "session.json")
	}
	return strings.TrimSuffix(log, ".jsonl") + ".json"
}

// meta is the union of both layouts' metadata fields.
type meta struct {
	SessionID      string   `json:"session_id"`
	ID             string   `json:"id"`
	Cwd            string   `json:"cwd"`
	Title          string   `json:"title"`
	CreatedAt      string   `json:"created_at"`
	UpdatedAt      string   `json:"updated_at"`
	CreatedAtCamel string   `json:"createdAt"`
	LastModifiedAt string   `json:"lastModifiedAt"`
	WorkspacePaths []string `json:"workspacePaths"`
	SessionState   struct {
		ModelID string `json:"model_id"`
	} `json:"session_state"`
}

// Read reads one session log.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path := b.Name()
	if path == "" {
		return nil, fmt.Errorf("kiro: empty bundle")
	}
	res := &importer.Result{}
	var md meta
	if mp := metaPath(path); importer.RegularFile(mp) == nil {
		// The metadata beside the log: bytes that are not UTF-8 in a
		// text of it are one line, as in the log.
		if data, err := importer.ReadSmall(mp, maxMeta); err == nil && json.Unmarshal(data, &md) == nil {
			res.CheckUTF8(mp, 0, data)
		}
	}
	f, fi, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("kiro: %w", err)
	}
	defer f.Close()
	id := cmp.Or(md.SessionID, md.ID, strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	if filepath.Base(path) == "messages.jsonl" {
		id = cmp.Or(md.SessionID, md.ID, filepath.Base(filepath.Dir(path)))
	}
	if strings.ContainsAny(id, "\r\n") {
		return nil, fmt.Errorf("kiro: %s: not a usable session id", path)
	}
	mtime := fi.ModTime().UTC()
	s := &importer.Session{
		SourceID: id, Kind: loom.KindMain, Title: strings.TrimSpace(md.Title), Path: path,
		Cwd:       md.Cwd,
		CreatedAt: importer.RFC3339Time(cmp.Or(md.CreatedAt, md.CreatedAtCamel)),
		UpdatedAt: cmp.Or(importer.RFC3339Time(cmp.Or(md.UpdatedAt, md.LastModifiedAt)), mtime),
	}
	if s.Cwd == "" && len(md.WorkspacePaths) > 0 {
		s.Cwd = md.WorkspacePaths[0]
	}
	c := &conv{res: res, path: path, session: id, at: cmp.Or(s.CreatedAt, mtime), model: md.SessionState.ModelID, calls: map[string]callRef{}}
	err = importer.Lines(ctx, f, func(n int, line []byte) error {
		c.line(n, line)
		return nil
	}, res.TooLong(path))
	if err != nil {
		return nil, fmt.Errorf("kiro: %s: %w", path, err)
	}
	s.Messages = c.msgs
	res.Keep(s, "session")
	return res, nil
}

// A line of the first layout is {"kind": "Prompt" | "AssistantMessage"
// | "ToolResults", "data": {"message_id", "content": [{"kind", "data"}],
// "meta": {"timestamp"}}}; of the later one {"timestamp", "payload":
// {"type": "user" | "assistant" | "tool_call" | "tool_result", …}}.
type line struct {
	Kind string `json:"kind"`
	Data struct {
		MessageID string `json:"message_id"`
		Content   []item `json:"content"`
		Meta      struct {
			Timestamp float64 `json:"timestamp"`
		} `json:"meta"`
	} `json:"data"`
	Timestamp json.RawMessage `json:"timestamp"`
	Payload   *struct {
		Type       string          `json:"type"`
		Content    json.RawMessage `json:"content"`
		ToolName   string          `json:"toolName"`
		ToolCallID string          `json:"toolCallId"`
		Args       json.RawMessage `json:"args"`
		Status     string          `json:"status"`
		IsError    bool            `json:"isError"`
		ModelID    string          `json:"reasoningModelId"`
	} `json:"payload"`
}

// item is a content item: {"kind": "text", "data": "…"}, {"kind":
// "toolUse", "data": {toolUseId, name, input}}, {"kind": "toolResult",
// "data": {toolUseId, content, status}}, {"kind": "json", "data": …}.
type item struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

type toolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Content   []item          `json:"content"`
	Status    string          `json:"status"`
}

type conv struct {
	res     *importer.Result
	path    string
	session string
	at      time.Time
	model   string
	msgs    []*loom.Message
	calls   map[string]callRef
}

type callRef struct{ msg, part int }

func (c *conv) message(n int, id, role string) *loom.Message {
	if id == "" || strings.ContainsAny(id, "\r\n/") {
		id = c.session + ":" + strconv.Itoa(n)
	}
	at := c.at
	m := &loom.Message{ID: id, Role: role, CreatedAt: at, CompletedAt: &at}
	if role == loom.RoleAssistant {
		m.Model = c.model
	}
	return m
}

func (c *conv) add(m *loom.Message) {
	if len(m.Parts) > 0 {
		c.msgs = append(c.msgs, m)
	}
}

func (c *conv) line(n int, raw []byte) {
	var l line
	if !c.res.DecodeLine(c.path, n, raw, &l) {
		return
	}
	if t := timestamp(l.Timestamp, l.Data.Meta.Timestamp); !t.IsZero() {
		c.at = t
	}
	if l.Payload != nil {
		c.payload(n, l)
		return
	}
	switch l.Kind {
	case "Prompt":
		m := c.message(n, l.Data.MessageID, loom.RoleUser)
		c.items(m, l.Data.Content)
		c.add(m)
	case "AssistantMessage":
		m := c.message(n, l.Data.MessageID, loom.RoleAssistant)
		c.items(m, l.Data.Content)
		c.add(m)
	case "ToolResults":
		for _, it := range l.Data.Content {
			if it.Kind != "toolResult" {
				c.res.Skip("unknown:" + importer.TypeName(it.Kind))
				continue
			}
			var tr toolUse
			if json.Unmarshal(it.Data, &tr) != nil {
				c.res.Problemf(c.path, n, "a tool result Kiro did not write")
				continue
			}
			c.result(tr.ToolUseID, itemsText(tr.Content), tr.Status == "error")
		}
	case "":
		c.res.Problemf(c.path, n, "a line without a kind")
	default:
		c.res.Skip("unknown:" + importer.TypeName(l.Kind))
	}
}

// items maps a message's content items.
func (c *conv) items(m *loom.Message, items []item) {
	for _, it := range items {
		id := m.ID + "/" + strconv.Itoa(len(m.Parts))
		switch it.Kind {
		case "text":
			var s string
			if json.Unmarshal(it.Data, &s) == nil && strings.TrimSpace(s) != "" {
				m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartText, Text: s})
			}
		case "toolUse":
			var tu toolUse
			if json.Unmarshal(it.Data, &tu) != nil || m.Role != loom.RoleAssistant {
				c.res.Skip("bad-tool-use")
				continue
			}
			c.call(m, id, tu.ToolUseID, tu.Name, tu.Input)
		default:
			c.res.Skip("unknown:" + importer.TypeName(it.Kind))
		}
	}
}

func (c *conv) call(m *loom.Message, id, callID, name string, input json.RawMessage) {
	p := loom.Part{ID: id, Type: loom.PartTool, CallID: cmp.Or(callID, id), Name: cmp.Or(name, "unknown"), Status: loom.ToolRunning, Input: json.RawMessage(`{}`)}
	if in := importer.CompactJSON(input); in != nil && in[0] == '{' {
		p.Input = in
	}
	c.calls[p.CallID] = callRef{msg: len(c.msgs), part: len(m.Parts)}
	m.Parts = append(m.Parts, p)
}

func (c *conv) result(callID, out string, isError bool) {
	ref, ok := c.calls[callID]
	if !ok || ref.msg >= len(c.msgs) {
		c.res.Skip("orphan-tool-result")
		return
	}
	p := &c.msgs[ref.msg].Parts[ref.part]
	at := c.at
	o, _ := json.Marshal(out)
	p.Output, p.Status, p.EndedAt = o, loom.ToolCompleted, &at
	if isError {
		p.Status, p.Error = loom.ToolError, cmp.Or(out, "error")
	}
}

// payload maps a line of the later layout: a tool call is an assistant
// message of its own, as Kiro writes it.
func (c *conv) payload(n int, l line) {
	p := l.Payload
	switch p.Type {
	case "user", "assistant":
		var text string
		if json.Unmarshal(p.Content, &text) != nil {
			text = itemsOrJSON(p.Content)
		}
		role := loom.RoleUser
		if p.Type == "assistant" {
			role = loom.RoleAssistant
		}
		m := c.message(n, "", role)
		if role == loom.RoleAssistant && p.ModelID != "" {
			m.Model = p.ModelID
		}
		if strings.TrimSpace(text) != "" {
			m.Parts = append(m.Parts, loom.Part{ID: m.ID + "/0", Type: loom.PartText, Text: text})
		}
		c.add(m)
	case "tool_call":
		m := c.message(n, "", loom.RoleAssistant)
		c.call(m, m.ID+"/0", p.ToolCallID, p.ToolName, p.Args)
		c.add(m)
	case "tool_result":
		var text string
		if json.Unmarshal(p.Content, &text) != nil {
			text = itemsOrJSON(p.Content)
		}
		c.result(p.ToolCallID, text, p.IsError || p.Status == "error")
	case "":
		c.res.Problemf(c.path, n, "a record without a type")
	default:
		c.res.Skip("unknown:" + importer.TypeName(p.Type))
	}
}

// itemsText is a result's content items as text.
func itemsText(items []item) string {
	var parts []string
	for _, it := range items {
		var s string
		if it.Kind == "text" && json.Unmarshal(it.Data, &s) == nil {
			parts = append(parts, s)
			continue
		}
		parts = append(parts, string(importer.CompactJSON(it.Data)))
	}
	return strings.Join(parts, "\n")
}

func itemsOrJSON(raw json.RawMessage) string {
	var items []item
	if json.Unmarshal(raw, &items) == nil {
		return itemsText(items)
	}
	return string(importer.CompactJSON(raw))
}

// timestamp is a line's time: RFC 3339, or seconds (milliseconds when
// too large) since the epoch.
func timestamp(raw json.RawMessage, secs float64) time.Time {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return importer.RFC3339Time(s)
	}
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return importer.UnixTime(n)
	}
	return importer.UnixTime(secs)
}
