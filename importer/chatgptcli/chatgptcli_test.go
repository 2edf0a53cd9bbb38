package chatgptcli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is what ChatGPT CLI v1.10.11 (`chatgpt --thread NAME
// PROMPT`, built with the go command from the Go module proxy, against
// a fake model on the Chat Completions API, as TestRealChatGPTCLI runs
// it) wrote in its history directory: the thread work of two runs (a
// streamed reply and one of query mode, -q) and the thread notes with
// a role of the user's (--role).
var (
	real = filepath.Join("testdata", "real")
	file = filepath.Join(real, "work.json")
)

func TestRead(t *testing.T) { checkRead(t, real) }

// ChatGPT CLI writes the document again after each reply: a turn more
// is two messages more; and when the thread outgrows its context
// window it drops the oldest messages but the role: the messages kept
// keep their ids, so nothing is read twice.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 2, 8)
	root := importertest.CopyDir(t, real)
	path := filepath.Join(root, "work.json")
	edit := func(f func([]any) []any) {
		data := importertest.ReadBytes(t, path)
		var doc []any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		data, _ = json.Marshal(f(doc))
		importertest.WriteFile(t, path, data, 0o600)
	}
	importertest.Follows(t, Format{}, root, func() {
		edit(func(doc []any) []any {
			return append(doc,
				map[string]any{"role": "user", "content": "Thanks", "timestamp": "2026-11-27T20:30:00.1Z"},
				map[string]any{"role": "assistant", "content": "You are welcome.", "timestamp": "2026-11-27T20:30:00.2Z"})
		})
	}, 2)
	before := importertest.SessionOf(t, Format{}, root, "work", "system user assistant user assistant user assistant")
	edit(func(doc []any) []any { return append(doc[:1], doc[3:]...) })
	after := importertest.SessionOf(t, Format{}, root, "work", "system user assistant user assistant")
	for _, m := range after.Messages {
		if !slices.ContainsFunc(before.Messages, func(b *loom.Message) bool { return b.ID == m.ID }) {
			t.Errorf("message %s is new once older ones were dropped", m.ID)
		}
	}
}

// A document that is not JSON (cut off as it was written) is one
// problem naming the file, and no session.
func TestReadCut(t *testing.T) {
	data := importertest.ReadBytes(t, file)
	importertest.ReadsAsOneProblem(t, Format{}, "work.json", data[:len(data)/2])
}
