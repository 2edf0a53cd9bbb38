package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/importer/aider"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// installAiderHistory puts the aider reader's sample history, less its
// last run (which only quit), in the fixture's project, and returns its
// path.
func installAiderHistory(t *testing.T, fx *clitest.Fixture) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "importer", "aider", "testdata", "history.md"))
	if err != nil {
		t.Fatal(err)
	}
	b = b[:strings.LastIndex(string(b), "\n# aider chat started")]
	path := filepath.Join(fx.Project, aider.HistoryFile)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
	return path
}

// appendAiderTurn appends a prompt and its reply to a history, as Aider
// writes them.
func appendAiderTurn(t *testing.T, path, prompt, reply string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n#### " + prompt + "  \n\n" + reply + "\n\n> Tokens: 2.1k sent, 40 received. Cost: $0.01 message, $0.02 session.  \n"); err != nil {
		t.Fatal(err)
	}
}

// `--from aider PATH` imports each run of a project's history as a
// session of the project; a second import adds nothing; a turn Aider
// appended is added alone.
func TestImportAider(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	path := installAiderHistory(t, fx)

	tr := clitest.ToolReport(t, clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "aider", fx.Project, "--json")), "aider")
	if tr.FilesRead != 1 || tr.SessionsNew != 2 || tr.MessagesAdded != 13 || tr.ProblemCount != 0 || tr.Skipped["blank-prompt"] != 1 {
		t.Fatalf("first import: %+v", tr)
	}
	list := clitest.DecodeJSON[[]*loom.Session](t, fx.MustExec(t, "session", "list", "--surface", "aider", "--json"))
	if len(list) != 2 || list[0].Title != "rename greet to welcome in greet.py" || list[0].Project.ID != fx.Proj.ID {
		t.Fatalf("listed in the project: %+v", list)
	}

	tr = clitest.ToolReport(t, clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "aider", path, "--json")), "aider")
	if tr.FilesUnchanged != 1 || tr.MessagesAdded != 0 || tr.SessionsNew != 0 {
		t.Fatalf("second import: %+v", tr)
	}

	appendAiderTurn(t, path, "and add a docstring", "Added the docstring quokkabanjo.")
	tr = clitest.ToolReport(t, clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "aider", fx.Project, "--json")), "aider")
	if tr.SessionsGrown != 1 || tr.SessionsNew != 0 || tr.MessagesAdded != 3 {
		t.Fatalf("import of the grown history: %+v", tr)
	}
	if sessions, messages := fx.SessionCount(t); sessions != 2 || messages != 16 {
		t.Fatalf("%d sessions, %d messages after the turn; want 2 and 16", sessions, messages)
	}
	if out := fx.MustExec(t, "search", "quokkabanjo", "--json"); !strings.Contains(out, list[0].ID) {
		t.Fatalf("the new turn is not in the session it continues: %s", out)
	}
	if r := fx.Exec(t, "", "session", "import", "--from", "aider"); r.Code != 0 || !strings.Contains(r.Stdout, "no location of its own") {
		t.Fatalf("--from aider without PATH: exit %d, %s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// --watch on a project picks up the turn Aider appends to its history.
func TestImportAiderWatch(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	path := installAiderHistory(t, fx)
	reports := fx.WatchImports(t, "aider", fx.Project)
	select {
	case rep := <-reports:
		if tr := clitest.ToolReport(t, rep, "aider"); tr.SessionsNew != 2 {
			t.Fatalf("first watch run: %+v", tr)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("--watch printed no first report")
	}
	appendAiderTurn(t, path, "one more thing", "Done: wombatzither.")
	for {
		select {
		case rep, ok := <-reports:
			if !ok {
				t.Fatal("--watch ended")
			}
			if tr := clitest.ToolReport(t, rep, "aider"); tr.MessagesAdded == 0 {
				continue // a run that found the turn not written yet
			} else if tr.MessagesAdded != 3 || tr.SessionsGrown != 1 {
				t.Fatalf("watch run after the turn: %+v", tr)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("--watch did not import the appended turn")
		}
		break
	}
	hits, err := fx.OpenStore(t).Search(context.Background(), loom.SearchQuery{Text: "wombatzither", UserID: "local"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("appended reply: hits %v, err %v", hits, err)
	}
}

// The two services' exports come in from their unzipped directories,
// once; each refuses the other's conversations.json, naming the --from
// that reads it.
func TestImportChatExports(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	dirs := map[string]string{}
	for _, tool := range []string{"chatgpt", "claudeai"} {
		dir := filepath.Join(fx.Home, "Downloads", tool+"-export")
		os.MkdirAll(dir, 0o755)
		b, err := os.ReadFile(filepath.Join("..", "..", "importer", tool, "testdata", "conversations.json"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "conversations.json"), b, 0o644)
		dirs[tool] = dir
	}
	for tool, want := range map[string]int{"chatgpt": 4, "claude-ai": 4} {
		dir := dirs[strings.ReplaceAll(tool, "-", "")]
		rep := clitest.ImportReport(t, fx.Exec(t, "", "session", "import", "--from", tool, dir, "--json").Stdout)
		if tr := clitest.ToolReport(t, rep, tool); tr.SessionsNew != want || tr.FilesRead != 1 || tr.FilesFailed != 0 {
			t.Errorf("%s: %+v", tool, tr)
		}
		again := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", tool, dir, "--json"))
		if tr := clitest.ToolReport(t, again, tool); tr.FilesUnchanged != 1 || tr.MessagesAdded != 0 {
			t.Errorf("%s again: %+v", tool, tr)
		}
	}
	r := fx.Exec(t, "", "session", "import", "--from", "claude-ai", filepath.Join(dirs["chatgpt"], "conversations.json"))
	if r.Code != cli.ExitError || !strings.Contains(r.Stderr, "--from chatgpt") {
		t.Errorf("a ChatGPT export as Claude.ai's: exit %d, %s", r.Code, r.Stderr)
	}
	if out := fx.MustExec(t, "search", "endofunctors", "--all-projects", "--json"); !strings.Contains(out, "claude-ai:") {
		t.Errorf("an older Claude.ai export's reply is not searchable: %s", out)
	}
}
