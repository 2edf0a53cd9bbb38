package opencodego

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// checkRead checks what the reader makes of the databases of
// TestRealOpenCodeGo's runs under root (work/.opencode/opencode.db,
// other/.opencode/opencode.db): each prompt as typed and each reply as
// answered with its model, the title OpenCode asked the model for, the
// project as the folder, the view call completed by its result, and
// the tokens of the session's last call, as OpenCode keeps them.
func checkRead(t *testing.T, root string) *importer.Result {
	t.Helper()
	res := importertest.ReadSessions(t, Format{}, root, 2)
	byDir := map[string]*importer.Session{}
	for _, s := range res.Sessions {
		byDir[s.Cwd[strings.LastIndexByte(s.Cwd, '/')+1:]] = s
	}
	work, other := byDir["work"], byDir["other"]
	if work == nil || other == nil {
		t.Fatalf("sessions in %q and %q", res.Sessions[0].Cwd, res.Sessions[1].Cwd)
	}
	importertest.CheckTexts(t, work, loom.RoleUser, "Say hello in one line.")
	importertest.CheckTexts(t, work, loom.RoleAssistant, "Hello there.")
	if work.Title != "A short title" || work.Messages[1].Model != "local.fake-model" {
		t.Errorf("title %q, model %q", work.Title, work.Messages[1].Model)
	}
	if u := importertest.SumUsage(work); u.InputTokens != 1000 || u.OutputTokens != 15 {
		t.Errorf("usage %+v, want the call's 1000 in and 15 out", u)
	}
	importertest.CheckTexts(t, other, loom.RoleAssistant, "It says alpha and beta.")
	importertest.CheckOneCall(t, other, "user assistant assistant", func(p loom.Part) bool {
		return p.Name == "view" && strings.Contains(string(p.Output), `1|alpha\n     2|beta`) && strings.Contains(string(p.Input), "notes.txt")
	})
	return res
}
