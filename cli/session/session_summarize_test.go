package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
)

// loom session summarize writes a summary of at most three lines into
// the description of a quiet session, once: a second run asks the model
// nothing, a description the user wrote stays, and a session whose text
// holds a secret or a redaction marker, or whose project is excluded,
// is skipped without its text reaching the model. Search then finds a
// session by a word of its summary alone. Without a provider the command
// says so in one line.
func TestSessionSummarize(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	ctx := context.Background()
	clitest.WriteConfig(t, fx, "[summaries]\nexclude = [\"web\"]\n")

	st := fx.OpenStore(t)
	sec := secretstest.New(3).Secret("github-token")
	secret := &loom.Session{UserID: "local", Key: "cli:api:secret", Title: "token setup", Project: fx.Proj}
	redacted := &loom.Session{UserID: "local", Key: "cli:api:redacted", Title: "redacted setup", Project: fx.Proj}
	described := &loom.Session{UserID: "local", Key: "cli:api:described", Title: "described", Project: fx.Proj}
	for s, text := range map[*loom.Session]string{
		secret:    "use okapi-secret " + sec.Text,
		redacted:  "use okapi-redacted " + secrets.Marker("github-token"),
		described: "okapi-described work",
	} {
		if err := st.Append(ctx, s, clitest.TextMsg(loom.RoleUser, text, fx.Now())); err != nil {
			t.Fatal(err)
		}
	}
	mine := "Written by me."
	if _, err := st.UpdateSession(ctx, described.ID, loom.SessionUpdate{Description: &mine, KeepUpdatedAt: true}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// No provider configured: one line, exit 1, nothing written.
	r := fx.RunWith(t, clitest.RunOpts{Before: bothProviders}, "session", "summarize", "--all")
	if r.Code != cli.ExitError || len(clitest.Lines(r.Stderr)) != 1 || !strings.Contains(r.Stderr, "no model provider is configured to write summaries") {
		t.Fatalf("without a provider: exit %d, stderr %q", r.Code, r.Stderr)
	}

	srv, env := clitest.SummaryModel(t)
	summarize := func(args ...string) []clitest.SummarizeResult {
		t.Helper()
		return fx.Summarize(t, env, args...)
	}

	srv.Enqueue(openaitest.Reply{Text: "- Found why TestRetry flakes: the zebrafish clock.\n\n* Switched the test to a fake clock.\nThe fix is in clock.go.\nA fourth line " + strings.Repeat("long ", 40)})
	got := summarize(fx.Main.ID)
	want := "Found why TestRetry flakes: the zebrafish clock.\nSwitched the test to a fake clock.\nThe fix is in clock.go."
	if len(got) != 1 || got[0].Summary != want {
		t.Fatalf("summary: %+v, want %q", got, want)
	}
	st = fx.OpenStore(t)
	if s, err := st.Session(ctx, fx.Main.ID); err != nil || s.Description != want || !s.UpdatedAt.Equal(fx.Main.UpdatedAt) {
		t.Fatalf("stored: %+v, %v", s, err)
	}
	st.Close()
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model calls, want 1", n)
	}

	// Again: the description is there, the model is not asked.
	if got := summarize(fx.Main.ID); len(got) != 1 || got[0].Skipped != "has a description" || len(srv.Requests()) != 1 {
		t.Fatalf("second run: %+v, %d model calls", got, len(srv.Requests()))
	}

	// Every other quiet session: fork, twins and telegram are
	// summarised; the rest skipped.
	for range 4 {
		srv.Enqueue(openaitest.Reply{Text: "A session summarised."})
	}
	byID := map[string]clitest.SummarizeResult{}
	for _, r := range summarize("--all") {
		byID[r.SessionID] = r
	}
	for id, want := range map[string]string{fx.Web.ID: "excluded by [summaries] exclude", secret.ID: "holds a secret", redacted.ID: "holds redacted text"} {
		if byID[id].Skipped != want || byID[id].Summary != "" {
			t.Errorf("session %s: %+v, want skipped %q", id, byID[id], want)
		}
	}
	for _, id := range []string{fx.Fork.ID, fx.Twin1.ID, fx.Twin2.ID, fx.Tg.ID} {
		if byID[id].Summary != "A session summarised." {
			t.Errorf("session %s: %+v, want summarised", id, byID[id])
		}
	}
	for _, id := range []string{fx.Main.ID, fx.Sub.ID, described.ID} {
		if _, ok := byID[id]; ok {
			t.Errorf("--all took session %s: %+v", id, byID[id])
		}
	}
	if n := len(srv.Requests()); n != 5 {
		t.Errorf("%d model calls, want 5", n)
	}
	for _, req := range srv.Requests() {
		body, _ := json.Marshal(req.Body)
		for _, never := range []string{"okapi", secrets.MarkerPrefix, "deploy the web app", strings.Split(sec.Value, "\n")[0]} {
			if strings.Contains(string(body), never) {
				t.Errorf("a request carries %q:\n%s", never, body)
			}
		}
	}
	st = fx.OpenStore(t)
	if s, err := st.Session(ctx, described.ID); err != nil || s.Description != mine {
		t.Errorf("the user's description: %+v, %v", s, err)
	}
	st.Close()

	// The summary is shown by session show and the MCP list tool.
	if out := fx.MustRun(t, "session", "show", fx.Main.ID); !strings.Contains(out, "Switched the test to a fake clock.") {
		t.Errorf("session show does not show the summary:\n%s", out)
	}
	cs := clitest.ConnectStdio(t, fx)
	if list := clitest.MustCall(t, cs, "list_sessions", map[string]any{"all_projects": true}); !strings.Contains(list.Text, "description: "+strings.ReplaceAll(want, "\n", " ")) {
		t.Errorf("list_sessions does not show the summary:\n%s", list.Text)
	}

	// A word of the summary alone finds the session.
	r = fx.Run(t, "search", "zebrafish", "--json", "--all-projects")
	if r.Code != 0 || !strings.Contains(r.Stdout, fx.Main.ID) {
		t.Errorf("search zebrafish: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// backgroundSummaries is the fixture with [summaries] enabled, and a
// fake model server.
func backgroundSummaries(t *testing.T) (*clitest.Fixture, *openaitest.Server) {
	t.Helper()
	fx := clitest.NewFixture(t)
	clitest.WriteConfig(t, fx, "[summaries]\nenabled = true\n")
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return fx, srv
}

// wantSummarised fails unless the fixture's oldest session, the last
// that a pass summarises, has a summary of at most three lines.
func wantSummarised(t *testing.T, fx *clitest.Fixture, said string) {
	t.Helper()
	st := fx.OpenStore(t)
	s, err := st.Session(context.Background(), fx.Main.ID)
	if err != nil || s.Description == "" || len(clitest.Lines(s.Description)) > 3 {
		t.Fatalf("main's description: %+v, %v\nsaid:\n%s", s, err, said)
	}
}

// With [summaries] enabled = true, loom serve summarises the quiet
// sessions in the background, and says so at start.
func TestServeSummarisesInTheBackground(t *testing.T) {
	t.Parallel()
	fx, srv := backgroundSummaries(t)
	sv := clitest.StartServe(t, fx, map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini"}, "")
	clitest.WaitFor(t, sv.ErrOut, "Summarising sessions quiet for 30m0s in the background")
	// Newest first: the fixture's oldest session comes last.
	clitest.WaitFor(t, sv.ErrOut, "session="+fx.Main.ID)
	if err := sv.Stop(); err != nil {
		t.Fatal(err)
	}
	wantSummarised(t, fx, sv.ErrOut.String())
}

// loom session import --watch summarises quiet sessions in the
// background too, where [summaries] enabled is true.
func TestImportWatchSummarises(t *testing.T) {
	t.Parallel()
	fx, srv := backgroundSummaries(t)
	cmd := exec.Command(clitest.LoomBinary(t), "session", "import", "--from", "codex", "--watch", t.TempDir())
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv("OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=k", "LOOM_MODEL=gpt-4o-mini")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	// Newest first: the fixture's oldest session comes last.
	var said []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		said = append(said, sc.Text())
		if strings.Contains(sc.Text(), "session summarised") && strings.Contains(sc.Text(), "session="+fx.Main.ID) {
			break
		}
	}
	if !strings.Contains(strings.Join(said, "\n"), "Summarising sessions quiet for 30m0s in the background with gpt-4o-mini.") {
		t.Fatalf("import --watch said:\n%s", strings.Join(said, "\n"))
	}
	wantSummarised(t, fx, strings.Join(said, "\n"))
}
