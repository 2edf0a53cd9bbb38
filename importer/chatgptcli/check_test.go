package chatgptcli

import (
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
	res := importertest.ReadSessions(t, Format{}, root, 2)
	s := importertest.Session(t, res, "work")
	importertest.CheckTexts(t, s, loom.RoleUser, "Say hello in one line.", "One more on the greeting?")
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Hello there.\n", "Continued and answering.")
	if importertest.Roles(s) != "system user assistant user assistant" || s.Title != "work" || !s.UpdatedAt.After(s.CreatedAt) {
		t.Errorf("roles %s, title %q, %s to %s", importertest.Roles(s), s.Title, s.CreatedAt, s.UpdatedAt)
	}
	s = importertest.Session(t, res, "notes")
	importertest.CheckTexts(t, s, loom.RoleSystem, "You answer in few words.")
	importertest.CheckNoUsage(t, s)
}
