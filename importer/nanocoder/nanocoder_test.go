package nanocoder

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is what Nanocoder 1.30.0 (npm's
// @nanocollective/nanocoder, `nanocoder run --no-plain` on a terminal
// against a fake model on the Chat Completions API, as
// TestImportRealNanocoder in cli/session/realclis runs it) wrote in its
// sessions directory, the home directory renamed /home/u: a prompt with
// reasoning (work), and one whose turn reads a file (other), with the
// index sessions.json beside them.
var (
	real  = filepath.Join("testdata", "real")
	work  = "96d50ed0-93b8-4237-99e0-fdb2d73d4b75"
	other = "d174a3e1-c67e-42b1-b0e7-20cc676d3d0c"
	file  = filepath.Join(real, work+".json")
)

// Each prompt and reply as typed and answered, reasoning as reasoning,
// the read completed by the tool message's content, the session's
// title, folder, provider and model; the index is no session.
func TestRead(t *testing.T) {
	// Two sessions: sessions.json beside them is an index.
	res := importertest.ReadSessions(t, Format{}, real, 2)
	s := importertest.Session(t, res, work)
	importertest.CheckTexts(t, s, loom.RoleUser, "Say hello in one line.")
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Hello there.")
	if s.Title != "Say hello in one line." || s.Cwd != "/home/u/work" || s.Model != "gpt-fake" || s.Provider != "fake" || !s.UpdatedAt.After(s.CreatedAt) {
		t.Errorf("title %q, cwd %q, model %q of %q, %s to %s", s.Title, s.Cwd, s.Model, s.Provider, s.CreatedAt, s.UpdatedAt)
	}
	s = importertest.Session(t, res, other)
	if tl := importertest.TallyOf(s); tl.Reasoning != 2 {
		t.Errorf("%+v, want two reasoning parts", tl)
	}
	importertest.CheckOneCall(t, s, "user assistant assistant", func(p loom.Part) bool {
		return p.Name == "read_file" && string(p.Output) == `"alpha\nbeta\n"`
	})
	importertest.CheckNoUsage(t, s)
}

// Nanocoder rewrites the document after each turn: a turn more is read
// as two messages more, the earlier ones unchanged.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollowsList(t, Format{}, real, 2, 5, work+".json", "messages",
		map[string]any{"role": "user", "content": "Thanks"}, map[string]any{"role": "assistant", "content": "You are welcome."})
}

// A document that is not JSON (cut off as it was written) is one
// problem naming the file, and no session.
func TestReadCut(t *testing.T) {
	data := importertest.ReadBytes(t, file)
	importertest.ReadsAsOneProblem(t, Format{}, work+".json", data[:len(data)/2])
}
