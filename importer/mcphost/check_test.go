package mcphost

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// checkRead checks what the reader makes of the files of
// TestRealMCPHost's runs under root (work/hello.json, other/notes.json):
// each prompt as typed and each reply as answered, the continued
// session one session, the read completed by the text of the MCP
// server's result, the model and provider of the metadata, no usage.
func checkRead(t *testing.T, root string) *importer.Result {
	t.Helper()
	res := importertest.ReadSessions(t, Format{}, root, 2)
	var hello, notes *importer.Session
	for _, s := range res.Sessions {
		switch {
		case strings.HasPrefix(s.SourceID, "hello-"):
			hello = s
		case strings.HasPrefix(s.SourceID, "notes-"):
			notes = s
		}
	}
	if hello == nil || notes == nil {
		t.Fatalf("sessions %q, %q", res.Sessions[0].SourceID, res.Sessions[1].SourceID)
	}
	importertest.CheckTexts(t, hello, loom.RoleUser, "Say hello in one line.", "One more on the greeting?")
	importertest.CheckTexts(t, hello, loom.RoleAssistant, "Hello there.", "Continued and answering.")
	if hello.Model != "gpt-fake" || hello.Provider != "openai" || hello.Messages[1].Model != "gpt-fake" {
		t.Errorf("model %q of %q, reply's %q", hello.Model, hello.Provider, hello.Messages[1].Model)
	}
	importertest.CheckOneCall(t, notes, "user assistant assistant", func(p loom.Part) bool {
		return p.Name == "files__read_file" && string(p.Output) == `"alpha\nbeta\n"` && strings.Contains(string(p.Input), "notes.txt")
	})
	importertest.CheckNoUsage(t, notes)
	return res
}
