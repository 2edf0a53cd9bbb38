// Package share is loom share: publish one session, or some of its
// turns, as a link through a hub the user runs (loom serve), sealed so
// that the hub keeps only ciphertext; and list and revoke those links.
package share

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/share"
)

// DefaultExpiry is how long a link answers unless --expires says.
const DefaultExpiry = 7 * 24 * time.Hour

// Env is what the share commands reach: the streams, the store, the
// configuration (the hub and its token), the directories (where links
// made here are remembered) and the clock.
type Env struct {
	IO        *term.IOStreams
	ReadStore func(context.Context) (loom.Engine, error)
	Resolve   func(ctx context.Context, st loom.Reader, ref string) (*loom.Session, error)
	Config    func() (*config.Config, string, error)
	Dirs      func() (paths.Dirs, error)
	Secrets   func() (*secrets.Detector, error)
	Now       func() time.Time
	// HTTP is the client of the hub's calls (nil: http.DefaultClient).
	HTTP *http.Client
	User string
	JSON bool
	// Hub and Token are --hub and --token; empty for the configuration's.
	Hub, Token string
}

// Options are the options of `loom share SESSION`.
type Options struct {
	Env
	Ref       string
	Turns     string
	Expires   string
	Exclude   []string
	NoRedact  bool
	HidePaths bool
	Yes       bool
}

// NewCmdShare builds loom share and its list and revoke commands. runF,
// when not nil, is called with the options instead of running the
// command (for tests).
func NewCmdShare(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := &Options{Env: NewEnv(inv)}
	cmd := &cobra.Command{
		Use:   "share SESSION [--turns A-B] [--expires 7d] [--hide-paths] [--exclude MSG...] [--yes]",
		Short: "Publish a session as a sealed, read-only link through your hub",
		Long: `Share publishes one session (or a range of its turns) through a hub you run
(loom serve) as a link that opens in any browser, read-only. The session
is sealed on this machine (AES-256-GCM under a fresh key) and the hub
keeps only the ciphertext: the key travels in the link's fragment
(#k=…), which browsers never send to a server. The page decrypts it in
the browser and draws it as the dashboard does.

Before anything is sent, share prints what will be shared: the number of
messages, the secrets redacted (as Markdown and HTML exports redact them;
--no-redact keeps them), and the absolute paths and usernames it holds,
which --hide-paths replaces (home directories by ~, the project root by
<project>, your username by <user>). --exclude leaves messages out by
their number (#N in loom session show). It then asks; off a terminal,
--yes is required.

The link answers until --expires (default 7d; a duration or a date) or
until "loom share revoke ID", after which the hub has deleted the
ciphertext and the link answers 404. The hub and token are --hub and
--token, else [share] hub and token in config.toml (LOOM_SHARE_HUB,
LOOM_SHARE_TOKEN), else [sync]'s. A token made with
"loom token create --scope share" may share and nothing else.
See docs/security.md, "Sharing".`,
		Example: `  loom share "flaky deploy"
  loom share 0196a3b2 --turns 3-5 --expires 2d --hide-paths
  loom share 0196a3b2 --exclude 7 --exclude 12-14 --yes
  loom share 0196a3b2 --hub https://hub.example.com --yes --json
  loom share list
  loom share revoke Xb3kq2`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref, opts.User, opts.JSON = args[0], inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return shareRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Turns, "turns", "", "share only turns `A-B` (N, A-B, A- or -B)")
	fl.StringVar(&opts.Expires, "expires", "7d", "the link stops answering after `WHEN`: a duration (2d, 12h) or a date")
	fl.StringArrayVar(&opts.Exclude, "exclude", nil, "leave out message `MSG` (7, 3-5 or 3,7-9; repeatable)")
	fl.BoolVar(&opts.NoRedact, "no-redact", false, "share secrets as stored")
	fl.BoolVar(&opts.HidePaths, "hide-paths", false, "replace home directories, the project root and usernames")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "publish without asking")
	addHubFlags(cmd, &opts.Env)
	cmd.AddCommand(newCmdList(inv, nil), newCmdRevoke(inv, nil))
	return cmd
}

// NewEnv is the Env of inv: what loom share reaches, for the commands
// that share sessions (loom share, loom blame pr --share).
func NewEnv(inv *command.Invocation) Env {
	return Env{
		IO:        inv.IO,
		ReadStore: inv.ReadStore,
		Resolve:   inv.Scope().Resolve,
		Config:    inv.Config,
		Dirs:      inv.Dirs,
		Secrets:   command.ConfigLoader(inv.Config).Detector,
		Now:       inv.TimeNow,
	}
}

