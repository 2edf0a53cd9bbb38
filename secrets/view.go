package secrets

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A view is text with its JSON escapes decoded (\n, \", \\, \u0026 …),
// so that the rules read what a person reads: a tool's output stored as
// a JSON string holds `pa\u0026ss` where the terminal showed `pa&ss`,
// and a private key's lines are joined by `\n`. Findings in the view
// are mapped back to the text through at.
type view struct {
	text string
	// at[i] is the offset in the original text of the view's byte i;
	// at[len(text)] is the original's length. A byte decoded from an
	// escape maps to the escape's start.
	at []int32
}

// maxUnescape is how many times escapes are decoded: a tool's output is
// a JSON string, the JSON document a tool printed holds strings, and
// one of those may hold JSON again (a secret manager's SecretString).
const maxUnescape = 3

// newView decodes the escapes of text, up to maxUnescape times over; it
// returns nil when text holds none.
func newView(text string) *view {
	var v *view
	for range maxUnescape {
		src := text
		if v != nil {
			src = v.text
		}
		t, at, ok := unescape(src)
		if !ok {
			break
		}
		if v != nil {
			// Compose: each byte maps through the first decoding back
			// to the original text.
			for i, p := range at {
				at[i] = v.at[p]
			}
		}
		v = &view{text: t, at: at}
	}
	// XML's and HTML's character references, once (a Jenkins job
	// keeps its shell steps so: &quot;Bearer …&quot;), where the text
	// holds them.
	src := text
	if v != nil {
		src = v.text
	}
	if strings.Contains(src, "&") {
		if t, at, ok := unentity(src); ok {
			if v != nil {
				for i, p := range at {
					at[i] = v.at[p]
				}
			}
			v = &view{text: t, at: at}
		}
	}
	// Lines numbered by the tool that read them (cat -n, an agent's
	// read tool, grep -n): read without their numbers, so that a key's
	// lines are one block again and a .pgpass line starts its line.
	src = text
	if v != nil {
		src = v.text
	}
	if t, at, ok := unnumber(src); ok {
		if v != nil {
			for i, p := range at {
				at[i] = v.at[p]
			}
		}
		v = &view{text: t, at: at}
	}
	return v
}

// unnumber removes the line numbers tools put before the lines they
// show: "     3\t" (cat -n), "     3→" (an agent's read tool), "3:" and
// "path:3:" / "path-3-" (grep -n), when most lines of s have one. It
// returns s without them and the offset in s of each byte left.
func unnumber(s string) (string, []int32, bool) {
	if strings.Count(s, "\n") < 1 {
		return s, nil, false
	}
	lines, numbered := 0, 0
	for pos := 0; pos < len(s); {
		end := strings.IndexByte(s[pos:], '\n')
		line := s[pos:]
		if end >= 0 {
			line = s[pos : pos+end]
		}
		if pos == 0 && strings.HasPrefix(line, `"`) {
			// A JSON string's opening quote before its first line.
			line = line[1:]
		}
		if t := strings.TrimSpace(line); t != "" && t != `"` {
			lines++
			if lineNumber(line) > 0 {
				numbered++
			}
		}
		if end < 0 {
			break
		}
		pos += end + 1
	}
	if lines < 2 || numbered*10 < lines*6 {
		return s, nil, false
	}
	b := make([]byte, 0, len(s))
	at := make([]int32, 0, len(s)+1)
	for pos := 0; pos < len(s); {
		end := strings.IndexByte(s[pos:], '\n')
		stop := len(s)
		if end >= 0 {
			stop = pos + end + 1
		}
		start := pos
		if pos == 0 && s[0] == '"' {
			b = append(b, '"')
			at = append(at, 0)
			start = 1
		}
		k := lineNumber(s[start:stop])
		for i := start + k; i < stop; i++ {
			b = append(b, s[i])
			at = append(at, int32(i))
		}
		pos = stop
	}
	at = append(at, int32(len(s)))
	return string(b), at, true
}

// lineNumber returns how long the number a tool put before line is
// (with what separates it from the line), 0 when it has none.
func lineNumber(line string) int {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	d := i
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i > d && i-d <= 7 {
		switch {
		case i < len(line) && line[i] == '\t':
			return i + 1
		case strings.HasPrefix(line[i:], "→"):
			return i + len("→")
		case i < len(line) && line[i] == ':' && d == 0 && (i+1 == len(line) || line[i+1] < '0' || line[i+1] > '9'):
			// grep -n's 3: (not a time, 12:30).
			return i + 1
		}
	}
	// grep -n with a file: path:3: or path-3- (a context line).
	for _, sep := range []byte{':', '-'} {
		k := strings.IndexByte(line[:min(len(line), 200)], sep)
		if k <= 0 || strings.ContainsAny(line[:k], " \t") {
			continue
		}
		n := k + 1
		for n < len(line) && line[n] >= '0' && line[n] <= '9' {
			n++
		}
		if n > k+1 && n < len(line) && line[n] == sep && strings.ContainsAny(line[:k], "./") {
			return n + 1
		}
	}
	return 0
}

// span maps a span of the view to the text: a span that ends inside an
// escape takes the escape whole.
func (v *view) span(s, e int) (int, int) {
	ts, te := int(v.at[s]), int(v.at[e])
	if e > s && te <= int(v.at[e-1]) {
		// The last byte was decoded from an escape that e does not
		// pass in the text's terms: take it to the escape's end.
		k := e
		for k < len(v.text) && v.at[k] == v.at[e-1] {
			k++
		}
		te = int(v.at[k])
	}
	return ts, te
}

// unescape decodes the JSON escapes of s, with the offset in s of each
// decoded byte. ok is false when s holds none.
func unescape(s string) (string, []int32, bool) { return decode(s, '\\', escape) }

// unentity decodes the XML and HTML character references of s (&quot;
// &lt; &#39; …: a Jenkins job's shell step, a .csproj's value, a page's
// text), like unescape.
func unentity(s string) (string, []int32, bool) { return decode(s, '&', entity) }

// decode decodes the escapes of s that start with mark, each read by
// dec (how many bytes it takes, and what it stands for; 0 for none),
// with the offset in s of each decoded byte. ok is false when s holds
// none.
func decode(s string, mark byte, dec func(string) (int, string)) (string, []int32, bool) {
	i := strings.IndexByte(s, mark)
	// The first escape, before anything is allocated: most texts that
	// hold the mark (a shell's &&, a Windows path's \) hold none.
	for i >= 0 && i < len(s)-1 {
		if n, _ := dec(s[i:]); n > 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], mark)
		if j < 0 {
			return s, nil, false
		}
		i += 1 + j
	}
	if i < 0 || i >= len(s)-1 {
		return s, nil, false
	}
	b := make([]byte, 0, len(s))
	at := make([]int32, 0, len(s)+1)
	last := 0
	found := false
	for i >= 0 && i < len(s)-1 {
		n, d := dec(s[i:])
		if n == 0 {
			j := strings.IndexByte(s[i+1:], mark)
			if j < 0 {
				break
			}
			i += 1 + j
			continue
		}
		found = true
		for k := last; k < i; k++ {
			at = append(at, int32(k))
		}
		b = append(b, s[last:i]...)
		for range len(d) {
			at = append(at, int32(i))
		}
		b = append(b, d...)
		last = i + n
		j := strings.IndexByte(s[last:], mark)
		if j < 0 {
			break
		}
		i = last + j
	}
	if !found {
		return s, nil, false
	}
	for k := last; k <= len(s); k++ {
		at = append(at, int32(k))
	}
	b = append(b, s[last:]...)
	return string(b), at, true
}

