package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
)

type summarizeResult struct {
	SessionID string `json:"session_id"`
	Summary   string `json:"summary"`
	Skipped   string `json:"skipped"`
}

// loom session summarize writes a summary of at most three lines into
// the description of a quiet session, once: a second run asks the model
// nothing, a description the user wrote stays, and a session whose text
// holds a secret or a redaction marker, or whose project is excluded,
// is skipped without its text reaching the model. Search then finds a
// session by a word of its summary alone. Without a provider the command
// says so in one line.
func TestSessionSummarize(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	writeConfig(t, fx, "[summaries]\nexclude = [\"web\"]\n")

	st := fx.openStore(t)
	sec := secretstest.New(3).Secret("github-token")
	secret := &loom.Session{UserID: "local", Key: "cli:api:secret", Title: "token setup", Project: fx.proj}
	redacted := &loom.Session{UserID: "local", Key: "cli:api:redacted", Title: "redacted setup", Project: fx.proj}
	described := &loom.Session{UserID: "local", Key: "cli:api:described", Title: "described", Project: fx.proj}
	for s, text := range map[*loom.Session]string{
		secret:    "use okapi-secret " + sec.Text,
		redacted:  "use okapi-redacted " + secrets.Marker("github-token"),
		described: "okapi-described work",
	} {
		if err := st.Append(ctx, s, textMsg(loom.RoleUser, text, fx.now())); err != nil {
			t.Fatal(err)
		}
	}
	mine := "Written by me."
	if _, err := st.UpdateSession(ctx, described.ID, loom.SessionUpdate{Description: &mine, KeepUpdatedAt: true}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// No provider configured: one line, exit 1, nothing written.
	r := fx.runWith(t, runOpts{before: bothProviders}, "session", "summarize", "--all")
	if r.code != ExitError || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, "no model provider is configured to write summaries") {
		t.Fatalf("without a provider: exit %d, stderr %q", r.code, r.stderr)
	}

	srv, env := summaryModel(t)
	summarize := func(args ...string) []summarizeResult {
		t.Helper()
		return fx.summarize(t, env, args...)
	}

	srv.Enqueue(openaitest.Reply{Text: "- Found why TestRetry flakes: the zebrafish clock.\n\n* Switched the test to a fake clock.\nThe fix is in clock.go.\nA fourth line " + strings.Repeat("long ", 40)})
	got := summarize(fx.main.ID)
	want := "Found why TestRetry flakes: the zebrafish clock.\nSwitched the test to a fake clock.\nThe fix is in clock.go."
	if len(got) != 1 || got[0].Summary != want {
		t.Fatalf("summary: %+v, want %q", got, want)
	}
	st = fx.openStore(t)
	if s, err := st.Session(ctx, fx.main.ID); err != nil || s.Description != want || !s.UpdatedAt.Equal(fx.main.UpdatedAt) {
		t.Fatalf("stored: %+v, %v", s, err)
	}
	st.Close()
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model calls, want 1", n)
	}

	// Again: the description is there, the model is not asked.
	if got := summarize(fx.main.ID); len(got) != 1 || got[0].Skipped != "has a description" || len(srv.Requests()) != 1 {
		t.Fatalf("second run: %+v, %d model calls", got, len(srv.Requests()))
	}

	// Every other quiet session: fork, twins and telegram are
	// summarised; the rest skipped.
	for range 4 {
		srv.Enqueue(openaitest.Reply{Text: "A session summarised."})
	}
	byID := map[string]summarizeResult{}
	for _, r := range summarize("--all") {
		byID[r.SessionID] = r
	}
	for id, want := range map[string]string{fx.web.ID: "excluded by [summaries] exclude", secret.ID: "holds a secret", redacted.ID: "holds redacted text"} {
		if byID[id].Skipped != want || byID[id].Summary != "" {
			t.Errorf("session %s: %+v, want skipped %q", id, byID[id], want)
		}
	}
	for _, id := range []string{fx.fork.ID, fx.twin1.ID, fx.twin2.ID, fx.tg.ID} {
		if byID[id].Summary != "A session summarised." {
			t.Errorf("session %s: %+v, want summarised", id, byID[id])
		}
	}
	for _, id := range []string{fx.main.ID, fx.sub.ID, described.ID} {
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
	st = fx.openStore(t)
	if s, err := st.Session(ctx, described.ID); err != nil || s.Description != mine {
		t.Errorf("the user's description: %+v, %v", s, err)
	}
	st.Close()

	// The summary is shown by session show and the MCP list tool.
	if out := fx.mustRun(t, "session", "show", fx.main.ID); !strings.Contains(out, "Switched the test to a fake clock.") {
		t.Errorf("session show does not show the summary:\n%s", out)
	}
	cs := connectStdio(t, fx)
	if list := mustCall(t, cs, "list_sessions", map[string]any{"all_projects": true}); !strings.Contains(list.text, "description: "+strings.ReplaceAll(want, "\n", " ")) {
		t.Errorf("list_sessions does not show the summary:\n%s", list.text)
	}

	// A word of the summary alone finds the session.
	r = fx.run(t, "search", "zebrafish", "--json", "--all-projects")
	if r.code != 0 || !strings.Contains(r.stdout, fx.main.ID) {
		t.Errorf("search zebrafish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// summaryModel is a fake model server that writes summaries, and the
// environment that points loom at it.
func summaryModel(t *testing.T) (*openaitest.Server, []string) {
	t.Helper()
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return srv, []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=k", "LOOM_MODEL=gpt-4o-mini"}
}

// summarize runs the loom binary's session summarize --json with args
// on fx, its model set by env, and returns what became of each session.
func (fx *fixture) summarize(t *testing.T, env []string, args ...string) []summarizeResult {
	t.Helper()
	cmd := exec.Command(loomBinary(t), append([]string{"session", "summarize", "--json"}, args...)...)
	cmd.Dir, cmd.Env = fx.project, fx.binEnv(env...)
	r := execCmd(t, cmd, "")
	if r.code != 0 {
		t.Fatalf("summarize %q: exit %d\n%s", args, r.code, r.stderr)
	}
	return decodeJSON[[]summarizeResult](t, r.stdout)
}

// backgroundSummaries is the fixture with [summaries] enabled, and a
// fake model server.
func backgroundSummaries(t *testing.T) (*fixture, *openaitest.Server) {
	t.Helper()
	fx := newFixture(t)
	writeConfig(t, fx, "[summaries]\nenabled = true\n")
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return fx, srv
}

// wantSummarised fails unless the fixture's oldest session, the last
// that a pass summarises, has a summary of at most three lines.
func wantSummarised(t *testing.T, fx *fixture, said string) {
	t.Helper()
	st := fx.openStore(t)
	s, err := st.Session(context.Background(), fx.main.ID)
	if err != nil || s.Description == "" || len(lines(s.Description)) > 3 {
		t.Fatalf("main's description: %+v, %v\nsaid:\n%s", s, err, said)
	}
}

// With [summaries] enabled = true, loom serve summarises the quiet
// sessions in the background, and says so at start.
func TestServeSummarisesInTheBackground(t *testing.T) {
	t.Parallel()
	fx, srv := backgroundSummaries(t)
	sv := startServe(t, fx, map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini"}, "")
	waitFor(t, sv.errOut, "Summarising sessions quiet for 30m0s in the background")
	// Newest first: the fixture's oldest session comes last.
	waitFor(t, sv.errOut, "session="+fx.main.ID)
	if err := sv.stop(); err != nil {
		t.Fatal(err)
	}
	wantSummarised(t, fx, sv.errOut.String())
}

// loom session import --watch summarises quiet sessions in the
// background too, where [summaries] enabled is true.
func TestImportWatchSummarises(t *testing.T) {
	t.Parallel()
	fx, srv := backgroundSummaries(t)
	cmd := exec.Command(loomBinary(t), "session", "import", "--from", "codex", "--watch", t.TempDir())
	cmd.Dir, cmd.Env = fx.project, fx.binEnv("OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=k", "LOOM_MODEL=gpt-4o-mini")
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
		if strings.Contains(sc.Text(), "session summarised") && strings.Contains(sc.Text(), "session="+fx.main.ID) {
			break
		}
	}
	if !strings.Contains(strings.Join(said, "\n"), "Summarising sessions quiet for 30m0s in the background with gpt-4o-mini.") {
		t.Fatalf("import --watch said:\n%s", strings.Join(said, "\n"))
	}
	wantSummarised(t, fx, strings.Join(said, "\n"))
}
