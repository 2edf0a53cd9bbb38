package loom_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// EncodeBody keeps a text-only message's text once, in the search text,
// and JoinText gives it back; every other message's parts keep all they
// hold. Each reads back as it was written.
func TestEncodeBodyRoundTrip(t *testing.T) {
	for _, parts := range [][]loom.Part{
		{{Type: loom.PartText, Text: "hello \"quoted\"\nworld ✓"}},
		{{Type: loom.PartReasoning, Text: "thinking"}},
		{{Type: loom.PartText, Text: ""}},
		{},
		nil,
		{{Type: loom.PartText, Text: "a"}, {Type: loom.PartText, Text: "b"}},
		{{Type: loom.PartText, Text: "look"}, {Type: loom.PartTool, CallID: "c", Name: "ls", Input: json.RawMessage(`{"d":"."}`)}},
		{{Type: loom.PartFile, Filename: "x.png", Mime: "image/png"}},
	} {
		m := &loom.Message{Role: loom.RoleUser, Parts: parts}
		stored, text, err := loom.EncodeBody(m)
		if err != nil {
			t.Fatal(err)
		}
		if text != m.SearchText() {
			t.Errorf("%s: text %q, want the search text %q", stored, text, m.SearchText())
		}
		once := len(parts) == 1 && parts[0].Text != ""
		if once && strings.Contains(stored, `"text":`) {
			t.Errorf("a text-only message keeps its text twice: %s", stored)
		}
		got, err := loom.DecodeParts([]byte(stored))
		if err != nil {
			t.Fatal(err)
		}
		loom.JoinText(got, []byte(text))
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(m.Parts)
		if len(m.Parts) == 0 {
			b = []byte("[]")
			if got == nil {
				a = b
			}
		}
		if string(a) != string(b) {
			t.Errorf("read back %s, want %s", a, b)
		}
	}
}
