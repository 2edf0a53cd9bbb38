package serve

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/internal/testkit/syncio"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sqlite"
)

// world is a SQLite store holding a session of alice's and one of
// bob's, and a LOOM_HOME where the served token is kept.
type world struct {
	st     *sqlite.Store
	db     string
	dirs   func() (paths.Dirs, error)
	aliceS *loom.Session
}

func newWorld(t *testing.T) *world {
	t.Helper()
	home := t.TempDir()
	w := &world{st: cmdtest.Store(t), db: filepath.Join(home, "sessions.db"),
		dirs: func() (paths.Dirs, error) {
			return paths.Resolve(func(k string) string { return map[string]string{"LOOM_HOME": home}[k] })
		}}
	w.aliceS = &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:a", Title: "alice's"}
	storetest.AppendTexts(t, w.st, w.aliceS, "hello", "hi")
	storetest.AppendTexts(t, w.st, &loom.Session{ID: loom.NewID(), UserID: "bob", Key: "cli:b", Title: "bob's"}, "hello", "hi")
	return w
}

// options are loom serve's options for alice on w, on a free port of
// this machine, with loom serve's handler as the server and no model
// provider; its streams are safe to read while it serves.
func (w *world) options() (*Options, *term.IOStreams) {
	ios, _, _, _ := term.Test()
	ios.Out, ios.ErrOut = &syncio.Buffer{}, &syncio.Buffer{}
	return &Options{
		IO:          ios,
		CreateStore: func(context.Context) (loom.Engine, error) { return w.st, nil },
		AgentSetup: func() (*agent.Setup, error) {
			return &agent.Setup{Env: func(string) string { return "" }, LocalModelURL: "http://127.0.0.1:1/v1"}, nil
		},
		Serve: func(ctx context.Context, ln net.Listener, c command.ServeConfig) error {
			srv := server.New(server.Config{Store: c.Store, Tokens: c.Tokens, Agent: c.Agent, Logger: c.Logger, MCP: &c.MCP, Searcher: c.Searcher})
			return srv.Serve(ctx, ln, c.Grace)
		},
		DBURL:      func() (string, error) { return w.db, nil },
		Dirs:       w.dirs,
		PriceTable: func() (*pricing.Table, error) { return &pricing.Table{}, nil },
		Now:        time.Now,
		Version:    "test",
		User:       "alice",
		Addr:       "127.0.0.1:0",
		Grace:      time.Second,
	}, ios
}

var servedURL = regexp.MustCompile(`^loom serve: (http://[^/]+)/\?token=(\S+)\n$`)

// start runs opts until it listens and returns the address and token it
// printed, and how to stop it (Run's error).
func start(t *testing.T, opts *Options) (base, token string, stop func() error) {
	t.Helper()
	listening := make(chan string, 1)
	opts.Listening = func(a string) { listening <- a }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opts) }()
	select {
	case <-listening:
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v\n%s", err, text(opts.IO.ErrOut))
	}
	m := servedURL.FindStringSubmatch(text(opts.IO.Out))
	if m == nil {
		cancel()
		t.Fatalf("stdout %q, want the dashboard's address with a token", text(opts.IO.Out))
	}
	return m[1], m[2], func() error { cancel(); return <-done }
}

func text(w any) string { return w.(interface{ String() string }).String() }

// The command fills its options from its flags and refuses an address,
// grace or token lifetime it cannot use.
func TestNewCmdServeOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, NewCmdServe, "--addr", "0.0.0.0:8080", "--grace", "5s", "--log-json", "--token-ttl", "7d", "--user", "bob")
	if got.Addr != "0.0.0.0:8080" || got.Grace != 5*time.Second || !got.LogJSON || got.TokenTTL != 7*24*time.Hour || got.User != "bob" || got.Serve != nil || got.CreateStore == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, NewCmdServe); got.Addr != defaultServeAddr || got.Grace != 30*time.Second || got.TokenTTL != 0 || got.User != "local" {
		t.Errorf("defaults: %+v", got)
	}
	for _, bad := range [][]string{{"--addr", "7878"}, {"--grace", "-1s"}, {"--token-ttl", "0s"}, {"--grace", "soon"}, {"now"}} {
		cmdtest.Rejects(t, NewCmdServe, bad...)
	}
}