// entities are the named character references text carries secrets
// in.
var entities = map[string]string{"quot": `"`, "apos": "'", "lt": "<", "gt": ">", "amp": "&", "nbsp": " ", "#39": "'", "#34": `"`}

// entity decodes the character reference s starts with (&quot;, &#39;,
// &#x27;): how many bytes it takes and what it stands for; 0 when s
// starts with none.
func entity(s string) (int, string) {
	if len(s) < 4 || s[0] != '&' {
		return 0, ""
	}
	end := strings.IndexByte(s[:min(len(s), 10)], ';')
	if end < 2 {
		return 0, ""
	}
	name := s[1:end]
	if d, ok := entities[name]; ok {
		return end + 1, d
	}
	if name[0] != '#' || len(name) < 2 {
		return 0, ""
	}
	var v uint64
	var err error
	if name[1] == 'x' || name[1] == 'X' {
		v, err = strconv.ParseUint(name[2:], 16, 32)
	} else {
		v, err = strconv.ParseUint(name[1:], 10, 32)
	}
	if err != nil || v == 0 || v > utf8.MaxRune {
		return 0, ""
	}
	return end + 1, string(rune(v))
}

// escape decodes the JSON escape s starts with: how many bytes it takes
// and what it stands for; 0 when s starts with no escape JSON knows.
func escape(s string) (int, string) {
	if len(s) < 2 || s[0] != '\\' {
		return 0, ""
	}
	switch s[1] {
	case '"', '\\', '/':
		return 2, s[1:2]
	case 'n':
		return 2, "\n"
	case 'r':
		return 2, "\r"
	case 't':
		return 2, "\t"
	case 'b', 'f':
		return 2, " "
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, ""
		}
		if utf16.IsSurrogate(r) {
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if r2, ok := hex4(s[8:]); ok {
					if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
						return 12, string(c)
					}
				}
			}
			return 6, "\uFFFD"
		}
		return 6, string(r)
	}
	return 0, ""
}

func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(s[:4], 16, 32)
	return rune(v), err == nil
}
