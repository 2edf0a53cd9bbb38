package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/importer/windsurf"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// installTrajectories puts the windsurf reader's sample trajectories, a
// Markdown file that is none, and a trajectory of the fixture's project
// in the fixture's Downloads folder, and returns the folder and the
// project's trajectory.
func installTrajectories(t *testing.T, fx *clitest.Fixture) (dir, own string) {
	t.Helper()
	dir = filepath.Join(fx.Home, "Downloads")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	samples, _ := filepath.Glob(filepath.Join("..", "..", "importer", "windsurf", "testdata", "*.md"))
	if len(samples) != 4 {
		t.Fatalf("samples %v", samples)
	}
	for _, p := range samples {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644)
	}
	own = filepath.Join(dir, "Fix main.md")
	text := "# Chat Conversation\n\nNote: _This is purely the output of the chat conversation and does not contain any raw data, codebase snippets, etc. used to generate the output._\n\n### User Input\n\nfix the crash in main.go\n\n### Planner Response\n\n*Viewed [main.go](file://" + filepath.ToSlash(fx.Project) + "/main.go) *\n\nFixed it: kumquatlute was nil.\n"
	if err := os.WriteFile(own, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, own
}

// `--from windsurf PATH` imports a folder of downloaded trajectories,
// once, passing over the Markdown that is no trajectory; a trajectory
// is in the project whose files it names; $LOOM_WINDSURF_DIR makes the
// folder windsurf's location for --from list and --from all.
func TestImportWindsurf(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	dir, _ := installTrajectories(t, fx)

	tr := clitest.ToolReport(t, clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "windsurf", dir, "--json")), "windsurf")
	if tr.FilesRead != 5 || tr.SessionsNew != 4 || tr.MessagesAdded != 7+3+5+2 || tr.ProblemCount != 0 || tr.Skipped["not-a-trajectory"] != 1 {
		t.Fatalf("first import: %+v", tr)
	}
	list := clitest.DecodeJSON[[]*loom.Session](t, fx.MustExec(t, "session", "list", "--surface", "windsurf", "--json"))
	if len(list) != 1 || list[0].Title != "fix the crash in main.go" || list[0].Project.ID != fx.Proj.ID {
		t.Fatalf("listed in the project: %+v", list)
	}
	if out := fx.MustExec(t, "search", "kumquatlute", "--json"); !strings.Contains(out, list[0].ID) {
		t.Fatalf("the reply is not searchable: %s", out)
	}
	tr = clitest.ToolReport(t, clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "windsurf", dir, "--json")), "windsurf")
	if tr.FilesUnchanged != 5 || tr.MessagesAdded != 0 || tr.SessionsNew != 0 {
		t.Fatalf("second import: %+v", tr)
	}

	// One Markdown file named that is no trajectory is refused.
	r := fx.Exec(t, "", "session", "import", "--from", "windsurf", filepath.Join(dir, "notes.md"))
	if r.Code != cli.ExitError || !strings.Contains(r.Stdout+r.Stderr, "not a session file of windsurf") {
		t.Errorf("a file that is no trajectory named: exit %d, %s%s", r.Code, r.Stdout, r.Stderr)
	}

	row := func() string {
		for _, l := range strings.Split(fx.MustExec(t, "session", "import", "--from", "list"), "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == windsurf.Tool {
				return l
			}
		}
		t.Fatal("no windsurf row in --from list")
		return ""
	}
	if r := row(); !strings.Contains(r, "no location of its own") {
		t.Errorf("without %s: %q", windsurf.DirEnv, r)
	}
	fx.ExtraEnv = []string{windsurf.DirEnv + "=" + dir}
	// The table names a place under HOME with ~, as a user's shell does.
	if r := row(); !strings.Contains(r, "~/Downloads") || !strings.Contains(r, " 5 ") {
		t.Errorf("with %s: %q", windsurf.DirEnv, r)
	}
	rep := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "all", "--json"))
	if tr := clitest.ToolReport(t, rep, windsurf.Tool); tr.RootsFound != 1 || tr.FilesUnchanged != 5 || tr.SessionsNew != 0 {
		t.Errorf("--from all: %+v", tr)
	}
}

// --watch on the folder follows a trajectory downloaded again over its
// file with a turn more: exactly its two messages are added.
func TestImportWindsurfWatch(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	dir, own := installTrajectories(t, fx)
	reports := fx.WatchImports(t, windsurf.Tool, dir)
	select {
	case rep := <-reports:
		if tr := clitest.ToolReport(t, rep, windsurf.Tool); tr.SessionsNew != 4 {
			t.Fatalf("first watch run: %+v", tr)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("--watch printed no first report")
	}
	b, err := os.ReadFile(own)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "\n### User Input\n\nand add a test\n\n### Planner Response\n\n*Edited relevant file*\n\nAdded one: marmotviola.\n"...)
	if err := os.WriteFile(own+".part", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(own+".part", own); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case rep, ok := <-reports:
			if !ok {
				t.Fatal("--watch ended")
			}
			tr := clitest.ToolReport(t, rep, windsurf.Tool)
			if tr.MessagesAdded == 0 {
				continue
			}
			if tr.MessagesAdded != 2 || tr.SessionsGrown != 1 || tr.SessionsNew != 0 {
				t.Fatalf("watch run after the download: %+v", tr)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("--watch did not import the grown trajectory")
		}
		break
	}
	if out := fx.MustExec(t, "search", "marmotviola", "--json"); !strings.Contains(out, "windsurf") {
		t.Fatalf("the new reply is not searchable: %s", out)
	}
}
