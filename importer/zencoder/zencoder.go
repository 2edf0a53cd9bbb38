// Package zencoder reads the sessions of Zencoder's agent (its CLI and
// editor extensions) for loom's importer.
//
// Zencoder keeps one JSONL file per session in ~/.zencoder/sessions.
// The first line is the session's header (id, parentId, creationReason,
// createdAt, updatedAt); each other line a message with its role and
// time: system (text, whose "Working directory:" line names the working
// directory), user (blocks of text, those with a tag other than
// user-input being Zencoder's own context), assistant (text, reasoning
// and tool-call blocks), tool (tool-result blocks, by call id), finish
// and permission.
//
// Each message line is a message under its line number; a user block
// Zencoder tagged is a system message; a tool result completes its call,
// and one that names a session (<session-id>…</session-id>) links that
// sub-agent. A session whose header names a parent it was not continued
// from (creationReason other than a continuation) is a sub-agent of it.
// Zencoder writes no usage in the file; finish and permission lines are
// counted as skipped.
//
// Learnt from agentsview's reader of it (wesm/agentsview at
// a5de5daca0005d2794f6fe8e0412795cb2873e4b, internal/parser/zencoder.go);
// the fixtures in testdata are built to that format.
package zencoder

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Zencoder's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Zencoder's name in loom.
const Tool = "zencoder"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Zencoder routes to several providers.
func (Format) Provider() string { return "" }

// Roots are $LOOM_ZENCODER_DIR when set, else ~/.zencoder/sessions.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_ZENCODER_DIR", []string{".zencoder", "sessions"})
}

// Bundles lists each session file under root, one bundle each.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".jsonl")
	})
}

type header struct {
	ID        string `json:"id"`
	ParentID  string `json:"parentId"`
	Reason    string `json:"creationReason"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

type block struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	Tag        string          `json:"tag"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Input      json.RawMessage `json:"input"`
	Content    json.RawMessage `json:"content"`
	IsError    bool            `json:"isError"`
}

type line struct {
	Role      string          `json:"role"`
	CreatedAt string          `json:"createdAt"`
	Content   json.RawMessage `json:"content"`
	Reason    string          `json:"reason"`
}

var (
	cwdLine   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Working directory:\s+(.+)`) })
	sessionID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<session-id>([^<]+)</session-id>`) })
)

// continuations are the creation reasons of a session that continues
// its parent (not a sub-agent of it).
var continuations = map[string]bool{"directContinuation": true, "summarizedContinuation": true, "summarizationRequest": true}

// Read reads one session file.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &importer.Result{}
	r := &reader{name: name, res: res, t: &importer.Transcript{Res: res}, at: fi.ModTime().UTC()}
	if err := importer.Lines(ctx, f, r.line, res.TooLong(name)); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", Tool, name, err)
	}
	h := r.h
	id := importer.LineID(cmp.Or(h.ID, strings.TrimSuffix(filepath.Base(name), ".jsonl")))
	s := r.t.Session(id, name)
	if s == nil {
		return res, nil
	}
	s.Cwd = r.cwd
	if p := importer.LineID(h.ParentID); p != "" && p != id && !continuations[h.Reason] {
		s.Kind, s.ParentSourceID = loom.KindSubagent, p
	}
	if u := importer.ISOTime(h.UpdatedAt); !u.IsZero() && u.After(s.UpdatedAt) {
		s.UpdatedAt = u
	}
	res.Sessions = append(res.Sessions, s)
	return res, nil
}

// reader reads a session file's lines in order.
type reader struct {
	name string
	res  *importer.Result
	t    *importer.Transcript
	h    header
	at   time.Time // the time of the line read last
	cwd  string
}

// line reads line n: the header, else a message by its role.
func (r *reader) line(n int, raw []byte) error {
	if n == 1 {
		if !r.res.DecodeLine(r.name, n, raw, &r.h) {
			return nil
		}
		if ts := importer.ISOTime(r.h.CreatedAt); !ts.IsZero() {
			r.at = ts
		}
		return nil
	}
	var l line
	if !r.res.DecodeLine(r.name, n, raw, &l) {
		return nil
	}
	// Times only go forward: a line dated before the one before it
	// is taken at that one's.
	if ts := importer.ISOTime(l.CreatedAt); ts.After(r.at) {
		r.at = ts
	}
	mid := strconv.Itoa(n)
	switch l.Role {
	case "system":
		r.system(mid, l.Content)
	case "user":
		if blocks, ok := r.blocks(n, "user", l.Content); ok {
			r.user(mid, blocks)
		}
	case "assistant":
		if blocks, ok := r.blocks(n, "assistant", l.Content); ok {
			r.assistant(mid, blocks)
		}
	case "tool":
		if blocks, ok := r.blocks(n, "tool", l.Content); ok {
			r.tool(blocks)
		}
	case "finish", "permission":
		r.res.Skip(l.Role)
	default:
		r.res.Skip("unknown:" + importer.TypeName(l.Role))
	}
	return nil
}

