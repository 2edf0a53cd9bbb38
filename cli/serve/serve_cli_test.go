package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/syncio"
	"github.com/loomhq/loom/openai/openaitest"
)

// loom serve with no provider: it prints the URL with a fresh token of the
// current user, serves that user's sessions, says once that turns are
// unavailable and answers them 503, and stops on cancellation.
func TestServeNoProvider(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	sv := clitest.StartServe(t, fx, nil, "")
	if !strings.Contains(sv.ErrOut.String(), "503 until a model provider is configured") {
		t.Errorf("serve does not say turns are unavailable:\n%s", sv.ErrOut)
	}
	// The set-up help keeps a command a line, as bare loom prints it:
	// folded onto one, a # comment would swallow the commands after it
	// when pasted.
	if !strings.Contains(sv.ErrOut.String(), "\n  export ANTHROPIC_API_KEY=sk-ant-...  # Anthropic\n") {
		t.Errorf("serve folds the set-up help:\n%s", sv.ErrOut)
	}
	code, body := sv.Do(t, "GET", "/api/v1/sessions?limit=200", "")
	if code != 200 {
		t.Fatalf("list: %d %s", code, body)
	}
	var list struct{ Sessions []*loom.Session }
	json.Unmarshal([]byte(body), &list)
	if len(list.Sessions) == 0 {
		t.Fatal("the serving user's sessions are not listed")
	}
	for _, s := range list.Sessions {
		if s.UserID != "local" {
			t.Errorf("listed a session of %s", s.UserID)
		}
	}
	code, body = sv.Do(t, "POST", "/api/v1/messages", `{"key":"http:x","text":"hi"}`)
	if code != 503 || !strings.Contains(body, `"unavailable"`) || !strings.Contains(body, "OPENAI_API_KEY") {
		t.Errorf("turn without a provider: %d %s", code, body)
	}
	// The token is the current user's, named for the server.
	st := fx.OpenStore(t)
	toks, _ := st.Tokens(context.Background(), "")
	if len(toks) != 1 || toks[0].UserID != "local" || !strings.HasPrefix(toks[0].Name, "serve ") {
		t.Errorf("tokens after serve: %+v", toks)
	}
	if err := sv.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if strings.Contains(sv.ErrOut.String(), sv.Token) {
		t.Error("the token appears in the log")
	}
}

// With a provider, server turns use the command line's configuration and
// run under the token's user: replay logs go under that user, read_file
// is never offered (it would read this machine's files for any token),
// and memory only to the serving user.
func TestServeTurns(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	fake := openaitest.NewServer()
	defer fake.Close()
	sv := clitest.StartServe(t, fx, map[string]string{"OPENAI_BASE_URL": fake.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini"}, "alice")
	if strings.Contains(sv.ErrOut.String(), "answers 503") {
		t.Errorf("serve says turns are unavailable with a provider:\n%s", sv.ErrOut)
	}
	st := fx.OpenStore(t)
	_, bob, err := st.CreateToken(context.Background(), "bob", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	turn := func(token, key string) (sessionID string, tools []string) {
		t.Helper()
		sessionID = clitest.PostTurn(t, sv, token, key, "hello")
		reqs := fake.Requests()
		for _, tl := range reqs[len(reqs)-1].Body["tools"].([]any) {
			tools = append(tools, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
		}
		return sessionID, tools
	}
	aliceSession, aliceTools := turn(sv.Token, "telegram:1")
	bobSession, bobTools := turn(bob, "telegram:1")
	if aliceSession == "" || bobSession == "" || aliceSession == bobSession {
		t.Fatalf("sessions: alice %q, bob %q", aliceSession, bobSession)
	}
	has := func(tools []string, name string) bool {
		for _, x := range tools {
			if x == name {
				return true
			}
		}
		return false
	}
	if has(aliceTools, "read_file") || has(bobTools, "read_file") {
		t.Errorf("read_file offered over HTTP: %v / %v", aliceTools, bobTools)
	}
	if !has(aliceTools, "memory") || has(bobTools, "memory") {
		t.Errorf("memory: serving user's tools %v, other user's %v", aliceTools, bobTools)
	}
	if !has(bobTools, "session_search") || !has(bobTools, "agent") {
		t.Errorf("bob's tools: %v", bobTools)
	}
	s, err := st.Session(context.Background(), bobSession)
	if err != nil || s.UserID != "bob" || s.Model != "gpt-4o-mini" || s.Provider != "openai" || s.Surface != "telegram" {
		t.Errorf("bob's session: %+v, %v", s, err)
	}
	for user, id := range map[string]string{"alice": aliceSession, "bob": bobSession} {
		if _, err := os.Stat(filepath.Join(fx.Home, "state", "logs", user, id+".jsonl")); err != nil {
			t.Errorf("no replay log for %s's turn: %v", user, err)
		}
	}
}

// The acceptance path on a fresh machine: loom run makes a session, loom
// serve (no configuration at all) prints the dashboard's address with its
// token, the link logs a browser in and the dashboard shows the session,
// and Ctrl+C stops the server cleanly.
func TestBinaryServeShowsRunSessions(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "The README explains the build."})
	run := fx.MustLoom(t, "", "run", "summarise the README")
	sid := clitest.SessionOf(t, run.Stderr)

	cmd := exec.Command(clitest.LoomBinary(t), "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = fx.Project
	cmd.Env = fx.BinEnv() // no provider configured
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errOut := &syncio.Buffer{}
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var m []string
	for lines.Scan() {
		if m = clitest.ServeURL.FindStringSubmatch(lines.Text()); m != nil {
			break
		}
	}
	if m == nil {
		t.Fatalf("serve printed no URL; stderr:\n%s", errOut)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := client.Get(m[0][len("loom serve: "):])
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The link leads to a login page that says whom it logs in as; its
	// button logs in.
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/login" || strings.Contains(resp.Request.URL.String(), "token=") || !strings.Contains(string(page), "Log in as local") {
		t.Fatalf("dashboard link: %d at %s\n%s", resp.StatusCode, resp.Request.URL, page)
	}
	resp, err = client.PostForm(m[1]+"/login", url.Values{"link": {"1"}, "next": {"/"}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(resp.Request.URL.String(), "token=") {
		t.Fatalf("dashboard link: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	if !strings.Contains(string(page), "/s/"+sid) || !strings.Contains(string(page), "summarise the README") {
		t.Fatalf("dashboard does not show the session made by loom run:\n%s", page)
	}
	resp, err = client.Get(m[1] + "/s/" + sid)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "The README explains the build.") {
		t.Errorf("session page: %d\n%s", resp.StatusCode, page)
	}

	cmd.Process.Signal(syscall.SIGINT)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("serve exited with %v; stderr:\n%s", err, errOut)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGINT")
	}
}

// With [secrets] redact_on_write, loom serve serves the store's sync
// records (GET /api/v1/sync/hosts) as without it: redaction is the
// store's rule, and the store is still one that syncs.
func TestServeSyncWithRedactOnWrite(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	clitest.WriteConfig(t, fx, "[secrets]\nredact_on_write = true\n")
	sv := clitest.StartServe(t, fx, nil, "")
	if code, body := sv.Do(t, "GET", "/api/v1/sync/hosts", ""); code != http.StatusOK {
		t.Fatalf("GET /api/v1/sync/hosts: %d %s", code, body)
	}
}
