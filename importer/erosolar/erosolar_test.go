package erosolar

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is what erosolar-cli 2.1.315 (its interactive shell on
// a terminal, its openai provider against a fake model on the Responses
// API, as TestImportRealErosolar in cli/session/realclis runs it) wrote
// in ~/.erosolar/sessions, the home directory renamed /home/u: a
// greeting, then a read_file of notes.txt, saved by `/sessions save
// Greeting`, with the index index.json beside it.
var (
	real = filepath.Join("testdata", "real")
	id   = "3bd4e9a3-a70e-421c-b5c6-c1f53a37140b"
	file = filepath.Join(real, id+".json")
)

// Each prompt and reply as typed and answered, the read completed by
// the tool message's content, the session's title, folder, provider
// and model; the index is no session.
func TestRead(t *testing.T) {
	// One session: index.json beside it is an index.
	res := importertest.ReadSessions(t, Format{}, real, 1)
	s := importertest.Session(t, res, id)
	importertest.CheckTexts(t, s, loom.RoleUser, "Say hello in one line.", "What is in notes.txt?")
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Hello there.", "It says alpha and beta.")
	if s.Title != "Greeting" || s.Cwd != "/home/u/work" || s.Model != "gpt-fake" || s.Provider != "openai" {
		t.Errorf("title %q, cwd %q, model %q of %q", s.Title, s.Cwd, s.Model, s.Provider)
	}
	importertest.CheckOneCall(t, s, "system user assistant user assistant assistant", func(p loom.Part) bool {
		return p.Name == "read_file" && string(p.Input) == `{"path":"notes.txt"}` && strings.Contains(string(p.Output), `1\talpha`)
	})
	importertest.CheckNoUsage(t, s)
}

// A profile's autosave, which the next conversation overwrites and
// Erosolar lists with no session, is not read.
func TestAutosaveNotRead(t *testing.T) {
	root := importertest.CopyDir(t, real)
	data := importertest.ReadBytes(t, file)
	importertest.WriteFile(t, filepath.Join(root, "erosolar-code-autosave.json"), data, 0o600)
	if res := importertest.ReadAll(t, Format{}, root); len(res.Sessions) != 1 {
		t.Errorf("%d sessions, want 1", len(res.Sessions))
	}
}

// Saving again writes the whole document again: a turn more is read as
// two messages more, the earlier ones unchanged.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollowsList(t, Format{}, real, 1, 6, id+".json", "messages",
		map[string]any{"role": "user", "content": "Thanks"}, map[string]any{"role": "assistant", "content": "You are welcome."})
}