// blocks is the content of line n, a role's, as a list of blocks; a
// problem when it is not one.
func (r *reader) blocks(n int, role string, content json.RawMessage) ([]block, bool) {
	var blocks []block
	if json.Unmarshal(content, &blocks) != nil {
		r.res.Problemf(r.name, n, role+" content that is not a list of blocks")
		return nil, false
	}
	return blocks, true
}

// system reads the system's message, whose "Working directory:" line
// names the session's working directory.
func (r *reader) system(mid string, content json.RawMessage) {
	var text string
	if json.Unmarshal(content, &text) != nil || strings.TrimSpace(text) == "" {
		r.res.Skip("empty-system-message")
		return
	}
	if m := cwdLine().FindStringSubmatch(text); m != nil && r.cwd == "" {
		r.cwd = strings.TrimSpace(m[1])
	}
	r.t.Add(&loom.Message{ID: mid, Role: loom.RoleSystem, CreatedAt: r.at, Parts: []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: text}}})
}

// user reads a user's line: what the user wrote, and the context
// Zencoder added (tagged blocks and skills) as a system message.
func (r *reader) user(mid string, blocks []block) {
	var user, context []loom.Part
	for i, bl := range blocks {
		pid := mid + "/" + strconv.Itoa(i)
		switch {
		case bl.Type == "text" && strings.TrimSpace(bl.Text) != "" && (bl.Tag == "" || bl.Tag == "user-input"):
			user = append(user, loom.Part{ID: pid, Type: loom.PartText, Text: bl.Text})
		case bl.Type == "text" && strings.TrimSpace(bl.Text) != "":
			context = append(context, loom.Part{ID: mid + "/context/" + strconv.Itoa(i), Type: loom.PartText, Text: bl.Text})
		case bl.Type == "skill" && bl.Name != "":
			context = append(context, loom.Part{ID: mid + "/context/" + strconv.Itoa(i), Type: loom.PartText, Text: "[Skill: " + bl.Name + "]"})
		}
	}
	if len(user) > 0 {
		r.t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: r.at, Parts: user})
	}
	if len(context) > 0 {
		r.t.Add(&loom.Message{ID: mid + "/context", Role: loom.RoleSystem, CreatedAt: r.at, Parts: context})
	}
}

// assistant reads the model's text, reasoning and tool calls.
func (r *reader) assistant(mid string, blocks []block) {
	var parts []loom.Part
	for i, bl := range blocks {
		pid := mid + "/" + strconv.Itoa(i)
		switch bl.Type {
		case "text":
			if strings.TrimSpace(bl.Text) != "" {
				parts = append(parts, loom.Part{ID: pid, Type: loom.PartText, Text: bl.Text})
			}
		case "reasoning":
			if strings.TrimSpace(bl.Text) != "" {
				parts = append(parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: bl.Text})
			}
		case "tool-call":
			parts = append(parts, importer.ToolCall(pid, bl.ToolCallID, bl.ToolName, bl.Input))
		default:
			r.res.Skip("block:" + importer.TypeName(bl.Type))
		}
	}
	r.t.Join(mid, loom.RoleAssistant, r.at, parts...)
}

// tool reads tools' results into their calls; one that names a session
// links that sub-agent.
func (r *reader) tool(blocks []block) {
	for _, bl := range blocks {
		if bl.Type != "tool-result" {
			continue
		}
		out, sub := resultText(bl.Content)
		if sub != "" {
			for _, m := range r.t.Msgs {
				for _, p := range m.Parts {
					if p.Type == loom.PartTool && p.CallID == bl.ToolCallID {
						importer.AddAgentPart(m, p, sub)
					}
				}
			}
		}
		r.t.Complete(bl.ToolCallID, out, bl.IsError, r.at)
	}
}

// resultText is a tool result's text blocks joined, and the session a
// sub-agent's result names.
func resultText(raw json.RawMessage) (string, string) {
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return importer.JSONText(raw), ""
	}
	var texts []string
	sub := ""
	for _, bl := range blocks {
		if bl.Text == "" {
			continue
		}
		texts = append(texts, bl.Text)
		if m := sessionID().FindStringSubmatch(bl.Text); m != nil && sub == "" {
			sub = importer.LineID(strings.TrimSpace(m[1]))
		}
	}
	return strings.Join(texts, "\n"), sub
}
