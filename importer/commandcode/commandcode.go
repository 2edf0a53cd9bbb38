// Package commandcode reads the sessions of Command Code (the cmd
// command of npm's command-code) for loom's importer.
//
// Command Code keeps a directory per project under
// ~/.commandcode/projects (the working directory with every character
// other than a letter or digit as -), one <session id>.jsonl per
// session with sidecars beside it (.meta.json, .checkpoints.jsonl,
// .prompts.jsonl, .share.json), which are not read: the session file
// holds the conversation. Its first line is the header (type session,
// version 3, id, timestamp, cwd, and parentSession, the file a fork
// was made from); each later line is an entry of a tree (id, parentId,
// timestamp): message, whose message is Anthropic's form (role user or
// assistant, content blocks text, thinking, tool_use, tool_result, and
// meta: source user, model or tool, isMeta for context the program
// adds), with the reply's usage (inputTokens, counting the cached
// ones, outputTokens, cacheReadTokens, cacheWriteTokens) and model
// beside it; compaction (its summary), and the entries of settings and
// labels (model_change, effort_change, label, session_info, custom).
//
// The session is the branch that ends with the last entry, walked back
// by parentId: entries a rewind left off it are counted as skipped. A
// message is a loom message; a user message of tool results alone
// completes the calls and is none. A compaction's summary is a summary
// message. Other entries are counted as skipped; a line that is not
// JSON is a problem.
//
// The format is the one Command Code 1.64.0 wrote when run offline
// against a fake model (testdata/real). Versions 0.27 to 0.45 wrote
// flat lines instead, with no header: {id, timestamp, sessionId,
// parentId, role, content, gitBranch, metadata: {version: 2}}, the
// message's role and content on the line itself (1.64 still reads
// them, and migrates a file only when it reopens it). Such a file is
// read in the order of its lines, each a message, its session id the
// lines' sessionId: how its parentIds link tool results and replies was
// not seen in files of those versions, so no line is left off a branch.
package commandcode

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

// Format reads Command Code's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Command Code's name in loom.
const Tool = "command-code"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": every reply names its model.
func (Format) Provider() string { return "" }

// Roots is Command Code's projects directory, ~/.commandcode/projects
// (Command Code has no variable that moves it).
func (Format) Roots(_ func(string) string, home string) []string {
	return importer.Under(home, ".commandcode", "projects")
}

// sidecars are the files Command Code keeps beside a session's, which
// end as it does.
var sidecars = []string{".checkpoints.jsonl", ".prompts.jsonl"}

// Bundles lists each session's file under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		name := d.Name()
		for _, s := range sidecars {
			if strings.HasSuffix(name, s) {
				return false
			}
		}
		return strings.HasSuffix(name, ".jsonl")
	})
}

// entry is one line of a session file: its header or an entry.
type entry struct {
	Type          string          `json:"type"`
	ID            string          `json:"id"`
	ParentID      *string         `json:"parentId"`
	Timestamp     string          `json:"timestamp"`
	Cwd           string          `json:"cwd"`
	ParentSession string          `json:"parentSession"`
	Message       json.RawMessage `json:"message"`
	// Role, Content and SessionID are a line of the earlier flat
	// format (before the session header), which holds its message's
	// role and content itself.
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	SessionID string          `json:"sessionId"`
	Model     string          `json:"model"`
	Summary   string          `json:"summary"`
	Usage     *struct {
		Input      float64 `json:"inputTokens"`
		Output     float64 `json:"outputTokens"`
		CacheRead  float64 `json:"cacheReadTokens"`
		CacheWrite float64 `json:"cacheWriteTokens"`
	} `json:"usage"`
	line int
}

// message is a message entry's message.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Meta    struct {
		Source string `json:"source"`
		IsMeta bool   `json:"isMeta"`
	} `json:"meta"`
}

// Read reads one session file.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &importer.Result{}
	var head *entry
	var entries []*entry
	flat := 0 // lines of the earlier flat format
	err = importer.Lines(ctx, f, func(n int, line []byte) error {
		e := &entry{line: n}
		if !res.DecodeLine(name, n, line, e) {
			return nil
		}
		if e.Type == "session" && head == nil {
			head = e
			return nil
		}
		if e.Type == "" && e.Role != "" && len(e.Content) > 0 {
			// The earlier flat line: its message is the line itself.
			e.Type, e.Message = "message", flatMessage(e)
			flat++
		}
		entries = append(entries, e)
		return nil
	}, res.TooLong(name))
	if err != nil {
		return nil, fmt.Errorf("command-code: %s: %w", name, err)
	}
	id := strings.TrimSuffix(filepath.Base(name), ".jsonl")
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: name}
	if head == nil && len(entries) > 0 {
		s.SourceID = cmp.Or(importer.LineID(entries[0].SessionID), id)
	}
	if head != nil {
		s.SourceID = cmp.Or(importer.LineID(head.ID), id)
		s.Cwd = head.Cwd
		if p := head.ParentSession; p != "" {
			// A fork names the file it was made from.
			s.Kind, s.ParentSourceID = loom.KindFork, strings.TrimSuffix(filepath.Base(p), ".jsonl")
		}
	}
	at := fi.ModTime().UTC()
	calls := importer.ToolCalls{}
	path := entries
	if head != nil || flat == 0 {
		path = branch(res, name, entries)
	}
	for _, e := range path {
		if tm, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil {
			at = tm.UTC()
		}
		mid := cmp.Or(importer.LineID(e.ID), "line-"+strconv.Itoa(e.line))
		switch e.Type {
		case "message":
			if m := readMessage(res, calls, name, e, mid, at); m != nil {
				s.Messages = append(s.Messages, m)
				s.Model = cmp.Or(m.Model, s.Model)
			}
		case "compaction":
			if strings.TrimSpace(e.Summary) == "" {
				res.Skip("empty-compaction")
				continue
			}
			s.Messages = append(s.Messages, &loom.Message{ID: mid, Role: loom.RoleSummary, CreatedAt: at, CompletedAt: &at,
				Parts: []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: e.Summary}}, Usage: loom.Usage{Compactions: 1}})
		default:
			res.Skip(importer.TypeName(e.Type))
		}
	}
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res, nil
	}
	s.CreatedAt, s.UpdatedAt = s.Messages[0].CreatedAt, s.Messages[len(s.Messages)-1].CreatedAt
	res.Sessions = append(res.Sessions, s)
	return res, nil
}

