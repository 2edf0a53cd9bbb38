package holdout_test

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/loomhq/loom"
)

// walkJSON appends every string in a JSON value, decoding strings that
// are JSON themselves.
func walkJSON(v any, out *[]string, depth int) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
		s := strings.TrimSpace(x)
		if depth < 4 && (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) {
			var y any
			if json.Unmarshal([]byte(s), &y) == nil {
				walkJSON(y, out, depth+1)
			}
		}
	case []any:
		for _, e := range x {
			walkJSON(e, out, depth)
		}
	case map[string]any:
		for k, e := range x {
			*out = append(*out, k)
			walkJSON(e, out, depth)
		}
	}
}

// readable is all a reader of m can read, JSON decoded.
func readable(m *loom.Message) string {
	var out []string
	for _, p := range m.Parts {
		out = append(out, p.Text, p.Error, p.Title, p.URL)
		if p.Source != nil {
			out = append(out, p.Source.Text)
		}
		for _, raw := range []json.RawMessage{p.Input, p.Output, p.Metadata} {
			if len(raw) == 0 {
				continue
			}
			out = append(out, string(raw))
			var v any
			if json.Unmarshal(raw, &v) == nil {
				walkJSON(v, &out, 0)
			}
		}
	}
	return strings.Join(out, "\n")
}

var b64Run = regexp.MustCompile(`[A-Za-z0-9+/]{24,}={0,2}`)

// leak says how s is still readable in text, or "".
func leak(text string, s sec) string {
	var forms []string
	if s.lines {
		for _, l := range strings.Split(s.value, "\n") {
			if len(l) >= 20 {
				forms = append(forms, l)
			}
		}
		for _, f := range forms {
			if strings.Contains(text, f) {
				return "key-line"
			}
		}
		return ""
	}
	forms = append([]string{s.value}, s.forms...)
	for _, f := range forms {
		if f == "" {
			continue
		}
		if strings.Contains(text, f) {
			return "full"
		}
	}
	for _, f := range forms {
		if len(f) >= 12 {
			h := len(f) / 2
			if strings.Contains(text, f[:h]) {
				return "first-half"
			}
			if strings.Contains(text, f[h:]) {
				return "last-half"
			}
		}
		if len(f) >= 6 && strings.Contains(text, b64(f)) {
			return "base64"
		}
	}
	// base64 blobs that decode to the value
	if len(s.value) >= 8 {
		for _, run := range b64Run.FindAllString(text, -1) {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
				if d, err := enc.DecodeString(strings.TrimRight(run, "=")[:len(strings.TrimRight(run, "="))/4*4]); err == nil && strings.Contains(string(d), s.value) {
					return "in-base64-blob"
				}
				_ = enc
			}
		}
	}
	return ""
}

// excerpt shows where a value sits in text, the value masked.
func excerpt(text, v string, width int) string {
	i := strings.Index(text, v)
	if i < 0 {
		for _, f := range []string{v[:len(v)/2], v[len(v)/2:]} {
			if len(f) >= 6 {
				if i = strings.Index(text, f); i >= 0 {
					v = f
					break
				}
			}
		}
	}
	if i < 0 {
		return ""
	}
	a, b := max(0, i-width), min(len(text), i+len(v)+width)
	return strings.ReplaceAll(strings.ReplaceAll(text[a:i]+mask(v)+text[i+len(v):b], "\n", "⏎"), "\r", "␍")
}

func mask(v string) string {
	if len(v) <= 8 {
		return v[:min(2, len(v))] + "…"
	}
	return v[:4] + "…" + v[len(v)-4:]
}

// maskAll masks every known value in s.
func maskAll(s string, secs []sec) string {
	for _, x := range secs {
		vals := []string{x.value}
		if x.lines {
			vals = strings.Split(x.value, "\n")
		}
		for _, v := range append(vals, x.forms...) {
			if len(v) >= 6 {
				s = strings.ReplaceAll(s, v, mask(v))
			}
		}
	}
	return s
}
