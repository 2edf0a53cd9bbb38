package secrets

import (
	"encoding/json"
	"slices"
	"unsafe"

	"github.com/loomhq/loom"
)

// Redact is the detector's Redact, the values it replaced kept in e.
func (e *Echoes) Redact(text string) (string, int) { return e.d.redact(text, e) }

// RedactPart is the detector's RedactPart, the values it replaced kept
// in e.
func (e *Echoes) RedactPart(p loom.Part) (loom.Part, int) { return e.d.redactPart(p, e) }

// Replace returns text with every value of e replaced by its marker,
// and how many it replaced.
func (e *Echoes) Replace(text string) (string, int) {
	if len(text) < MinEcho {
		return text, 0
	}
	return replaceEchoes(e.snapshot(), text, "")
}

// ReplacePart returns p with the values of e replaced in its fields (a
// copy, p itself unchanged), and how many it replaced. JSON fields stay
// valid JSON.
func (e *Echoes) ReplacePart(p loom.Part) (loom.Part, int) {
	return replacePart(e.snapshot(), p)
}

func replacePart(blocks []*echoBlock, p loom.Part) (loom.Part, int) {
	if len(blocks) == 0 {
		return p, 0
	}
	if p.Source != nil {
		src := *p.Source
		p.Source = &src
	}
	rep := func(s string) (string, int) { return replaceEchoes(blocks, s, "") }
	n := 0
	for _, f := range fields(&p) {
		var k int
		if f.text != nil {
			*f.text, k = rep(*f.text)
			n += k
			continue
		}
		// The raw bytes are read as a string without a copy: most
		// hold no echo, and one that does is written anew (red is
		// then a new string).
		var red string
		if red, k = rep(unsafe.String(unsafe.SliceData(*f.raw), len(*f.raw))); k == 0 {
			continue
		}
		if !json.Valid([]byte(red)) {
			// A literal across the JSON's structure: replaced in its
			// strings, decoded, instead.
			red, k = redactJSON(*f.raw, rep)
		}
		*f.raw = json.RawMessage(red)
		n += k
	}
	return p, n
}

// ReplaceMessage returns m with the values of e replaced in its parts
// and its error (a copy, when there were any; m itself otherwise), and
// how many it replaced.
func (e *Echoes) ReplaceMessage(m *loom.Message) (*loom.Message, int) {
	return replaceMessage(e.snapshot(), m)
}

func replaceMessage(blocks []*echoBlock, m *loom.Message) (*loom.Message, int) {
	if len(blocks) == 0 || m == nil {
		return m, 0
	}
	var parts []loom.Part
	n := 0
	for i, p := range m.Parts {
		red, k := replacePart(blocks, p)
		if k == 0 {
			continue
		}
		if parts == nil {
			parts = slices.Clone(m.Parts)
		}
		parts[i] = red
		n += k
	}
	var msgErr *loom.MessageError
	if m.Error != nil {
		if s, k := replaceEchoes(blocks, m.Error.Message, ""); k > 0 {
			msgErr = &loom.MessageError{Message: s, Type: m.Error.Type}
			n += k
		}
	}
	if n == 0 {
		return m, 0
	}
	c := *m
	if parts != nil {
		c.Parts = parts
	}
	if msgErr != nil {
		c.Error = msgErr
	}
	return &c, n
}

// ReplaceSession returns s with the values of e replaced in its title,
// description and last prompt (a copy, when there were any), and how
// many it replaced; the last prompt's count only with countPrompt (it
// is a copy of a message's text, counted with the message's).
func (e *Echoes) ReplaceSession(s *loom.Session, countPrompt bool) (*loom.Session, int) {
	return replaceSession(e.snapshot(), s, countPrompt)
}

func replaceSession(blocks []*echoBlock, s *loom.Session, countPrompt bool) (*loom.Session, int) {
	if len(blocks) == 0 || s == nil {
		return s, 0
	}
	c := *s
	var a, b, p int
	c.Title, a = replaceEchoes(blocks, s.Title, "")
	c.Description, b = replaceEchoes(blocks, s.Description, "")
	c.LastPrompt, p = replaceEchoes(blocks, s.LastPrompt, "")
	if a+b+p == 0 {
		return s, 0
	}
	if !countPrompt {
		p = 0
	}
	return &c, a + b + p
}