// Serve prints the dashboard's address with a token of the user, which
// the API takes for that user's sessions only; it stops when its
// context ends.
func TestRunServesTheUsersSessions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options()
	base, token, stop := start(t, opts)
	req, _ := http.NewRequest("GET", base+"/api/v1/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var list struct{ Sessions []*loom.Session }
	if err := json.Unmarshal(b, &list); err != nil || resp.StatusCode != 200 || len(list.Sessions) != 1 || list.Sessions[0].ID != w.aliceS.ID {
		t.Errorf("GET /api/v1/sessions: %d %s (%v), want alice's session only", resp.StatusCode, b, err)
	}
	if err := stop(); err != nil {
		t.Errorf("stopping: %v", err)
	}
	for _, want := range []string{
		"Serving the API and dashboard on " + base + " for user alice (store " + w.db + "). Ctrl+C stops.\n",
		"New token ",
		"loom: POST /api/v1/messages answers 503 until a model provider is configured",
	} {
		if !strings.Contains(text(ios.ErrOut), want) {
			t.Errorf("stderr lacks %q:\n%s", want, text(ios.ErrOut))
		}
	}
	tok, err := w.st.Authenticate(t.Context(), token)
	if err != nil || tok.UserID != "alice" || tok.ExpiresAt != nil {
		t.Errorf("the printed token in the store: %+v, %v", tok, err)
	}
}

// Serve hands the HTTP server the user it runs as, to whom alone the
// blame page is offered, and loom blame's line-age cache directory, so
// that the page reads a file's line ages from where loom blame keeps
// them.
func TestRunHandsBlameItsOwnerAndCache(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, _ := w.options()
	served := make(chan command.ServeConfig, 1)
	opts.Serve = func(ctx context.Context, ln net.Listener, c command.ServeConfig) error {
		defer ln.Close()
		served <- c
		<-ctx.Done()
		return nil
	}
	_, _, stop := start(t, opts)
	c := <-served
	if err := stop(); err != nil {
		t.Errorf("stopping: %v", err)
	}
	d, err := w.dirs()
	if err != nil {
		t.Fatal(err)
	}
	if c.Owner != "alice" || c.BlameCache != d.BlameCacheDir() {
		t.Errorf("blame's owner %q and cache %q, want alice and %q", c.Owner, c.BlameCache, d.BlameCacheDir())
	}
}

// A restart prints the token of the last start while the store takes it;
// --token-ttl makes a new one when the kept one would outlive it.
func TestRunKeepsItsTokenAcrossStarts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	serve := func(ttl time.Duration) (token, stderr string) {
		t.Helper()
		opts, ios := w.options()
		opts.TokenTTL = ttl
		_, token, stop := start(t, opts)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		return token, text(ios.ErrOut)
	}
	first, _ := serve(0)
	again, stderr := serve(0)
	if again != first || !strings.Contains(stderr, "Same token as at the last start (") {
		t.Errorf("restart: token changed %v, stderr:\n%s", again != first, stderr)
	}
	short, stderr := serve(time.Hour)
	if short == first || !strings.Contains(stderr, "; it expires ") {
		t.Errorf("--token-ttl 1h reused the token that never expires: stderr:\n%s", stderr)
	}
	if again, _ := serve(2 * time.Hour); again != short {
		t.Error("--token-ttl 2h did not reuse the kept token that expires sooner")
	}
	if _, err := w.st.Authenticate(t.Context(), first); err != nil {
		t.Errorf("the first token was revoked: %v", err)
	}
}
