package claudecode

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/shell"
)

var _ handoff.Writer = Format{}

// handoffVersion is the Claude Code version a handed-off file says
// wrote it: the format of the 2.1 releases, which it follows.
const handoffVersion = "2.1.39"

// maxSlug is the longest project directory name Claude Code uses whole.
const maxSlug = 200

// ProjectSlug is the name of the directory under projects/ where Claude
// Code keeps the sessions of the working directory dir, as Claude Code
// makes it: dir with every UTF-16 code unit other than an ASCII letter
// or digit replaced by '-' (a character outside the Basic Multilingual
// Plane is two), and a name longer than 200 cut there and followed by
// '-' and a hash of dir in base 36.
func ProjectSlug(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		switch {
		case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r >= 0x10000:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	slug := b.String()
	if len(slug) <= maxSlug {
		return slug
	}
	// Java's string hash over UTF-16 code units, in 32 bits, as Claude
	// Code computes it.
	var h int32
	for _, u := range utf16.Encode([]rune(dir)) {
		h = h<<5 - h + int32(u)
	}
	return slug[:maxSlug] + "-" + strconv.FormatInt(abs(int64(h)), 36)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// Handoff writes h as a new Claude Code session,
// projects/<slug of h.Dir>/<uuid>.jsonl under $CLAUDE_CONFIG_DIR or
// ~/.claude: a chain of user and assistant lines as Claude Code writes
// them. Shell commands become Bash calls and file reads Read calls,
// each followed by its tool_result, and a session imported from Claude
// Code keeps its calls as they were; any other tool call is told as
// text.
// Reasoning is dropped: Claude's API takes back only thinking it signed.
// The first line records the loom session in loomHandoff.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	dir, err := importer.HandoffDir(Tool, h, "CLAUDE_CONFIG_DIR", ".claude")
	if err != nil {
		return nil, err
	}
	id := h.SessionID(uuid.NewString)
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path:   filepath.Join(dir, "projects", ProjectSlug(h.Dir), id+".jsonl"),
		Resume: handoff.ResumeIn(h.Dir, "claude", "--resume", id)}
	// Written back: in the file it was in, where claude --resume looks
	// for it from h.Dir (the project's directory, the session's name).
	if p := h.KeptPath(func(p string) bool {
		return filepath.Base(p) == id+".jsonl" && filepath.Base(filepath.Dir(p)) == ProjectSlug(h.Dir)
	}); p != "" {
		out.Path = p
	}
	w := &ccWriter{h: h, out: out, id: id, ids: handoff.CallIDs{Prefix: "toolu_loom"}}
	for _, e := range handoff.Entries(h, out) {
		if e.Role == loom.RoleUser {
			w.user(e)
		} else {
			w.assistant(e)
		}
	}
	if len(w.lines) > 0 {
		w.lines[0][handoff.OriginField] = h.Origin()
	}
	if err := handoff.WriteLines(ctx, out.Path, w.lines); err != nil {
		return nil, err
	}
	return out, nil
}

type obj = map[string]any

// ccWriter builds the lines of one session, each the child of the one
// before.
type ccWriter struct {
	h      *handoff.Handoff
	out    *handoff.Handed
	id     string
	lines  []obj
	parent any // the uuid of the line before, null for the first
	ids    handoff.CallIDs
	msgs   int
}

func (w *ccWriter) add(typ string, e handoff.Entry, extra obj) obj {
	u := uuid.NewString()
	l := obj{
		"parentUuid": w.parent, "isSidechain": false, "userType": "external",
		"cwd": w.h.Dir, "sessionId": w.id, "version": handoffVersion, "gitBranch": w.h.Session.GitBranch,
		"type": typ, "uuid": u, "timestamp": handoff.Stamp(e.At),
	}
	for k, v := range extra {
		l[k] = v
	}
	if len(w.lines) == 0 {
		l["parentUuid"] = nil
	}
	w.lines = append(w.lines, l)
	w.parent = u
	return l
}

