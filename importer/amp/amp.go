package amp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads the threads of Amp, Sourcegraph's coding agent (its CLI
// and editor extensions): one JSON file per thread. It implements
// importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Amp's name in loom: the surface of its imported sessions and
// the TOOL of `loom session import --from TOOL`.
const Tool = "amp"

// maxThread bounds one thread's file.
const maxThread = 256 << 20

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": each reply's usage names its model.
func (Format) Provider() string { return "" }

// Roots is Amp's threads directory: $XDG_DATA_HOME/amp/threads, else
// ~/.local/share/amp/threads (on every system, as Amp keeps it).
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, "XDG_DATA_HOME", ".local", "share"), "amp", "threads")
}

// Bundles lists the thread files (T-<id>.json) in root, one bundle each;
// root may be one thread's file.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if bs, dir, err := importer.FileRoot(Tool, root); !dir {
		return bs, err
	}
	return importer.FilesIn(ctx, Tool, root, func(n string) bool { return strings.HasPrefix(n, "T-") && strings.HasSuffix(n, ".json") })
}

// thread is the part of Amp's thread file the reader uses.
type thread struct {
	V        int             `json:"v"`
	ID       string          `json:"id"`
	Created  float64         `json:"created"`
	Title    string          `json:"title"`
	Messages []threadMessage `json:"messages"`
	Env      struct {
		Initial struct {
			Trees []struct {
				URI string `json:"uri"`
			} `json:"trees"`
		} `json:"initial"`
	} `json:"env"`
}

type threadMessage struct {
	Role      string            `json:"role"`
	MessageID *int64            `json:"messageId"`
	Content   []json.RawMessage `json:"content"`
	State     struct {
		Type       string `json:"type"`
		StopReason string `json:"stopReason"`
	} `json:"state"`
	Usage *struct {
		Model      string `json:"model"`
		Input      int64  `json:"inputTokens"`
		Output     int64  `json:"outputTokens"`
		CacheWrite int64  `json:"cacheCreationInputTokens"`
		CacheRead  int64  `json:"cacheReadInputTokens"`
		Timestamp  string `json:"timestamp"`
	} `json:"usage"`
	Meta struct {
		SentAt float64 `json:"sentAt"`
	} `json:"meta"`
}

