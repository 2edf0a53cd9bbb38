package openinterpreter

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real/conversations/How_many_lines_does__November_27_2026_21-42-52.json
// was written by Open Interpreter 0.4.3's own OpenInterpreter.chat, run
// from its source at commit dcfcffa9af13737bee1fa128364a718b56324998 by
// testdata/gen.py, with the model's replies given as litellm streams
// them (testdata/stubs): a prompt answered with shell code (wc -l
// notes.txt, run for real by its terminal) and a reply, then a second
// prompt and its reply.
var (
	real = filepath.Join("testdata", "real", "conversations")
	id   = "How_many_lines_does__November_27_2026_21-42-52"
	file = filepath.Join(real, id+".json")
)

// Both prompts as typed, the replies, and the code as an execute call
// completed with what it printed; every message at the time the file's
// name gives.
func TestRead(t *testing.T) {
	res := importertest.ReadClean(t, Format{}, real, 1)
	s := importertest.Session(t, res, id)
	importertest.CheckRoles(t, s, "user assistant assistant user assistant")
	importertest.CheckTexts(t, s, loom.RoleUser, "How many lines does notes.txt have?", "And what is the first one?")
	importertest.CheckTexts(t, s, loom.RoleAssistant, "notes.txt has 2 lines. ", "The first line is: buy milk. ")
	if calls := importertest.Calls(s); !slices.Equal(calls, []string{`execute completed {"code":"wc -l notes.txt","language":"shell"} "\n2 notes.txt\n"`}) {
		t.Errorf("calls %q", calls)
	}
	if want := savedAt(file); want.IsZero() || !s.CreatedAt.Equal(want) || want.Year() != 2026 {
		t.Errorf("created %v, want the name's time %v", s.CreatedAt, want)
	}
}

// The default place is the conversations directory in Open
// Interpreter's config directory.
func TestRoots(t *testing.T) {
	if got := (Format{}).Roots(func(string) string { return "" }, "/home/u"); got[0] != "/home/u/.config/open-interpreter/conversations" {
		t.Errorf("roots %q", got)
	}
	if got := (Format{}).Roots(func(k string) string { return map[string]string{"XDG_CONFIG_HOME": "/x"}[k] }, "/home/u"); !slices.Equal(got, []string{"/x/open-interpreter/conversations"}) {
		t.Errorf("roots with XDG_CONFIG_HOME %q", got)
	}
}

// A conversation is imported once: again, nothing changes.
func TestImportOnce(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 1, 5)
}
