package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/serve"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/syncio"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/server"
)

// serving is loom serve running in process.
type serving struct {
	base, token string
	out, errOut *syncio.Buffer
	stop        func() error
}

var serveURL = regexp.MustCompile(`loom serve: (http://[^/]+)/\?token=(\S+)`)

// startServe runs serve.Run on an ephemeral port with env and waits until
// it listens.
func startServe(t *testing.T, fx *fixture, env map[string]string, user string) *serving {
	t.Helper()
	ios, _, _, _ := term.Test()
	sv := &serving{out: &syncio.Buffer{}, errOut: &syncio.Buffer{}}
	ios.Out, ios.ErrOut = sv.out, sv.errOut
	all := fx.env()
	for k, v := range env {
		all[k] = v
	}
	inv := command.NewInvocation(&Factory{
		IO:            ios,
		Env:           func(k string) string { return all[k] },
		Getwd:         func() (string, error) { return fx.project, nil },
		OpenStore:     openFor,
		Now:           time.Now,
		Providers:     testProviders(),
		Serve:         testServe,
		LocalModelURL: "http://127.0.0.1:1/v1", // nothing listens: no local model
	})
	if user != "" {
		all["LOOM_USER"] = user // as --user would
	}
	listening := make(chan string, 1)
	opts := serve.NewOptions(inv)
	opts.User, opts.Addr, opts.Grace, opts.Listening = inv.User(), "127.0.0.1:0", 2*time.Second, func(a string) { listening <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := serve.Run(ctx, opts)
		inv.Close()
		done <- err
	}()
	select {
	case <-listening:
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v\n%s", err, sv.errOut)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	m := serveURL.FindStringSubmatch(sv.out.String())
	if m == nil {
		cancel()
		t.Fatalf("serve printed no URL with a token: %q", sv.out)
	}
	sv.base, sv.token = m[1], m[2]
	stopped := false
	sv.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
			return nil
		}
	}
	t.Cleanup(func() { sv.stop() })
	return sv
}

func (sv *serving) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, sv.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+sv.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// loom serve with no provider: it prints the URL with a fresh token of the
// current user, serves that user's sessions, says once that turns are
// unavailable and answers them 503, and stops on cancellation.
func TestServeNoProvider(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	sv := startServe(t, fx, nil, "")
	if !strings.Contains(sv.errOut.String(), "503 until a model provider is configured") {
		t.Errorf("serve does not say turns are unavailable:\n%s", sv.errOut)
	}
	code, body := sv.do(t, "GET", "/api/v1/sessions?limit=200", "")
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
	code, body = sv.do(t, "POST", "/api/v1/messages", `{"key":"http:x","text":"hi"}`)
	if code != 503 || !strings.Contains(body, `"unavailable"`) || !strings.Contains(body, "OPENAI_API_KEY") {
		t.Errorf("turn without a provider: %d %s", code, body)
	}
	// The token is the current user's, named for the server.
	st := fx.openStore(t)
	toks, _ := st.Tokens(context.Background(), "")
	if len(toks) != 1 || toks[0].UserID != "local" || !strings.HasPrefix(toks[0].Name, "serve ") {
		t.Errorf("tokens after serve: %+v", toks)
	}
	if err := sv.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if strings.Contains(sv.errOut.String(), sv.token) {
		t.Error("the token appears in the log")
	}
}

// With a provider, server turns use the command line's configuration and
// run under the token's user: replay logs go under that user, read_file
// is never offered (it would read this machine's files for any token),
// and memory only to the serving user.
func TestServeTurns(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	fake := openaitest.NewServer()
	defer fake.Close()
	sv := startServe(t, fx, map[string]string{"OPENAI_BASE_URL": fake.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini"}, "alice")
	if strings.Contains(sv.errOut.String(), "answers 503") {
		t.Errorf("serve says turns are unavailable with a provider:\n%s", sv.errOut)
	}
	st := fx.openStore(t)
	_, bob, err := st.CreateToken(context.Background(), "bob", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	turn := func(token, key string) (sessionID string, tools []string) {
		t.Helper()
		sessionID = postTurn(t, sv, token, key, "hello")
		reqs := fake.Requests()
		for _, tl := range reqs[len(reqs)-1].Body["tools"].([]any) {
			tools = append(tools, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
		}
		return sessionID, tools
	}
	aliceSession, aliceTools := turn(sv.token, "telegram:1")
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
		if _, err := os.Stat(filepath.Join(fx.home, "state", "logs", user, id+".jsonl")); err != nil {
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
	fx := newAgentFixture(t)
	fx.srv.Enqueue(openaitest.Reply{Text: "The README explains the build."})
	run := fx.mustLoom(t, "", "run", "summarise the README")
	sid := sessionOf(t, run.stderr)

	cmd := exec.Command(loomBinary(t), "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = fx.project
	cmd.Env = fx.binEnv() // no provider configured
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
		if m = serveURL.FindStringSubmatch(lines.Text()); m != nil {
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

// testServe runs the HTTP server as main wires it, for in-process runs.
func testServe(ctx context.Context, ln net.Listener, c ServeConfig) error {
	return server.New(server.Config{Store: c.Store, Tokens: c.Tokens, Agent: c.Agent, Logger: c.Logger, MCP: &c.MCP}).Serve(ctx, ln, c.Grace)
}

// testProviders are the providers main builds in, for in-process runs.
func testProviders() map[string]agent.ProviderFunc {
	return map[string]agent.ProviderFunc{
		"openai": func(e config.Endpoint) loom.Provider {
			return openai.New(openai.Config{APIKey: e.APIKey, BaseURL: e.BaseURL, MaxRetries: -1})
		},
	}
}