func (w *ccWriter) user(e handoff.Entry) {
	var texts []string
	for _, p := range e.Parts {
		texts = append(texts, p.Text)
	}
	w.add("user", e, obj{"message": obj{"role": "user", "content": strings.Join(texts, "\n\n")}})
}

// assistant writes a reply: its blocks up to and including a run of tool
// calls as one assistant message, then a user line with their results,
// and so on, as Claude's API takes them.
func (w *ccWriter) assistant(e handoff.Entry) {
	var blocks []any
	var results []any
	var meta []any
	flush := func() {
		if len(blocks) == 0 {
			return
		}
		stop := "end_turn"
		if len(results) > 0 {
			stop = "tool_use"
		}
		w.msgs++
		model := e.Model
		if model == "" {
			model = "unknown"
		}
		w.add("assistant", e, obj{"message": obj{
			"id": fmt.Sprintf("msg_loom_%s_%d", strings.ReplaceAll(w.id, "-", "")[:12], w.msgs), "type": "message", "role": "assistant",
			"model": model, "content": blocks, "stop_reason": stop, "stop_sequence": nil,
			"usage": obj{"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
		}})
		if len(results) > 0 {
			l := obj{"message": obj{"role": "user", "content": results}}
			if len(meta) == 1 {
				l["toolUseResult"] = meta[0]
			}
			w.add("user", e, l)
		}
		blocks, results, meta = nil, nil, nil
	}
	for _, p := range e.Parts {
		switch p.Type {
		case loom.PartReasoning:
			w.out.Drop("reasoning")
		case loom.PartText:
			if len(results) > 0 {
				flush()
			}
			blocks = append(blocks, obj{"type": "text", "text": p.Text})
		case loom.PartTool:
			name, input, res := ccTool(w.h, p)
			if name == "" {
				if len(results) > 0 {
					flush()
				}
				w.out.ToolRecords++
				blocks = append(blocks, obj{"type": "text", "text": handoff.ToolRecord(p)})
				continue
			}
			w.out.ToolCalls++
			id := w.ids.For(p)
			blocks = append(blocks, obj{"type": "tool_use", "id": id, "name": name, "input": input})
			results = append(results, obj{"type": "tool_result", "tool_use_id": id, "content": handoff.ResultText(p), "is_error": p.Status == loom.ToolError})
			meta = append(meta, res)
		}
	}
	flush()
}

// ccTool is the Claude Code tool that does what p did (the call itself
// when h's session is Claude Code's), its input, and the toolUseResult
// Claude Code keeps beside the result; no name when Claude Code has no
// such tool. A file read names its file by its absolute path.
func ccTool(h *handoff.Handoff, p loom.Part) (string, any, any) {
	text := handoff.ResultText(p)
	if h.FromTool(Tool) {
		// Claude Code's own call: as it was, with the structured result
		// the import kept.
		var meta struct {
			ToolUseResult json.RawMessage `json:"toolUseResult"`
		}
		var res any = text
		if json.Unmarshal(p.Metadata, &meta) == nil && len(meta.ToolUseResult) > 0 {
			res = meta.ToolUseResult
		}
		var input any = obj{}
		if len(p.Input) > 0 {
			input = p.Input
		}
		return p.Name, input, res
	}
	if p.Status == loom.ToolError {
		if cmd, ok := shell.Command(p); ok {
			return "Bash", obj{"command": cmd}, "Error: " + text
		}
		if path, ok := h.ReadPath(p); ok {
			return "Read", obj{"file_path": path}, "Error: " + text
		}
		return "", nil, nil
	}
	if cmd, ok := shell.Command(p); ok {
		return "Bash", obj{"command": cmd}, obj{"stdout": text, "stderr": "", "interrupted": false, "isImage": false}
	}
	if path, ok := h.ReadPath(p); ok {
		n := strings.Count(text, "\n") + 1
		return "Read", obj{"file_path": path}, obj{"type": "text", "file": obj{"filePath": path, "content": text, "numLines": n, "startLine": 1, "totalLines": n}}
	}
	return "", nil, nil
}
