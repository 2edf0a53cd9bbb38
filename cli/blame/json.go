package blame

import (
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/cli/term"
)

// writeResultJSON writes res as command.WriteJSON does, byte for byte
// (indented by two spaces, sanitized), without going through
// reflection and then indenting the whole again: a file of thousands
// of lines, a dozen fields each for an agent's, took encoding/json a
// quarter of a repeated blame's time (docs/performance.md). It is
// written in pieces of a few lines, each sanitized on its own (a piece
// ends between two lines, never inside a string), so that megabytes of
// output take no more memory than a piece.
func writeResultJSON(w io.Writer, res *blame.Result) error {
	e := jsonWriter{w: w, b: make([]byte, 0, jsonPiece+4<<10), quoted: map[string][]byte{}}
	e.raw("{\n")
	e.field(1, "repo", res.Repo, false)
	e.field(1, "path", res.Path, false)
	if res.Revision != "" {
		e.field(1, "revision", res.Revision, false)
	}
	e.raw(`  "lines": `)
	switch {
	case res.Lines == nil:
		e.raw("null")
	case len(res.Lines) == 0:
		e.raw("[]")
	default:
		e.raw("[\n")
		for i := range res.Lines {
			e.line(&res.Lines[i])
			if i < len(res.Lines)-1 {
				e.raw(",")
			}
			e.raw("\n")
			if len(e.b) >= jsonPiece {
				e.flush()
			}
		}
		e.raw("  ]")
	}
	if len(res.Notes) > 0 {
		e.raw(",\n  \"notes\": [\n")
		for i, n := range res.Notes {
			e.raw("    ")
			e.str(n, false)
			if i < len(res.Notes)-1 {
				e.raw(",")
			}
			e.raw("\n")
		}
		e.raw("  ]")
	}
	e.raw("\n}\n")
	e.flush()
	return e.err
}

// jsonPiece is how many bytes writeResultJSON writes at a time.
const jsonPiece = 32 << 10

// jsonWriter appends JSON to b, written to w a piece at a time; quoted
// keeps the strings that repeat from line to line (sessions, commits,
// agents) quoted once.
type jsonWriter struct {
	w      io.Writer
	b      []byte
	quoted map[string][]byte
	err    error
}

// flush writes what b holds, sanitized, unless a write failed before.
func (e *jsonWriter) flush() {
	if e.err == nil {
		_, e.err = e.w.Write(term.SanitizeJSON(e.b))
	}
	e.b = e.b[:0]
}

func (e *jsonWriter) raw(s string) { e.b = append(e.b, s...) }

// str appends s as encoding/json quotes it; keep says it is likely to
// come again.
func (e *jsonWriter) str(s string, keep bool) {
	if q, ok := e.quoted[s]; ok {
		e.b = append(e.b, q...)
		return
	}
	start := len(e.b)
	e.b = appendString(e.b, s)
	if keep {
		e.quoted[s] = append([]byte(nil), e.b[start:]...)
	}
}

// appendString appends s quoted: directly when it holds only printable
// ASCII that JSON (and encoding/json's HTML escaping) leaves as it is,
// else as encoding/json quotes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// field appends a member of an object at depth, and a comma after it
// (every field but the last of an object has one).
func (e *jsonWriter) field(depth int, name, value string, keep bool) {
	e.indent(depth)
	e.b = append(e.b, '"')
	e.b = append(e.b, name...)
	e.b = append(e.b, `": `...)
	e.str(value, keep)
	e.b = append(e.b, ",\n"...)
}

func (e *jsonWriter) indent(depth int) {
	for range depth {
		e.b = append(e.b, "  "...)
	}
}

func (e *jsonWriter) intField(name string, v int64) {
	e.indent(3)
	e.b = append(e.b, '"')
	e.b = append(e.b, name...)
	e.b = append(e.b, `": `...)
	e.b = strconv.AppendInt(e.b, v, 10)
	e.b = append(e.b, ",\n"...)
}

// line appends l as encoding/json writes a blame.Line: its fields in
// order, those marked omitempty left out when empty.
func (e *jsonWriter) line(l *blame.Line) {
	e.raw("    {\n")
	e.intField("line", int64(l.N))
	e.field(3, "kind", l.Kind, true)
	opt := func(name, v string) {
		if v != "" {
			e.field(3, name, v, true)
		}
	}
	opt("commit", l.Commit)
	opt("session_id", l.SessionID)
	opt("message_id", l.MessageID)
	opt("part_id", l.PartID)
	if l.Seq != 0 {
		e.intField("seq", l.Seq)
	}
	if l.Turn != 0 {
		e.intField("turn", int64(l.Turn))
	}
	opt("agent", l.Agent)
	opt("model", l.Model)
	opt("provider", l.Provider)
	opt("tool", l.Tool)
	if l.At != nil {
		e.indent(3)
		e.raw(`"at": `)
		e.time(*l.At)
		e.raw(",\n")
	}
	opt("from", l.From)
	opt("source", l.Source)
	opt("conversation", l.Conversation)
	opt("evidence", l.Evidence)
	opt("member", l.Member)
	e.indent(3)
	e.raw(`"text": `)
	e.str(l.Text, false)
	e.raw("\n    }")
}

// time appends t as its MarshalJSON does.
func (e *jsonWriter) time(t time.Time) {
	b, err := t.MarshalJSON()
	if err != nil && e.err == nil {
		e.err = err
	}
	e.b = append(e.b, b...)
}