// branch is the entries from the first to the last, following parentId
// back from the last: the branch Command Code continues. Entries off it
// (left by a rewind) are counted as skipped. An entry whose parent is
// not found after a line of name that could not be read hangs on the
// entry before it: its parent is most likely that line.
func branch(res *importer.Result, name string, entries []*entry) []*entry {
	if len(entries) == 0 {
		return nil
	}
	byID := make(map[string]*entry, len(entries))
	index := make(map[*entry]int, len(entries))
	for i, e := range entries {
		index[e] = i
		if e.ID != "" {
			byID[e.ID] = e
		}
	}
	var path []*entry
	seen := map[*entry]bool{}
	for e := entries[len(entries)-1]; e != nil && !seen[e]; {
		seen[e] = true
		path = append(path, e)
		if e.ParentID == nil {
			break
		}
		p, ok := byID[*e.ParentID]
		if i := index[e]; !ok && i > 0 && res.LostBefore(name, e.line) {
			p = entries[i-1]
		}
		e = p
	}
	if len(path) != len(entries) {
		for _, e := range entries {
			if !seen[e] {
				res.Skip("off-branch")
			}
		}
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// flatMessage is the message of a line of the earlier flat format
// ({id, timestamp, sessionId, parentId, role, content, gitBranch,
// metadata}), in the form of a message entry's.
func flatMessage(e *entry) json.RawMessage {
	b, _ := json.Marshal(struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}{e.Role, e.Content})
	return b
}

// readMessage is a message entry as a loom message; nil when it holds
// only tool results (which complete their calls) or cannot be read.
func readMessage(res *importer.Result, calls importer.ToolCalls, name string, e *entry, mid string, at time.Time) *loom.Message {
	var m message
	if err := json.Unmarshal(e.Message, &m); err != nil {
		res.Problemf(name, e.line, "message entry without a message: "+importer.Excerpt(err.Error()))
		return nil
	}
	blocks, ok := importer.ContentBlocks(m.Content)
	if !ok {
		res.Problemf(name, e.line, "content is neither text nor blocks")
		return nil
	}
	msg := &loom.Message{ID: mid, CreatedAt: at, CompletedAt: &at}
	switch {
	case m.Role == "assistant":
		msg.Role, msg.Model = loom.RoleAssistant, importer.Clip(e.Model, 256)
		msg.Usage = usage(e)
	case m.Role == "user" && m.Meta.IsMeta:
		msg.Role = loom.RoleSystem
	case m.Role == "user":
		msg.Role = loom.RoleUser
	default:
		res.Skip("role:" + importer.TypeName(m.Role))
		return nil
	}
	calls.AddBlocks(res, msg, blocks, at, res.LineProblem(name, e.line))
	if len(msg.Parts) == 0 {
		if m.Meta.Source != "tool" && !toolResults(blocks) {
			res.Skip("empty-" + msg.Role + "-message")
		}
		return nil
	}
	return msg
}

// toolResults says whether blocks are tool results alone, which complete
// their calls: the earlier flat format marks no source "tool" on them.
func toolResults(blocks []importer.ContentBlock) bool {
	for _, b := range blocks {
		if b.Type != "tool_result" {
			return false
		}
	}
	return len(blocks) > 0
}

// usage is a reply's usage in loom's terms: Command Code's input counts
// the cached tokens (read and written), which loom keeps apart.
func usage(e *entry) loom.Usage {
	if e.Usage == nil {
		return loom.Usage{}
	}
	u := loom.Usage{InputTokens: importer.Tokens(e.Usage.Input), OutputTokens: importer.Tokens(e.Usage.Output),
		CacheReadTokens: importer.Tokens(e.Usage.CacheRead), CacheWriteTokens: importer.Tokens(e.Usage.CacheWrite)}
	u.InputTokens = max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	if u != (loom.Usage{}) {
		u.APICalls = 1
	}
	return u
}
