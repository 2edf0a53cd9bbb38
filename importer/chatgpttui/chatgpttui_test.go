package chatgpttui

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is the conversations.json j178's chatgpt v1.3.5 (built
// with the go command from the Go module proxy, run on a terminal
// against a fake model on the Chat Completions API, as
// TestRealChatGPTTUI runs it) saved when it quit: a conversation of two
// questions, and one of one.
var real = filepath.Join("testdata", "real")

func TestRead(t *testing.T) { checkRead(t, real) }

// chatgpt writes the document again: a question more is two messages
// more in its conversation; a pair that falls out of the context window
// (to forgotten) and a conversation removed before it change no id.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 2, 6)
	root := importertest.CopyDir(t, real)
	path := filepath.Join(root, file)
	before := importertest.ReadAll(t, Format{}, root)
	edit := func(f func(cs []any) []any) {
		importertest.EditJSON(t, path, func(doc map[string]any) { doc["conversations"] = f(doc["conversations"].([]any)) })
	}
	importertest.Follows(t, Format{}, root, func() {
		edit(func(cs []any) []any {
			c := cs[1].(map[string]any)
			c["context"] = append(c["context"].([]any), map[string]any{"question": "Thanks", "answer": "You are welcome."})
			return cs
		})
	}, 2)
	edit(func(cs []any) []any {
		c := cs[1].(map[string]any)
		ctx := c["context"].([]any)
		c["forgotten"], c["context"] = ctx[:1], ctx[1:]
		return cs[1:]
	})
	after := importertest.ReadAll(t, Format{}, root)
	if len(after.Sessions) != 1 || after.Sessions[0].SourceID != before.Sessions[1].SourceID || len(after.Sessions[0].Messages) != 4 {
		t.Errorf("after a removal and a forgotten pair: %d sessions, %s (was %s)", len(after.Sessions), after.Sessions[0].SourceID, before.Sessions[1].SourceID)
	}
	for i, m := range after.Sessions[0].Messages[:2] {
		if m.ID != before.Sessions[1].Messages[i].ID {
			t.Errorf("message %d is %s, was %s", i, m.ID, before.Sessions[1].Messages[i].ID)
		}
	}
}

// A document that is not JSON (cut off as it was written), or JSON
// without conversations, is one problem naming the file.
func TestReadNotConversations(t *testing.T) {
	data := importertest.ReadBytes(t, filepath.Join(real, file))
	for _, bad := range [][]byte{data[:len(data)/2], []byte(`{"api_key": "x"}`)} {
		importertest.ReadsAsOneProblem(t, Format{}, file, bad)
	}
}

// `--from list` counts each conversation of the one file, as the import
// makes them sessions.
func TestCountSessions(t *testing.T) {
	bs := []importer.Bundle{importertest.OneBundle(t, Format{}, real)}
	if n, err := importer.CountSessions(context.Background(), Format{}, bs); n != 2 || err != nil {
		t.Errorf("counted %d, %v; want 2", n, err)
	}
}
