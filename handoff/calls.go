package handoff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/loomhq/loom"
)

// ReadPath is the file a tool call read, when it is one of a
// file-reading tool: Claude Code's and droid's Read (Continue's, whose
// key is filepath), Gemini CLI's and loom's read_file, opencode's read,
// and Cline's read_files of one file.
func ReadPath(p loom.Part) (string, bool) {
	switch p.Name {
	case "Read", "read_file", "read", "read_files":
	default:
		return "", false
	}
	var in struct {
		FilePath  string `json:"file_path"`
		FilePath2 string `json:"filePath"`
		FilePath3 string `json:"filepath"`
		Path      string `json:"path"`
		Files     []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	if json.Unmarshal(p.Input, &in) != nil {
		return "", false
	}
	if len(in.Files) == 1 {
		in.Path = in.Files[0].Path
	}
	for _, s := range []string{in.FilePath, in.FilePath2, in.FilePath3, in.Path} {
		if s != "" {
			return s, true
		}
	}
	return "", false
}

// ResultText is the text a tool call's result gives its model: the output,
// and for a failed call its error (once, when the output holds it).
func ResultText(p loom.Part) string {
	out := loom.JSONText(p.Output)
	if p.Status != loom.ToolError || p.Error == "" {
		return out
	}
	switch {
	case out == "":
		return p.Error
	case strings.Contains(out, strings.TrimSuffix(p.Error, "…")):
		// The output holds the error (or the start of it that a reader
		// kept, cut with an ellipsis, where it keeps the output whole).
		return out
	}
	return p.Error + "\n" + out
}

// ToolRecord tells a tool call the target has no tool for as text: what
// ran, with what input, and its result. The target's model reads it; it
// is no call the target would try to answer.
func ToolRecord(p loom.Part) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Tool call %s, made in another agent]\nInput: %s\n", p.Name, compactJSON(p.Input))
	if p.Status == loom.ToolError {
		b.WriteString("Result (error):\n")
	} else {
		b.WriteString("Result:\n")
	}
	b.WriteString(ResultText(p))
	return b.String()
}

// compactJSON is raw on one line, with <, > and & as they are: text a
// model reads, not HTML.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

var safeCallID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// CallIDs gives the tool calls of one handed-off session their ids:
// each call's own where the target can take it (letters, digits, '_'
// and '-', as Anthropic's tool_use ids must be) and no call before had
// it, else Prefix and the call's number.
type CallIDs struct {
	Prefix string
	n      int
	seen   map[string]bool
}

// For is the id of call p, the next call of the session.
func (c *CallIDs) For(p loom.Part) string {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.n++
	id := p.CallID
	if !safeCallID().MatchString(id) || c.seen[id] {
		id = fmt.Sprintf("%s%04d", c.Prefix, c.n)
	}
	c.seen[id] = true
	return id
}
