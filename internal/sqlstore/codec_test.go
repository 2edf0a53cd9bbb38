package sqlstore_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
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
		// A compaction summary: one text part that carries metadata.
		{{Type: loom.PartText, Text: "the summary", Metadata: json.RawMessage(`{"trigger":"auto","preTokens":155000}`)}},
		{{Type: loom.PartReasoning, Text: "thought", Metadata: json.RawMessage(`{"signature":"sig"}`)}},
	} {
		m := &loom.Message{Role: loom.RoleUser, Parts: parts}
		stored, text, err := sqlstore.EncodeBody(m)
		if err != nil {
			t.Fatal(err)
		}
		if text != m.SearchText() {
			t.Errorf("%s: text %q, want the search text %q", stored, text, m.SearchText())
		}
		once := len(parts) == 1 && parts[0].Text != "" && parts[0].Metadata == nil
		if once && strings.Contains(stored, `"text":`) {
			t.Errorf("a text-only message keeps its text twice: %s", stored)
		}
		got, err := sqlstore.DecodeParts([]byte(stored))
		if err != nil {
			t.Fatal(err)
		}
		sqlstore.JoinText(got, []byte(text))
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

// DecodeParts reads the parts of a text-only message without the JSON
// decoder; whatever the bytes, it must read what the decoder reads, and
// refuse what the decoder refuses.
func FuzzDecodeParts(f *testing.F) {
	for _, s := range []string{
		`[{"id":"prt_1","type":"text"}]`,
		`[{"id":"prt_1","type":"reasoning"}]`,
		`[{"id":"a\"b","type":"text"}]`,
		`[{"id":"é","type":"text"}]`,
		`[{"id":"","type":"text"}]`,
		`[{"id":"x","type":"text","text":"hi"}]`,
		`[{"id":"x","type":"text"},{"id":"y","type":"text"}]`,
		`[{"id":"x", "type":"text"}]`,
		`[{"id":"x","type":"text"}] `,
		`[{"id":"x","type":"text"`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := sqlstore.DecodeParts(b)
		var want []loom.Part
		werr := gojson.Unmarshal(b, &want)
		if (err != nil) != (werr != nil) {
			t.Fatalf("%q: error %v, the decoder's %v", b, err, werr)
		}
		if err == nil && len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: read %+v, the decoder %+v", b, got, want)
		}
	})
}
