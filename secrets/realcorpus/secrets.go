package realcorpus

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/loomhq/loom"
)

// Seeded is one secret written into a message, with the strings that
// must be gone from the message once it is redacted.
type Seeded struct {
	Kind, Carrier string
	Msg           *loom.Message
	Needles       []string
	// B64 are decoded strings that must not be readable by decoding
	// whatever base64 is left in the message.
	B64 []string
	// Hint shows the value as far as a report may.
	Hint string
}

// PerKind is how many secrets of each kind the corpus holds.
const PerKind = 12

// SecretCorpus returns the corpus of secrets: PerKind of each kind, each
// in a carrier that fits it, the carriers taken in turn so that every
// kind meets many carriers and every carrier many kinds.
func SecretCorpus(seed uint64) []Seeded {
	g := NewGen(seed)
	var out []Seeded
	for ki, k := range Kinds {
		turn := ki * 5
		for i := 0; i < PerKind; i++ {
			s := k.Make(g)
			s.Kind = k.ID
			var c Carrier
			for j := 0; j < len(Carriers); j++ {
				c = Carriers[(turn+j)%len(Carriers)]
				if c.Fits(s) {
					turn += j + 1
					break
				}
			}
			m, more := c.Write(g, s)
			m.Seq = int64(len(out) + 1)
			dec := s.B64
			if len(more) > 0 {
				// the carrier wrote the secret in base64 itself
				dec = append(dec, s.Value)
			}
			sd := Seeded{Kind: k.ID, Carrier: c.ID, Msg: m, Needles: needles(s, more), B64: dec, Hint: hint(s.Value)}
			sd.keepPresent()
			out = append(out, sd)
		}
	}
	return out
}

// needles are the strings that must be gone: the value (each line of 8
// characters or more, for a key of many lines), and, for a value of 16
// characters or more, its first and last halves (a redaction that keeps
// part of a key leaks that part); the pieces of a value between the
// characters JSON escapes (& < >), so that a redaction stopping at an
// escape is a miss; and the encoded forms.
func needles(s Secret, more []string) []string {
	var out []string
	add := func(n string) {
		n = strings.TrimSpace(n)
		if len(n) >= 8 {
			out = append(out, n)
		}
	}
	for _, l := range strings.Split(s.Value, "\n") {
		l = strings.TrimSpace(l)
		if keyHeader(l) {
			continue
		}
		add(l)
		if !strings.Contains(s.Value, "\n") && len(l) >= 16 {
			add(l[:len(l)/2])
			add(l[len(l)/2:])
		}
		for _, p := range strings.FieldsFunc(l, func(r rune) bool { return r == '&' || r == '<' || r == '>' }) {
			if p != l && len(p) >= 6 {
				out = append(out, p)
			}
		}
	}
	if strings.ContainsAny(s.Value, "&<>") {
		// the value as Go's JSON writes it: & < > as \u0026 …
		j := jsonStr(s.Value)
		for _, l := range strings.Split(j[1:len(j)-1], "\\n") {
			if !keyHeader(l) {
				add(l)
			}
		}
	}
	for _, e := range append(s.Extra, more...) {
		add(e)
	}
	return out
}

// keepPresent drops the needles the unredacted message does not hold
// (a value that its own format writes JSON-escaped, say, or one carried
// only in base64), so that every needle left is one a redaction must
// remove. Every secret keeps at least one.
func (sd *Seeded) keepPresent() {
	vis := Visible(sd.Msg)
	var keep []string
	for _, n := range sd.Needles {
		if strings.Contains(vis, n) {
			keep = append(keep, n)
		}
	}
	sd.Needles = keep
	var b64 []string
	if len(sd.B64) > 0 {
		dec := decodedB64(vis)
		for _, v := range sd.B64 {
			for _, l := range strings.Split(v, "\n") {
				if l = strings.TrimSpace(l); len(l) >= 8 && !keyHeader(l) && strings.Contains(dec, l) {
					b64 = append(b64, l)
				}
			}
		}
	}
	sd.B64 = b64
	if len(sd.Needles)+len(sd.B64) == 0 {
		panic("realcorpus: a " + sd.Kind + " in " + sd.Carrier + " left nothing to look for")
	}
}

