package chatgptcli

import (
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// checkRead checks what the reader makes of the threads of
// TestRealChatGPTCLI's runs under root: each prompt as typed and each
// reply as answered (a streamed one with the line break ChatGPT CLI
// printed after it), the role as a system message, the thread as the
// session's id and title; no usage (ChatGPT CLI keeps none).
func checkRead(t *testing.T, root string) {
	t.Helper()
	res := importertest.ReadAll(t, Format{}, root)
	importertest.CheckValidOf(t, Tool, res)
	if len(res.Sessions) != 2 {
		t.Fatalf("%d sessions, want 2", len(res.Sessions))
	}
	s := importertest.Session(t, res, "work")
	if got := importertest.Texts(s, loom.RoleUser); !slices.Equal(got, []string{"Say hello in one line.", "One more on the greeting?"}) {
		t.Errorf("prompts %q", got)
	}
	if got := importertest.Texts(s, loom.RoleAssistant); !slices.Equal(got, []string{"Hello there.\n", "Continued and answering."}) {
		t.Errorf("replies %q", got)
	}
	if importertest.Roles(s) != "system user assistant user assistant" || s.Title != "work" || !s.UpdatedAt.After(s.CreatedAt) {
		t.Errorf("roles %s, title %q, %s to %s", importertest.Roles(s), s.Title, s.CreatedAt, s.UpdatedAt)
	}
	s = importertest.Session(t, res, "notes")
	if got := importertest.Texts(s, loom.RoleSystem); !slices.Equal(got, []string{"You answer in few words."}) {
		t.Errorf("role %q", got)
	}
	if u := importertest.SumUsage(s); u != (loom.Usage{}) {
		t.Errorf("usage %+v from files that record none", u)
	}
}
