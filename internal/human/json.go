package human

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
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
	return unescapeHTML(b.String())
}

// unescapeHTML turns the escapes of <, > and & that Go's encoder writes
// into JSON strings (\u003c, \u003e, \u0026) back into the characters,
// so that a command reads "2>/dev/null && make", not "2\u003e/dev/null
// \u0026\u0026 make". s is valid JSON, where a backslash is always the
// start of an escape: an escaped backslash is copied whole, so "\\u003e"
// stays as it is.
func unescapeHTML(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch s[i+2 : i+6] {
			case "003c", "003C":
				b.WriteByte('<')
				i += 5
				continue
			case "003e", "003E":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2])
		i++
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
	return unescapeHTML(b.String())
}

// inputValue is a string field as its text and a list of strings (Codex's
// command is one: an argv) as the shell line that runs it, each argument
// quoted where the shell would split or read it; "" for anything else.
func inputValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(v, &list) == nil {
		for i, a := range list {
			list[i] = ShellQuote(a)
		}
		return strings.Join(list, " ")
	}
	return ""
}

// ShellQuote returns s as one word of a POSIX shell line: as it is when
// the shell would read it so, else in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// zeroCost matches the JSON of a loom.Usage (its fields in their order,
// cache_write_1h_tokens there or left out) up to a cost_usd of 0. Go's encoder escapes every quote inside a
// string, so a key in quotes is never text someone wrote.
var zeroCost = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"input_tokens":\s*(-?\d+),\s*"output_tokens":\s*(-?\d+),\s*"reasoning_tokens":\s*(-?\d+),\s*"cache_read_tokens":\s*(-?\d+),\s*"cache_write_tokens":\s*(-?\d+),\s*(?:"cache_write_1h_tokens":\s*-?\d+,\s*)?"cost_usd":\s*0,`)
})

// NullUnknownCosts rewrites JSON that Go's encoder wrote so that every
// usage whose cost is not known (CostKnown: tokens counted, cost 0) has
// a cost_usd of null, not 0: a model that reads it must not take the
// work for free.
func NullUnknownCosts(b []byte) []byte {
	return zeroCost().ReplaceAllFunc(b, func(m []byte) []byte {
		for _, n := range zeroCost().FindSubmatch(m)[1:6] {
			if string(n) != "0" {
				out := append([]byte{}, m[:len(m)-len("0,")]...)
				return append(out, "null,"...)
			}
		}
		return m
	})
}
