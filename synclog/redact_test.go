package synclog

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// replacer is a Redactor that replaces one word.
type replacer struct{ word string }

func (r replacer) Redact(s string) (string, int) {
	return strings.ReplaceAll(s, r.word, "[REDACTED:x]"), strings.Count(s, r.word)
}

func (r replacer) RedactPart(p loom.Part) (loom.Part, int) {
	var n int
	p.Text, n = r.Redact(p.Text)
	return p, n
}

func (r replacer) RedactMessage(m *loom.Message) (*loom.Message, int) {
	c := *m
	c.Parts = append([]loom.Part(nil), m.Parts...)
	n := 0
	for i := range c.Parts {
		var k int
		c.Parts[i], k = r.RedactPart(c.Parts[i])
		n += k
	}
	return &c, n
}

func (r replacer) RedactSession(s *loom.Session) (*loom.Session, int) {
	c := *s
	var a, b int
	c.Title, a = r.Redact(s.Title)
	c.LastPrompt, b = r.Redact(s.LastPrompt)
	return &c, a + b
}

// Every record that carries a session's text is redacted in it, only
// for the sessions in scope, and stays the same record (the same ids
// and seq numbers); a record redacted keeps, for the comparison with
// the hub's copy, the digest of what it was.
func TestRedactRecords(t *testing.T) {
	r := replacer{"SECRETWORD"}
	in := func(string) bool { return true }
	out := func(string) bool { return false }
	at := ptr(t0)
	title := "about SECRETWORD"
	s := row("01900000-0000-7000-8000-000000000001")
	s.Title = title
	m := &loom.Message{ID: "m1", SessionID: s.ID, Seq: 1, Role: loom.RoleUser, CreatedAt: t0,
		Parts: []loom.Part{{ID: "p1", Type: loom.PartText, Text: "the SECRETWORD here"}}}
	for _, p := range []Payload{
		&SessionCreated{Session: s},
		&SessionChanged{SessionID: s.ID, Title: &title, At: at},
		&MessagesAppended{SessionID: s.ID, FirstSeq: 1, Messages: []*loom.Message{m}, At: t0},
		&PartUpdated{SessionID: s.ID, Seq: 1, MessageID: "m1", Part: m.Parts[0]},
		&Imported{Sessions: []*loom.SessionData{{Session: s, Messages: []*loom.Message{m}}}},
	} {
		b := mustEncode(t, p)
		if got, err := RedactEncoded([][]byte{b}, r, out); err != nil || got != nil {
			t.Errorf("%s out of scope: %v, %v", p.Type(), got, err)
		}
		got, err := RedactEncoded([][]byte{b}, r, in)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %v, %v", p.Type(), got, err)
		}
		q, err := Decode(got[0])
		if err != nil {
			t.Fatal(err)
		}
		if js, _ := json.Marshal(q); strings.Contains(string(js), "SECRETWORD") || !strings.Contains(string(js), "[REDACTED:x]") {
			t.Errorf("%s redacted: %s", p.Type(), js)
		}
		if again, err := RedactEncoded(got, r, in); err != nil || again != nil {
			t.Errorf("%s redacted again: %v, %v", p.Type(), again, err)
		}
		d := sha256.Sum256(b)
		rec := LogRecord{Payload: got[0], Was: append(make([]byte, DigestSize), d[:]...)}
		if !rec.Holds(b) || !rec.Holds(got[0]) || rec.Holds(mustEncode(t, &Restored{SessionIDs: []string{s.ID}})) {
			t.Errorf("%s: Holds does not tell the record's forms from another", p.Type())
		}
	}
}

// A record written as fragments is written again as as many fragments.
func TestRedactFragments(t *testing.T) {
	// Random letters compress to 6 bits of 8: a payload of 24 MiB of
	// them is more than a record holds.
	noise := make([]byte, 24<<20)
	rand.Read(noise)
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i, c := range noise {
		noise[i] = letters[c&63]
	}
	text := "SECRETWORD " + string(noise)
	m := &loom.Message{ID: "m1", SessionID: "01900000-0000-7000-8000-000000000001", Seq: 1, Role: loom.RoleUser, CreatedAt: t0,
		Parts: []loom.Part{{ID: "p1", Type: loom.PartText, Text: text}}}
	frags := Split(mustEncode(t, &MessagesAppended{SessionID: m.SessionID, FirstSeq: 1, Messages: []*loom.Message{m}, At: t0}))
	if len(frags) < 2 {
		t.Fatalf("%d fragments", len(frags))
	}
	got, err := RedactEncoded(frags, replacer{"SECRETWORD"}, func(string) bool { return true })
	if err != nil || len(got) != len(frags) {
		t.Fatalf("%d fragments redacted of %d, %v", len(got), len(frags), err)
	}
	var parts []*Fragment
	for _, b := range got {
		p, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p.(*Fragment))
	}
	whole, err := Join(parts)
	if err != nil {
		t.Fatal(err)
	}
	if txt := whole.(*MessagesAppended).Messages[0].Text(); !strings.HasPrefix(txt, "[REDACTED:x] ") {
		t.Errorf("joined again: %.40q", txt)
	}
	if _, err := SplitInto(make([]byte, 3), 4); err == nil {
		t.Error("3 bytes split into 4 fragments")
	}
}
