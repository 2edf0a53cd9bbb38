package chatgpttui

import (
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// checkRead checks what the reader makes of the conversations.json of
// TestRealChatGPTTUI's run under root: two conversations, each prompt
// as typed and each reply as answered, of the conversation's model; no
// usage (chatgpt keeps none).
func checkRead(t *testing.T, root string) *importer.Result {
	t.Helper()
	res := importertest.ReadSessions(t, Format{}, root, 2)
	var texts [][]string
	for _, s := range res.Sessions {
		if !strings.HasPrefix(s.SourceID, "c-") || s.Model != "gpt-3.5-turbo" || importertest.SumUsage(s) != (loom.Usage{}) {
			t.Errorf("session %s of %q, usage %+v", s.SourceID, s.Model, importertest.SumUsage(s))
		}
		texts = append(texts, append(importertest.Texts(s, loom.RoleUser), importertest.Texts(s, loom.RoleAssistant)...))
	}
	want := [][]string{
		{"Say hello in one line.", "One more on the greeting?", "Hello there.", "Continued and answering."},
		{"What is in a list of alpha and beta?", "Alpha and beta."},
	}
	if !slices.EqualFunc(texts, want, slices.Equal) {
		t.Errorf("texts %q", texts)
	}
	return res
}