func addHubFlags(cmd *cobra.Command, e *Env) {
	cmd.Flags().StringVar(&e.Hub, "hub", "", "the hub's `URL` (default [share] hub, else [sync] hub)")
	cmd.Flags().StringVar(&e.Token, "token", "", "your `TOKEN` on the hub, full or share-only (default [share] token, else [sync] token)")
}

// Client returns the client of the hub that --hub, [share] or [sync]
// names, with its token.
func (e *Env) Client() (*share.Client, error) {
	c, path, err := e.Config()
	if err != nil {
		return nil, err
	}
	hubURL, token := e.Hub, e.Token
	if hubURL == "" {
		hubURL = c.Share.Hub
		if hubURL == "" {
			hubURL = c.Sync.Hub
		}
	}
	if token == "" {
		token = c.Share.Token
		if token == "" && (c.Share.Hub == "" || c.Share.Hub == c.Sync.Hub) && (e.Hub == "" || e.Hub == c.Sync.Hub) {
			token = c.Sync.Token
		}
	}
	switch {
	case hubURL == "":
		return nil, loom.Errorf(loom.EINVALID, "no hub to share through: pass --hub, or set [share] hub in %s (or LOOM_SHARE_HUB) to a loom serve the link's readers reach", path)
	case token == "":
		return nil, loom.Errorf(loom.EINVALID, "no token for the hub %s: pass --token, or set [share] token in %s (or LOOM_SHARE_TOKEN); loom token create --scope share makes one on the hub", hubURL, path)
	}
	if u, err := url.Parse(hubURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, loom.Errorf(loom.EINVALID, "hub %q is not an http:// or https:// URL: write it as https://HOST (http://HOST:PORT on this machine)", hubURL)
	}
	return &share.Client{URL: strings.TrimSuffix(hubURL, "/"), Token: token, HTTP: e.HTTP}, nil
}

// Expiry reads --expires: a duration from now or a point in time, which
// must be in the future.
func Expiry(s string, now time.Time) (time.Time, error) {
	var at time.Time
	if d, err := human.ParseAge(s); err == nil {
		at = now.Add(d)
	} else {
		t, err := human.ParseTime(s, now)
		if err != nil || strings.HasSuffix(strings.TrimSpace(s), "ago") {
			return time.Time{}, command.UsageErrorf("--expires %q: want a duration (7d, 12h) or a date (2026-06-01) or time (RFC 3339)", s)
		}
		at = t
	}
	if !at.After(now) {
		return time.Time{}, command.UsageErrorf("--expires %s has already passed: give a duration (7d) or a later date", s)
	}
	return at, nil
}

// Result is what loom share --json prints.
type Result struct {
	ID        string         `json:"id"`
	Link      string         `json:"link"`
	Hub       string         `json:"hub"`
	SessionID string         `json:"session_id"`
	ExpiresAt time.Time      `json:"expires_at"`
	Preview   *share.Preview `json:"preview"`
}

func shareRun(ctx context.Context, opts *Options) error {
	now := opts.Now()
	expires, err := Expiry(opts.Expires, now)
	if err != nil {
		return err
	}
	var bo share.Options
	if opts.Turns != "" {
		if bo.From, bo.To, err = share.ParseTurns(opts.Turns); err != nil {
			return command.UsageErrorf("%s", loom.ErrorMessage(err))
		}
	}
	if bo.Exclude, err = share.ParseSeqs(opts.Exclude); err != nil {
		return command.UsageErrorf("%s", loom.ErrorMessage(err))
	}
	hc, err := opts.Client()
	if err != nil {
		return err
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	// What is shared leaves the machine: the session is read through
	// the secrets gate, redacted before it is built into a page.
	if !opts.NoRedact {
		d, err := opts.Secrets()
		if err != nil {
			return err
		}
		bo.Redact = d
	}
	s, err := opts.Resolve(ctx, st, opts.Ref)
	if err != nil {
		return err
	}
	msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil {
		return err
	}
	bo.HidePaths, bo.Hider = opts.HidePaths, share.NewHider(s.Project.Root)
	p, pv, err := share.Build(s, msgs, bo)
	if err != nil {
		return err
	}
	printPreview(opts, p, pv, hc.URL, expires)
	if err := Ask(ctx, opts.IO, opts.Yes, "Publish this link?"); err != nil {
		return err
	}
	rec, err := opts.Publish(ctx, hc, s.ID, p, expires)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, Result{ID: rec.ID, Link: rec.Link, Hub: hc.URL, SessionID: s.ID, ExpiresAt: rec.ExpiresAt, Preview: pv})
	}
	fmt.Fprintln(opts.IO.Out, rec.Link)
	fmt.Fprintf(opts.IO.ErrWrapped(), "Shared as %s until %s. Anyone with the whole link can read it; 'loom share revoke %s' ends it.\n",
		rec.ID, rec.ExpiresAt.Local().Format("Jan 2, 2006 15:04 MST"), rec.ID)
	return nil
}

