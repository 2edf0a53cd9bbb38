package share

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/share"
	"github.com/loomhq/loom/sqlite"
)

// awsKey is a planted AWS access key id.
const awsKey = "AKIAQ3EGRB7XK2M4T6ZW"

// world is a machine's SQLite store holding a session with a secret in
// it, and a hub (loom serve's handler on its own SQLite store) on which
// alice has a token.
type world struct {
	st, hub *sqlite.Store
	srv     *httptest.Server
	token   string
	s       *loom.Session
	home    string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{st: cmdtest.Store(t), hub: cmdtest.Store(t), home: filepath.Join(t.TempDir(), "home")}
	var err error
	if _, w.token, err = w.hub.CreateScopedToken(t.Context(), "alice", "sharing", loom.ScopeShare, 0); err != nil {
		t.Fatal(err)
	}
	w.srv = cmdtest.Hub(t, w.hub)
	w.s = &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:deploy", Title: "flaky deploy",
		Project: loom.Project{ID: "api", Name: "api", Root: "/home/alice/src/api"}}
	storetest.AppendTexts(t, w.st, w.s,
		"deploy with the key "+awsKey+" from /home/alice/src/api/deploy.sh", "deployed",
		"and now the docs", "done")
	return w
}

// env is the share commands' environment on w: alice's, with --hub and
// --token naming w's hub.
func (w *world) env() (Env, *term.IOStreams) {
	ios, _, _, _ := term.Test()
	scope := command.Scope{User: func() string { return "alice" }, Project: func() (loom.Project, error) { return loom.Project{}, os.ErrNotExist }}
	return Env{
		IO:        ios,
		ReadStore: func(context.Context) (loom.Engine, error) { return w.st, nil },
		Resolve:   scope.Resolve,
		Config:    func() (*config.Config, string, error) { return &config.Config{}, "config.toml", nil },
		Dirs: func() (paths.Dirs, error) {
			return paths.Resolve(func(k string) string { return map[string]string{"LOOM_HOME": w.home}[k] })
		},
		Secrets: func() (*secrets.Detector, error) { return secrets.Default(), nil },
		Now:     time.Now,
		HTTP:    w.srv.Client(),
		User:    "alice",
		Hub:     w.srv.URL,
		Token:   w.token,
	}, ios
}

// share runs loom share --yes on w's session and returns its link.
func (w *world) share(t *testing.T, edit func(*Options)) string {
	t.Helper()
	e, ios := w.env()
	opts := &Options{Env: e, Ref: w.s.ID[:8], Expires: "7d", Yes: true}
	if edit != nil {
		edit(opts)
	}
	if err := shareRun(t.Context(), opts); err != nil {
		t.Fatalf("share: %v\n%s", err, text(ios.ErrOut))
	}
	return strings.TrimSuffix(text(ios.Out), "\n")
}

func text(w any) string { return w.(interface{ String() string }).String() }

// opened is what the hub keeps of the share behind link, opened with the
// link's key.
func (w *world) opened(t *testing.T, link string) *share.Payload {
	t.Helper()
	page, key, ok := strings.Cut(link, "#k=")
	if !ok {
		t.Fatalf("link %q holds no key", link)
	}
	id := page[strings.LastIndex(page, "/")+1:]
	blob, err := w.hub.ShareBlob(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	p, err := share.Open(blob, key)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The command fills its options from its flags and argument.
func TestNewCmdShareOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, NewCmdShare, "flaky deploy", "--turns", "3-5", "--expires", "2d", "--hide-paths",
		"--exclude", "7", "--exclude", "12-14", "--no-redact", "-y", "--hub", "https://hub.example.com", "--token", "T", "--user", "alice", "--json")
	if got.Ref != "flaky deploy" || got.Turns != "3-5" || got.Expires != "2d" || !got.HidePaths || !got.NoRedact || !got.Yes ||
		strings.Join(got.Exclude, ",") != "7,12-14" || got.Hub != "https://hub.example.com" || got.Token != "T" || got.User != "alice" || !got.JSON {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, NewCmdShare, "0196a3b2"); got.Expires != "7d" || got.Yes || got.User != "local" || got.ReadStore == nil || got.Secrets == nil {
		t.Errorf("defaults: %+v", got)
	}
	cmdtest.Rejects(t, NewCmdShare)
	cmdtest.Rejects(t, NewCmdShare, "a", "b")
}

