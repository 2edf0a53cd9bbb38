package loom

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// Fast paths for the JSON of parts, which an import writes for every
// message: the raw JSON of a tool call (its input, output, metadata) is
// checked by validJSON in one pass, without encoding/json's scanner and
// its call a byte, and written as it is when encoding/json would write
// it unchanged, else compacted in one pass. Each falls back to encoding/json for anything else, so
// that the bytes are encoding/json's (TestValidJSONIsValid,
// TestPartJSONIsEncodingJSON).

// maxJSONDepth is encoding/json's limit on nesting.
const maxJSONDepth = 10000

// jsonScan checks b as one JSON value between optional white space, as
// json.Valid does. clean says that json.Marshal of b as a
// json.RawMessage writes it unchanged: no white space outside its
// strings, and none of the characters it escapes in them (<, >, &,
// U+2028, U+2029).
type jsonScan struct {
	b     []byte
	i     int
	clean bool
}

// validJSON is json.Valid(b), and whether b is clean (jsonScan).
func validJSON(b []byte) (valid, clean bool) {
	s := jsonScan{b: b, clean: true}
	s.space()
	if !s.value(0) {
		return false, false
	}
	s.space()
	return s.i == len(s.b), s.clean
}

// ValidJSON is json.Valid(b), in one pass over b.
func ValidJSON(b []byte) bool {
	valid, _ := validJSON(b)
	return valid
}

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.clean = false
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth + 1)
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

func (s *jsonScan) lit(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

func (s *jsonScan) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *jsonScan) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// inString marks the bytes str looks at in a string: the rest are
// passed over in a loop of their own.
var inString = func() (t [256]bool) {
	for c := range ' ' {
		t[c] = true
	}
	for _, c := range []byte{'"', '\\', '<', '>', '&', 0xe2} {
		t[c] = true
	}
	return t
}()

// str checks the string at s.i, its opening quote.
func (s *jsonScan) str() bool {
	s.i++
	for s.i < len(s.b) {
		for s.i < len(s.b) && !inString[s.b[s.i]] {
			s.i++
		}
		if s.i >= len(s.b) {
			return false
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex(s.b[s.i+2]) || !isHex(s.b[s.i+3]) || !isHex(s.b[s.i+4]) || !isHex(s.b[s.i+5]) {
					return false
				}
				s.i += 6
			default:
				return false
			}
		case c < ' ':
			return false
		case c == '<' || c == '>' || c == '&':
			s.clean = false
			s.i++
		case c == 0xe2 && s.i+2 < len(s.b) && s.b[s.i+1] == 0x80 && (s.b[s.i+2] == 0xa8 || s.b[s.i+2] == 0xa9):
			s.clean = false
			s.i += 3
		default:
			s.i++
		}
	}
	return false
}

func (s *jsonScan) object(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.str() {
			return false
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value(depth) {
			return false
		}
		if more, ok := s.next('}'); !more {
			return ok
		}
	}
}

// next passes the separator after a member or an element: more when it
// is a comma, else whether it is end, which closes the value.
func (s *jsonScan) next(end byte) (more, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.space()
		return true, true
	case end:
		s.i++
		return false, true
	}
	return false, false
}

func (s *jsonScan) array(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		if more, ok := s.next(']'); !more {
			return ok
		}
	}
}

// AppendCompactJSON appends b, valid JSON (ValidJSON), as json.Marshal
// writes it as a json.RawMessage: without white space outside its strings, with <, >,
// &, U+2028 and U+2029 in them escaped as \u sequences.
func AppendCompactJSON(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	in, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case in && c == '"':
			in = false
		case in && (c == '<' || c == '>' || c == '&'):
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			continue
		case in && c == 0xe2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xa8:
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[b[i+2]&0xF])
			i += 2
			continue
		case in:
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// appendJSONString appends s as encoding/json writes a string: as it is
// between quotes when nothing in it is escaped, else by json.Marshal.
func appendJSONString(dst []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				plain = false
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			plain = false
			break
		}
		i += size
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}

// appendPartJSON appends p's JSON as Part.MarshalJSON's encoding/json
// path writes it, false when p is not one it writes (a file source,
// usage, raw JSON that is not valid): then the caller takes that path.
func appendPartJSON(dst []byte, p *Part) ([]byte, bool) {
	if p.Source != nil || p.Usage != nil {
		return dst, false
	}
	var clean [3]bool
	for i, r := range [...]json.RawMessage{p.Input, p.Output, p.Metadata} {
		if len(r) == 0 {
			continue
		}
		valid, c := validJSON(r)
		if !valid {
			return dst, false
		}
		clean[i] = c
	}
	str := func(name, v string) {
		if v == "" {
			return
		}
		dst = append(dst, ',', '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
		dst = appendJSONString(dst, v)
	}
	raw := func(name string, v json.RawMessage, clean bool) {
		if len(v) == 0 {
			return
		}
		dst = append(dst, ',', '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
		if clean {
			dst = append(dst, v...)
		} else {
			dst = AppendCompactJSON(dst, v)
		}
	}
	tm := func(name string, t *time.Time) {
		if t == nil {
			return
		}
		dst = append(dst, ',', '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':', '"')
		dst = append(dst, FormatTime(*t)...)
		dst = append(dst, '"')
	}
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, p.ID)
	dst = append(dst, `,"type":`...)
	dst = appendJSONString(dst, p.Type)
	str("text", p.Text)
	str("call_id", p.CallID)
	str("name", p.Name)
	str("status", p.Status)
	raw("input", p.Input, clean[0])
	raw("output", p.Output, clean[1])
	str("error", p.Error)
	str("title", p.Title)
	raw("metadata", p.Metadata, clean[2])
	str("mime", p.Mime)
	str("filename", p.Filename)
	str("url", p.URL)
	str("session_id", p.SessionID)
	tm("started_at", p.StartedAt)
	tm("ended_at", p.EndedAt)
	return append(dst, '}'), true
}
