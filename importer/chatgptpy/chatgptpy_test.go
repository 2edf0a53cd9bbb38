package chatgptpy

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real/session-history holds the two files ChatGPT CLI's own
// chatgpt command wrote, run from its source at commit
// a6b83030ab553b6ef146a9c3789a1063076435d6 by testdata/gen.sh against
// testdata/fakemodel.py (the Chat Completions API on 127.0.0.1): a
// prompt and its reply, then the session continued with --restore last,
// saved to a new file that holds the first exchange again.
var (
	real   = filepath.Join("testdata", "real", "session-history")
	first  = filepath.Join(real, "chatgpt-session-20261127-214653.json")
	second = "chatgpt-session-20261127-214655"
)

// The prompts as typed and the replies as the API returned them, with
// the model; each file a session at the time its name gives.
func TestRead(t *testing.T) {
	res := importertest.ReadClean(t, Format{}, real, 2)
	s := importertest.Session(t, res, second)
	importertest.CheckRoles(t, s, "user assistant user assistant")
	importertest.CheckTexts(t, s, loom.RoleUser, "What is in notes.txt? It is my to-do list.\n", "It has two lines.\n")
	if got := importertest.Texts(s, loom.RoleAssistant); len(got) != 2 || got[1] != "Then it has two tasks." {
		t.Errorf("replies %q", got)
	}
	if want := time.Date(2026, 11, 27, 21, 46, 55, 0, time.UTC); !s.CreatedAt.Equal(want) || s.Model != "gpt-fake" || s.Messages[3].Model != "gpt-fake" {
		t.Errorf("created %v, model %q", s.CreatedAt, s.Model)
	}
}

// The default place is session-history in the config directory.
func TestRoots(t *testing.T) {
	if got := (Format{}).Roots(func(string) string { return "" }, "/home/u"); !slices.Equal(got, []string{"/home/u/.config/chatgpt-cli/session-history"}) {
		t.Errorf("roots %q", got)
	}
	if got := (Format{}).Roots(func(string) string { return "/x" }, "/home/u"); !slices.Equal(got, []string{"/x/chatgpt-cli/session-history"}) {
		t.Errorf("roots with XDG_CONFIG_HOME %q", got)
	}
}

// Imported once: again, nothing changes.
func TestImportOnce(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 2, 6)
}