// keyHeader reports whether l is a line of a PEM block that is no
// secret: its BEGIN and END lines and its headers.
func keyHeader(l string) bool {
	l = strings.TrimSpace(l)
	return strings.HasPrefix(l, "-----") || strings.HasPrefix(l, "Proc-Type:") || strings.HasPrefix(l, "DEK-Info:") || strings.HasPrefix(l, "Comment:")
}

func hint(v string) string {
	v = strings.SplitN(v, "\n", 2)[0]
	if strings.HasPrefix(v, "-----BEGIN") {
		return v
	}
	if len(v) < 12 {
		return v[:min(2, len(v))] + "…"
	}
	return v[:4] + "…" + v[len(v)-4:] + " (" + itoa(len(v)) + " chars)"
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Visible is everything of m a reader could see: the message as JSON,
// every text, and every string inside its JSON fields (tool input,
// output, metadata) decoded, and the strings of JSON text held in those
// strings, decoded again.
func Visible(m *loom.Message) string {
	b, _ := json.Marshal(m)
	var s strings.Builder
	s.Write(b)
	for _, p := range m.Parts {
		s.WriteString("\n" + p.Text + "\n" + p.Error + "\n" + p.Title + "\n" + p.URL)
		if p.Source != nil {
			s.WriteString("\n" + p.Source.Text)
		}
		for _, raw := range []json.RawMessage{p.Input, p.Output, p.Metadata} {
			jsonStrings(raw, &s, 0)
		}
	}
	return s.String()
}

func jsonStrings(raw []byte, s *strings.Builder, depth int) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || depth > 3 {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			s.WriteString("\n" + x)
			t := strings.TrimSpace(x)
			if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
				jsonStrings([]byte(t), s, depth+1)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				s.WriteString("\n" + k)
				walk(e)
			}
		}
	}
	walk(v)
}

var wrappedB64 = regexp.MustCompile(`[A-Za-z0-9+/]{40,}\n(?:[A-Za-z0-9+/]{40,}\n)*[A-Za-z0-9+/]*={0,2}`)

var b64run = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}`)

// decodedB64 decodes every run of base64 in text, at each of the four
// alignments (a redaction that cut a run leaves its tail unaligned).
func decodedB64(text string) string {
	var s strings.Builder
	// base64 wrapped over lines is decoded whole
	text = wrappedB64.ReplaceAllStringFunc(text, func(w string) string { return strings.ReplaceAll(w, "\n", "") })
	for _, run := range b64run.FindAllString(text, -1) {
		run = strings.TrimRight(run, "=")
		for off := 0; off < 4 && off < len(run); off++ {
			r := run[off:]
			if len(r)%4 == 1 {
				r = r[:len(r)-1]
			}
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				if d, err := enc.DecodeString(r); err == nil {
					s.Write(d)
					s.WriteByte('\n')
				}
			}
		}
	}
	return s.String()
}

// Leaks returns the needles of sd still readable in the redacted
// message red: in what a reader sees, or in what decoding the base64
// left in it gives.
func (sd Seeded) Leaks(red *loom.Message) []string {
	text := Visible(red)
	var out []string
	for _, n := range sd.Needles {
		if strings.Contains(text, n) {
			out = append(out, n)
		}
	}
	if len(sd.B64) > 0 {
		dec := decodedB64(text)
		for _, l := range sd.B64 {
			if strings.Contains(dec, l) {
				out = append(out, "base64 of "+l)
			}
		}
	}
	return out
}

// HintAll shows leaked needles as far as a report may.
func HintAll(ns []string) string {
	var out []string
	for _, n := range ns {
		p := ""
		if strings.HasPrefix(n, "base64 of ") {
			p, n = "base64 of ", n[len("base64 of "):]
		}
		out = append(out, p+hint(n))
	}
	return strings.Join(out, ", ")
}