// Ask asks question once what will be shared was said, unless yes:
// off a terminal, without yes, nothing is published (a usage error that
// says so), and a no is an error that says nothing was shared.
func Ask(ctx context.Context, ios *term.IOStreams, yes bool, question string) error {
	if yes {
		return nil
	}
	if !ios.CanPrompt() {
		return command.UsageErrorf("not on a terminal, so not asked: check the preview above, then run the same again with --yes to publish (nothing was sent)")
	}
	ok, err := term.Confirm(ctx, ios, question)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(ios.ErrOut, "Nothing was shared.")
		return &command.SilentError{Code: command.ExitError}
	}
	return nil
}

// Publish seals p, a page of session sessionID built by share.Build
// (through the secrets gate: Options.Redact), publishes it through hc
// until expires, and remembers the link here (loom share list shows
// it, loom share revoke ends it).
func (e *Env) Publish(ctx context.Context, hc *share.Client, sessionID string, p *share.Payload, expires time.Time) (Record, error) {
	blob, key, err := share.Seal(p)
	if err != nil {
		return Record{}, err
	}
	if len(blob) > loom.MaxShareBytes {
		return Record{}, loom.Errorf(loom.EINVALID, "this share is %s sealed, more than a hub keeps (%s): share fewer turns (--turns) or leave messages out (--exclude)", mib(len(blob)), mib(loom.MaxShareBytes))
	}
	sh, err := hc.Create(ctx, blob, expires)
	if err != nil {
		return Record{}, fmt.Errorf("%w (nothing was published)", err)
	}
	link := share.Link(hc.URL, sh.ID, key)
	rec := Record{ID: sh.ID, Hub: hc.URL, Link: link, SessionID: sessionID, Title: p.Title, Turns: p.Turns, CreatedAt: sh.CreatedAt, ExpiresAt: sh.ExpiresAt}
	if err := remember(e.Dirs, e.IO.ErrOut, e.User, func(rs []Record) []Record { return append(rs, rec) }); err != nil {
		fmt.Fprintf(e.IO.ErrOut, "loom: warning: the link works but is not remembered here (loom share list will not show it): %v\n", err)
	}
	return rec, nil
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// printPreview says on stderr what will be shared.
func printPreview(opts *Options, p *share.Payload, pv *share.Preview, hub string, expires time.Time) {
	// Read before a question on a terminal: wrapped at words.
	w := opts.IO.ErrWrapped()
	what := human.Plural(pv.Messages, "message")
	if p.Turns != "" {
		what += ", turns " + p.Turns
	}
	if pv.Excluded > 0 {
		what += fmt.Sprintf("; %d left out", pv.Excluded)
	}
	fmt.Fprintf(w, "Sharing %q (%s) through %s until %s.\n", term.SanitizeLine(p.Title), what, hub, expires.Local().Format("Jan 2, 2006 15:04 MST"))
	switch {
	case opts.NoRedact:
		fmt.Fprintln(w, "Secrets: not redacted (--no-redact): they are shared as stored.")
	default:
		fmt.Fprintf(w, "Secrets: redacted %s (--no-redact keeps them).\n", human.Plural(pv.Redactions, "secret"))
	}
	if opts.HidePaths {
		fmt.Fprintf(w, "Paths and usernames: replaced %d (--hide-paths).\n", pv.Hidden)
	}
	list := func(label string, xs []string, hint string) {
		if len(xs) == 0 {
			return
		}
		shown := xs
		if len(shown) > 8 {
			shown = shown[:8]
		}
		for i := range shown {
			shown[i] = term.SanitizeLine(shown[i])
		}
		more := ""
		if len(xs) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(xs)-len(shown))
		}
		fmt.Fprintf(w, "%s: %d (%s%s)%s\n", label, len(xs), strings.Join(shown, ", "), more, hint)
	}
	hint := ""
	if !opts.HidePaths {
		hint = "; --hide-paths replaces home directories, the project root and usernames"
	}
	list("Absolute paths", pv.Paths, hint)
	list("Usernames", pv.Users, hint)
}
