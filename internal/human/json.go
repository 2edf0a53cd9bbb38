package human

import (
	"bytes"
	"encoding/json"
	"strings"
)

// PrettyJSON indents a JSON value (a tool's input) for people to read: ""
// for none or null, and the value as it is when it is not valid JSON.
func PrettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// OutputText shows a tool's output for people to read: a JSON string as
// its text, anything else as PrettyJSON.
func OutputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return PrettyJSON(raw)
}

// inputKeys are the fields of a tool's input that say what a call did,
// in the order they are looked for: a shell command first, then a path,
// a pattern or a query. Claude Code, Codex, Gemini CLI, opencode and
// loom's own tools use these names.
var inputKeys = []string{"command", "cmd", "file_path", "filePath", "path", "absolute_path", "pattern", "query", "url", "prompt", "description"}

// InputLine says on one line what a tool call was given: "$ go test" for
// a shell command, the path of a read, the query of a search, and the
// compact JSON of any other input. "" for none.
func InputLine(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range inputKeys {
			v, ok := obj[k]
			if !ok {
				continue
			}
			s := inputValue(v)
			if s == "" {
				continue
			}
			if k == "command" || k == "cmd" {
				return "$ " + OneLine(s)
			}
			return OneLine(s)
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return OneLine(string(raw))
	}
	return b.String()
}

// inputValue is a string field as its text and a list of strings (Codex's
// command is one) joined by spaces; "" for anything else.
func inputValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(v, &list) == nil {
		return strings.Join(list, " ")
	}
	return ""
}