type block struct {
	importer.APIBlock
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Input      json.RawMessage `json:"input"`
	ToolUseID  string          `json:"toolUseID"`
	APIToolUse string          `json:"tool_use_id"`
	Content    json.RawMessage `json:"content"`
	IsError    bool            `json:"is_error"`
	Run        *struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
		Error  struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"run"`
}

// Read reads one thread file.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path := b.Name()
	if path == "" {
		return nil, fmt.Errorf("amp: empty bundle")
	}
	f, fi, err := importer.Open(path, maxThread)
	if err != nil {
		return nil, fmt.Errorf("amp: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxThread+1))
	if err != nil {
		return nil, fmt.Errorf("amp: %s: %w", path, err)
	}
	if len(data) > maxThread {
		return nil, fmt.Errorf("amp: %s: larger than %d MiB", path, maxThread>>20)
	}
	return read(path, data, fi.ModTime().UTC())
}

func read(path string, data []byte, mtime time.Time) (*importer.Result, error) {
	var t thread
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("amp: %s is not a thread of Amp's: %s", path, importer.Excerpt(err.Error()))
	}
	id := cmp.Or(t.ID, strings.TrimSuffix(filepath.Base(path), ".json"))
	if id == "" || strings.ContainsAny(id, "\r\n") {
		return nil, fmt.Errorf("amp: %s: a thread without a usable id", path)
	}
	res := &importer.Result{}
	res.CheckUTF8(path, 0, data)
	created := importer.UnixTime(t.Created)
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Title: strings.TrimSpace(t.Title), Path: path, CreatedAt: created, UpdatedAt: mtime}
	for _, tr := range t.Env.Initial.Trees {
		if dir, ok := strings.CutPrefix(tr.URI, "file://"); ok && dir != "" {
			s.Cwd = dir
			break
		}
	}
	c := &conv{res: res, path: path, calls: map[string]callRef{}}
	last := created
	seen := map[string]bool{}
	for i, m := range t.Messages {
		mid := id + ":" + strconv.Itoa(i)
		if m.MessageID != nil {
			mid = id + ":" + strconv.FormatInt(*m.MessageID, 10)
		}
		if seen[mid] {
			res.Skip("duplicate-message")
			continue
		}
		seen[mid] = true
		at := importer.UnixTime(m.Meta.SentAt)
		if m.Usage != nil && at.IsZero() {
			if ts, err := time.Parse(time.RFC3339Nano, m.Usage.Timestamp); err == nil {
				at = ts.UTC()
			}
		}
		if at.IsZero() {
			at = last
		}
		last = at
		c.message(mid, m, at)
	}
	s.Messages = c.msgs
	res.Keep(s, "thread")
	return res, nil
}

// conv builds a thread's messages: a tool's result, in the user message
// after the call, completes the call's part.
type conv struct {
	res   *importer.Result
	path  string
	msgs  []*loom.Message
	calls map[string]callRef
}

type callRef struct{ msg, part int }

func (c *conv) message(id string, tm threadMessage, at time.Time) {
	m := &loom.Message{ID: id, CreatedAt: at, CompletedAt: &at}
	switch tm.Role {
	case "user":
		m.Role = loom.RoleUser
	case "assistant":
		m.Role = loom.RoleAssistant
		if u := tm.Usage; u != nil {
			m.Model = u.Model
			m.Usage = loom.Usage{InputTokens: max(u.Input, 0), OutputTokens: max(u.Output, 0), CacheWriteTokens: max(u.CacheWrite, 0), CacheReadTokens: max(u.CacheRead, 0)}
			if strings.HasPrefix(u.Model, "gpt-") {
				// Amp counts an OpenAI model's uncached prompt as cache
				// creation, which OpenAI does not bill.
				m.Usage.InputTokens += m.Usage.CacheWriteTokens
				m.Usage.CacheWriteTokens = 0
			}
		}
	case "info":
		c.res.Skip("info")
		return
	default:
		c.res.Skip("unknown:" + importer.TypeName(tm.Role))
		return
	}
	for i, raw := range tm.Content {
		var b block
		if json.Unmarshal(raw, &b) != nil {
			c.res.Problemf(c.path, 0, "message "+importer.Clip(id, 80)+": block "+strconv.Itoa(i)+" is not an object")
			continue
		}
		c.block(m, id+"/"+strconv.Itoa(i), b, at)
	}
	if len(m.Parts) == 0 {
		if !m.Usage.IsZero() {
			c.res.Skip("usage-without-content")
		}
		return
	}
	c.msgs = append(c.msgs, m)
}

func (c *conv) block(m *loom.Message, id string, b block, at time.Time) {
	if b.AddContent(c.res, m, id) {
		return
	}
	switch b.Type {
	case "tool_use":
		if m.Role != loom.RoleAssistant {
			c.res.Skip("tool-use-in-" + m.Role)
			return
		}
		p := loom.Part{ID: id, Type: loom.PartTool, CallID: cmp.Or(b.ID, id), Name: cmp.Or(b.Name, "unknown"), Status: loom.ToolRunning, Input: json.RawMessage(`{}`), StartedAt: &at}
		if in := importer.CompactJSON(b.Input); in != nil && in[0] == '{' {
			p.Input = in
		}
		c.calls[p.CallID] = callRef{msg: len(c.msgs), part: len(m.Parts)}
		m.Parts = append(m.Parts, p)
	case "tool_result":
		c.result(b, at)
	case "":
		c.res.Problemf(c.path, 0, "a block without a type")
	default:
		c.res.Skip("unknown:" + importer.TypeName(b.Type))
	}
}

// result completes a call: Amp's form ({toolUseID, run: {status,
// result, error}}) or the Messages API's ({tool_use_id, content,
// is_error}).
func (c *conv) result(b block, at time.Time) {
	ref, ok := c.calls[cmp.Or(b.ToolUseID, b.APIToolUse)]
	if !ok || ref.msg >= len(c.msgs) {
		c.res.Skip("orphan-tool-result")
		return
	}
	p := &c.msgs[ref.msg].Parts[ref.part]
	p.EndedAt = &at
	var out, failure string
	if r := b.Run; r != nil {
		out = resultText(r.Result)
		switch r.Status {
		case "error":
			failure = cmp.Or(r.Error.Message, out, "error")
		case "cancelled", "rejected-by-user":
			failure = r.Status
		case "done", "":
			var s struct {
				Success *bool `json:"success"`
			}
			if json.Unmarshal(r.Result, &s) == nil && s.Success != nil && !*s.Success {
				failure = cmp.Or(out, "failed")
			}
		default:
			// In progress, or waiting for the user's approval.
			return
		}
		if c := importer.CompactJSON(r.Result); c != nil && c[0] == '{' {
			p.Metadata = c
		}
	} else {
		out = resultText(b.Content)
		if b.IsError {
			failure = cmp.Or(out, "error")
		}
	}
	o, _ := json.Marshal(out)
	p.Output, p.Status = o, loom.ToolCompleted
	if failure != "" {
		p.Status, p.Error = loom.ToolError, failure
	}
}

// resultText is a tool's result as text: a string, the output, content
// or diff of an object, lines of a list of strings, else its JSON.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range []string{"output", "content", "diff"} {
			if v, ok := obj[k]; ok {
				return resultText(v)
			}
		}
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var lines []string
		for _, item := range list {
			var b block
			if json.Unmarshal(item, &b) == nil && b.Type == "text" {
				lines = append(lines, b.Text)
				continue
			}
			if json.Unmarshal(item, &s) != nil {
				return string(importer.CompactJSON(raw))
			}
			lines = append(lines, s)
		}
		return strings.Join(lines, "\n")
	}
	return string(importer.CompactJSON(raw))
}
