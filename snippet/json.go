package snippet

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// readable turns the lines of text that are JSON into text to read: a
// message's search text holds each tool call's input, and a result that
// is not a string, as compact JSON (loom.Message.SearchText), whose
// escapes ("\n", "\"", "\u003e") and punctuation a snippet would show,
// and whose "\n" would glue an "n" to the word after it.
//
// A whole line that is a JSON object or array becomes its values, each
// after its key ("command: go test ./... · description: Run the
// tests"). A line the window cut (the first when head, the last when
// tail) that looks like part of one has its escapes undone and its
// punctuation made separators. Other lines are left as they are.
func readable(text string, head, tail bool) string {
	if !strings.Contains(text, `{"`) && !strings.Contains(text, `["`) && !strings.Contains(text, `":`) {
		return text
	}
	lines := strings.Split(text, "\n")
	changed := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case isJSONLine(t):
			if s, ok := jsonValues(t); ok {
				lines[i], changed = s, true
				continue
			}
			fallthrough
		case i == 0 && head && looksCutJSON(t), i == len(lines)-1 && tail && looksCutJSON(t):
			lines[i], changed = cutJSON(t), true
		}
	}
	if !changed {
		return text
	}
	return strings.Join(lines, "\n")
}

// isJSONLine reports whether t starts and ends as a JSON object or
// array with a string in it.
func isJSONLine(t string) bool {
	return len(t) >= 4 && (strings.HasPrefix(t, `{"`) && strings.HasSuffix(t, "}") || strings.HasPrefix(t, `["`) && strings.HasSuffix(t, "]"))
}

// looksCutJSON reports whether t, cut from a longer line, looks like
// part of a JSON object: a key and its value, or two strings in a list.
func looksCutJSON(t string) bool {
	return strings.Contains(t, `":"`) || strings.Contains(t, `","`) || strings.HasPrefix(t, `{"`)
}

// jsonValues is the JSON value t as text: an object's values after
// their keys, a list's items, separated by " · "; nested ones the same
// within. false when t is not valid JSON.
func jsonValues(t string) (string, bool) {
	var v any
	d := json.NewDecoder(strings.NewReader(t))
	d.UseNumber()
	if d.Decode(&v) != nil || d.More() {
		return "", false
	}
	var b strings.Builder
	writeValue(&b, v, "")
	return b.String(), true
}

func writeValue(b *strings.Builder, v any, key string) {
	sep := func() {
		if b.Len() > 0 {
			b.WriteString(" · ")
		}
	}
	switch x := v.(type) {
	case map[string]any:
		// In the order of their keys: a decoded object keeps none.
		for _, k := range sortedKeys(x) {
			writeValue(b, x[k], k)
		}
	case []any:
		for _, e := range x {
			writeValue(b, e, key)
		}
	case nil:
	default:
		s := ""
		switch y := x.(type) {
		case string:
			s = y
		case json.Number:
			s = y.String()
		case bool:
			s = strconv.FormatBool(y)
		}
		if strings.TrimSpace(s) == "" {
			return
		}
		// One line, as the line it was.
		s = lineBreaks.Replace(s)
		sep()
		if key != "" {
			b.WriteString(key + ": ")
		}
		b.WriteString(s)
	}
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ")

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// cutJSON is part of a JSON line as text: its escapes undone, `","` and
// `":"` made " · " and ": ", and the brackets and quotes at its ends
// left out.
func cutJSON(t string) string {
	var b strings.Builder
	b.Grow(len(t))
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '\\' && i+1 < len(t):
			i++
			switch t[i] {
			case 'n', 'r', 't':
				b.WriteByte(' ')
			case 'u':
				if i+5 <= len(t) {
					if n, err := strconv.ParseUint(t[i+1:i+5], 16, 32); err == nil && utf8.ValidRune(rune(n)) {
						if r := rune(n); r >= ' ' {
							b.WriteRune(r)
						} else {
							b.WriteByte(' ')
						}
						i += 4
						continue
					}
				}
				b.WriteString(`\u`)
			default:
				b.WriteByte(t[i])
			}
		case strings.HasPrefix(t[i:], `","`):
			b.WriteString(" · ")
			i += 2
		case strings.HasPrefix(t[i:], `":"`):
			b.WriteString(": ")
			i += 2
		case strings.HasPrefix(t[i:], `":`):
			b.WriteString(": ")
			i++
		case strings.HasPrefix(t[i:], `,"`):
			b.WriteString(" · ")
			i++
		case c == '"':
			// A quote within a string is escaped: this one is JSON's.
		case c == '{' || c == '}' || c == '[' || c == ']':
			// JSON's own stand at the ends or beside a quote; others
			// are text ("awk '{print $1}'").
			if i > 0 && i < len(t)-1 && t[i-1] != '"' && t[i+1] != '"' {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
