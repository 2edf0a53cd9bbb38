package synclog

import (
	"encoding/binary"
	"fmt"

	"github.com/loomhq/loom"
)

// Redactor replaces the secrets of texts by markers, as `loom secrets
// redact` does in the store (secrets.Detector is one): each returns the
// text redacted (a copy when it changed) and how many secrets it
// replaced.
type Redactor interface {
	Redact(text string) (string, int)
	RedactPart(p loom.Part) (loom.Part, int)
	RedactMessage(m *loom.Message) (*loom.Message, int)
	RedactSession(s *loom.Session) (*loom.Session, int)
}

// Redact replaces in p, a payload decoded for this purpose, the secrets
// r finds in the texts of the sessions scope takes (by id), with the
// markers the store's redaction writes: titles, descriptions and last
// prompts of session rows, metadata changes of title and description,
// the parts of appended, updated and imported messages. It reports
// whether it replaced any. What the record does stays the same: the
// same ids, seq numbers and stamps, so every host applies the redacted
// record as it applied the original, with the text redacted.
func Redact(p Payload, r Redactor, scope func(id string) bool) bool {
	n := 0
	session := func(s **loom.Session) {
		if *s == nil || !scope((*s).ID) {
			return
		}
		var k int
		if *s, k = r.RedactSession(*s); k > 0 {
			n += k
		}
	}
	text := func(s *string) {
		if s == nil {
			return
		}
		var k int
		*s, k = r.Redact(*s)
		n += k
	}
	messages := func(ms []*loom.Message) {
		for i, m := range ms {
			var k int
			ms[i], k = r.RedactMessage(m)
			n += k
		}
	}
	switch p := p.(type) {
	case *SessionCreated:
		session(&p.Session)
	case *SessionChanged:
		if scope(p.SessionID) {
			text(p.Title)
			text(p.Description)
		}
	case *MessagesAppended:
		if scope(p.SessionID) {
			messages(p.Messages)
		}
	case *PartUpdated:
		if scope(p.SessionID) {
			var k int
			p.Part, k = r.RedactPart(p.Part)
			n += k
		}
	case *Forked:
		session(&p.Session)
	case *Rewound:
		if p.Fork != nil && (scope(p.SessionID) || scope(p.Fork.ID)) {
			var k int
			p.Fork, k = r.RedactSession(p.Fork)
			n += k
		}
	case *Imported:
		for _, sd := range p.Sessions {
			if sd == nil || sd.Session == nil || !scope(sd.Session.ID) {
				continue
			}
			session(&sd.Session)
			messages(sd.Messages)
		}
	case *OriginalKept:
		if scope(p.SessionID) {
			n += redactOriginal(p, r)
		}
	}
	return n > 0
}

// redactOriginal replaces the secrets of the bytes p keeps, as the store
// rewrites its kept chunk; a chunk that does not expand is left as it
// is.
func redactOriginal(p *OriginalKept, r Redactor) int {
	dec, err := zstdDecoder()
	if err != nil {
		return 0
	}
	b, err := dec.DecodeAll(p.Data, nil)
	if err != nil {
		return 0
	}
	red, k := r.Redact(string(b))
	if k == 0 {
		return 0
	}
	enc, err := zstdEncoder()
	if err != nil {
		return 0
	}
	p.Data = enc.EncodeAll([]byte(red), nil)
	return k
}

// RedactEncoded is Redact of the payloads Encode wrote, as a store's log
// keeps them: one record's, or the fragments of one (TypeFragment, in
// order), which it returns as as many fragments again, so that the
// record keeps its indexes. It returns the payloads redacted, or nil
// when nothing changed. A payload this loom cannot decode is left as it
// is.
func RedactEncoded(payloads [][]byte, r Redactor, scope func(id string) bool) ([][]byte, error) {
	if len(payloads) == 0 {
		return nil, nil
	}
	var whole []byte
	if len(payloads) == 1 {
		whole = payloads[0]
	} else {
		for i, b := range payloads {
			f, err := Decode(b)
			fr, ok := f.(*Fragment)
			if err != nil || !ok || fr.Part != uint32(i+1) || fr.Of != uint32(len(payloads)) {
				return nil, nil
			}
			whole = append(whole, fr.Data...)
		}
	}
	p, err := Decode(whole)
	if err != nil || p.Type() == TypeFragment {
		return nil, nil
	}
	if !Redact(p, r, scope) {
		return nil, nil
	}
	out, err := Encode(p)
	if err != nil {
		return nil, fmt.Errorf("encode the redacted %s record: %w", p.Type(), err)
	}
	if len(payloads) == 1 {
		if len(out) > MaxRecord {
			return nil, fmt.Errorf("the redacted %s record is %d bytes, more than a record holds", p.Type(), len(out))
		}
		return [][]byte{out}, nil
	}
	return SplitInto(out, len(payloads))
}

// SplitInto is Split of b into exactly of fragments, of nearly equal
// size: what a redacted record written as fragments is written again
// as, keeping its indexes. It fails when a fragment would be larger
// than FragmentSize.
func SplitInto(b []byte, of int) ([][]byte, error) {
	if of < 2 || len(b) < of || (len(b)+of-1)/of > FragmentSize {
		return nil, fmt.Errorf("a payload of %d bytes does not make %d fragments", len(b), of)
	}
	out := make([][]byte, 0, of)
	for i := range of {
		data := b[i*len(b)/of : (i+1)*len(b)/of]
		e := make([]byte, prefixSize+8, prefixSize+8+len(data))
		e[0], e[1], e[2] = FormatVersion, byte(TypeFragment), codecRaw
		binary.BigEndian.PutUint32(e[3:], uint32(i+1))
		binary.BigEndian.PutUint32(e[7:], uint32(of))
		out = append(out, append(e, data...))
	}
	return out, nil
}