// Share publishes the session sealed, secrets redacted: the hub keeps
// what only the link's key opens, and the link is remembered here.
func TestShareRunPublishesASealedLink(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	e, ios := w.env()
	opts := &Options{Env: e, Ref: w.s.ID[:8], Expires: "2d", Yes: true, HidePaths: true}
	if err := shareRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	link := strings.TrimSuffix(text(ios.Out), "\n")
	if !strings.HasPrefix(link, w.srv.URL+share.PagePath) {
		t.Fatalf("stdout %q, want the link", link)
	}
	for _, want := range []string{`Sharing "flaky deploy" (4 messages) through ` + w.srv.URL, "Secrets: redacted 1 secret", "Paths and usernames: replaced", "Shared as "} {
		if !strings.Contains(text(ios.ErrOut), want) {
			t.Errorf("stderr lacks %q:\n%s", want, text(ios.ErrOut))
		}
	}
	p := w.opened(t, link)
	all := ""
	for _, m := range p.Messages {
		for _, part := range m.Parts {
			all += part.Text + "\n"
		}
	}
	if p.Title != "flaky deploy" || len(p.Messages) != 4 || strings.Contains(all, awsKey) || strings.Contains(all, "/home/alice") || !strings.Contains(all, "deploy.sh") {
		t.Errorf("the hub's share opens to %q, %d messages:\n%s", p.Title, len(p.Messages), all)
	}
	shares, err := w.hub.Shares(t.Context(), "alice")
	if err != nil || len(shares) != 1 || time.Until(shares[0].ExpiresAt) > 48*time.Hour || time.Until(shares[0].ExpiresAt) < 47*time.Hour {
		t.Errorf("the hub's shares: %+v, %v; want one for 2 days", shares, err)
	}
	rs, err := readRecords(e.Dirs, ios.ErrOut, "alice")
	if err != nil || len(rs) != 1 || rs[0].Link != link || rs[0].SessionID != w.s.ID {
		t.Errorf("remembered here: %+v, %v", rs, err)
	}

	// --turns shares only those turns; --no-redact keeps the secret.
	p = w.opened(t, w.share(t, func(o *Options) { o.Turns, o.NoRedact = "1", true }))
	if len(p.Messages) != 2 || p.Turns != "1" || !strings.Contains(p.Messages[0].Parts[0].Text, awsKey) {
		t.Errorf("--turns 1 --no-redact: turns %q, %+v", p.Turns, p.Messages)
	}
}

// Share refuses to publish what it was not asked to, and sends nothing.
func TestShareRunRefusesBeforeSending(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for name, c := range map[string]struct {
		edit func(*Options)
		want string
	}{
		"off a terminal without --yes": {func(o *Options) { o.Yes = false }, "run the same again with --yes"},
		"an expiry passed":             {func(o *Options) { o.Expires = "2020-01-01" }, "--expires 2020-01-01 has already passed"},
		"an expiry not a time":         {func(o *Options) { o.Expires = "soon" }, `--expires "soon": want a duration`},
		"turns not a range":            {func(o *Options) { o.Turns = "x" }, ""},
		"no hub":                       {func(o *Options) { o.Hub = "" }, "no hub to share through"},
		"a hub not a URL":              {func(o *Options) { o.Hub = "hub.example.com" }, "is not an http:// or https:// URL"},
	} {
		e, ios := w.env()
		opts := &Options{Env: e, Ref: w.s.ID, Expires: "7d", Yes: true}
		c.edit(opts)
		err := shareRun(t.Context(), opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if text(ios.Out) != "" {
			t.Errorf("%s: stdout %q", name, text(ios.Out))
		}
	}
	var usage *command.UsageError
	e, _ := w.env()
	if err := shareRun(t.Context(), &Options{Env: e, Ref: w.s.ID, Expires: "7d"}); !errors.As(err, &usage) {
		t.Errorf("without --yes off a terminal: %v, want a usage error (exit 2)", err)
	}
	if shares, err := w.hub.Shares(t.Context(), "alice"); err != nil || len(shares) != 0 {
		t.Errorf("the hub holds %d shares (%v), want none", len(shares), err)
	}
}

// On a terminal of 80 columns the preview read before publishing, and
// what is said after, break no word: each of their lines fits.
func TestSharePreviewFits80Columns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	e, ios := w.env()
	ios.SetStderrTTY(true)
	ios.SetWidth(80)
	if err := shareRun(t.Context(), &Options{Env: e, Ref: w.s.ID[:8], Expires: "2d", Yes: true}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(text(ios.ErrOut), "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("a line of %d columns, which the terminal breaks where it falls: %q", len([]rune(l)), l)
		}
	}
}
