package clitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	clineim "github.com/loomhq/loom/importer/cline"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/continuedev"
	copilotim "github.com/loomhq/loom/importer/copilot"
	droidim "github.com/loomhq/loom/importer/droid"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/opencode"
	piim "github.com/loomhq/loom/importer/pi"
	qwenim "github.com/loomhq/loom/importer/qwen"
)

func AllFormats(f *cli.Factory) {
	f.Formats = []importer.Format{claudecode.Format{}, clineim.Format{}, codex.Format{}, continuedev.Format{}, copilotim.Format{}, droidim.Format{},
		gemini.Format{}, opencode.Kilo, opencode.Format{}, piim.Format{}, qwenim.Format{}}
}

// HandoffJSON is what `session handoff --json` prints.
type HandoffJSON struct {
	Tool        string         `json:"tool"`
	Path        string         `json:"path"`
	SessionID   string         `json:"session_id"`
	Resume      string         `json:"resume"`
	From        string         `json:"from_session_id"`
	Dir         string         `json:"dir"`
	Messages    int            `json:"messages"`
	ToolCalls   int            `json:"tool_calls"`
	ToolRecords int            `json:"tool_records"`
	Dropped     map[string]int `json:"dropped"`
	FirstTurn   int            `json:"first_turn"`
	LastTurn    int            `json:"last_turn"`
	Turns       int            `json:"turns"`
	Redacted    int            `json:"redacted"`
}

// SourceSession is the session a test hands off: loom's own main
// session (tool "loom"), or the longest main session imported from path
// with tool's reader. The test is skipped when path is not there.
func (fx *Fixture) SourceSession(t *testing.T, tool, path string) *loom.Session {
	t.Helper()
	if tool == "loom" {
		return fx.Main
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Skipf("no sample files of %s here: %v", tool, err)
	}
	r := fx.RunWith(t, RunOpts{Before: AllFormats}, "session", "import", "--from", tool, abs)
	if r.Code != 0 {
		t.Fatalf("import %s: exit %d: %s", tool, r.Code, r.Stderr)
	}
	ss := DecodeJSON[[]*loom.Session](t, fx.MustRun(t, "session", "list", "-a", "--surface", tool, "--json"))
	var best *loom.Session
	for _, s := range ss {
		if s.Kind == loom.KindMain && (best == nil || s.MessageCount > best.MessageCount) {
			best = s
		}
	}
	if best == nil {
		t.Fatalf("nothing imported from %s", path)
	}
	return best
}
