// Package token is loom's token commands: create, list and revoke the
// access tokens of loom serve.
package token

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// NewCmdToken groups the access-token commands.
func NewCmdToken(inv *command.Invocation) *cobra.Command {
	return command.Group(&cobra.Command{
		Use:     "token <command>",
		Short:   "Create, list and revoke access tokens of loom serve",
		Aliases: []string{"tokens"},
		Long: `Access tokens let programs and browsers use loom serve. Each token acts
as one user, who sees only their own sessions. Only a hash of each token
is stored: a token is shown once, when it is made.`,
		Example: `  loom token create --user alice --name "telegram bot"
  loom token create --user ci --token-ttl 30d
  loom token list
  loom token revoke 0196a3b2`,
	}, newCmdTokenCreate(inv, nil), newCmdTokenList(inv, nil), newCmdTokenRevoke(inv, nil))
}

// tokenStore returns a function that opens f's store, creating it if
// missing, as a token store.
// storeName names f's store as a user gives it: its path, or its
// PostgreSQL URL without the password.
func storeName(inv *command.Invocation) func() string {
	return func() string {
		db, err := inv.DBURL()
		if err != nil {
			return "(unknown)"
		}
		if u, err := url.Parse(db); err == nil && u.Scheme != "" && u.User != nil {
			return u.Redacted()
		}
		return db
	}
}

func tokenStore(inv *command.Invocation) func(context.Context) (loom.TokenStore, error) {
	return func(ctx context.Context) (loom.TokenStore, error) {
		st, err := inv.CreateStore(ctx)
		if err != nil {
			return nil, err
		}
		ts := st.Optional().Tokens
		if ts == nil {
			return nil, fmt.Errorf("this store keeps no access tokens")
		}
		return ts, nil
	}
}

// AddTTLFlag adds --token-ttl, read by TTLFlag.
func AddTTLFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().String("token-ttl", "", usage)
}

// TTLFlag returns the lifetime --token-ttl asks of a new token: a
// duration of s, m, h, d and w (30d, 12h, 1h30m), or zero (never expires)
// when the flag is not given.
func TTLFlag(cmd *cobra.Command) (time.Duration, error) {
	if !cmd.Flags().Changed("token-ttl") {
		return 0, nil
	}
	v, _ := cmd.Flags().GetString("token-ttl")
	d, err := human.ParseAge(v)
	if err != nil {
		return 0, command.UsageErrorf("--token-ttl: %v", err)
	}
	if d <= 0 {
		return 0, command.UsageErrorf("--token-ttl must be more than zero")
	}
	return d, nil
}

// CreateOptions are the options of `loom token create`.
type CreateOptions struct {
	IO         *term.IOStreams
	TokenStore func(context.Context) (loom.TokenStore, error)
	// StoreName names the store the token is kept in, as a user gives
	// it (a path, or a PostgreSQL URL without its password).
	StoreName func() string
	User      string
	JSON      bool

	Name string
	// TTL is the token's lifetime; zero for one that never expires.
	TTL time.Duration
	// Scope is loom.ScopeFull or loom.ScopeShare.
	Scope string
}

// newCmdTokenCreate builds loom token create. runF, when not nil, is
// called with the options instead of running the command (for tests).
func newCmdTokenCreate(inv *command.Invocation, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: inv.IO, TokenStore: tokenStore(inv), StoreName: storeName(inv)}
	cmd := &cobra.Command{
		Use:   "create [--user NAME] [--name LABEL] [--token-ttl DURATION] [--scope full|share]",
		Short: "Make an access token and print it once",
		Long: `Make an access token for a user (--user, else $LOOM_USER, else local) and
print it on stdout. It is not shown again: store it where the program
that uses it can read it. It works until it is revoked or, with
--token-ttl, until that long from now; an expired token is refused like
an unknown one.

--scope share makes a token that may only create, list and revoke its
user's share links (loom share): the API, the dashboard, MCP and sync
refuse it with 403, so a hub can be reached for sharing without
exposing the sessions it holds.`,
		Example: `  loom token create --user alice --name "telegram bot"
  loom token create --user alice -n "sharing from the laptop" --scope share
  TOKEN=$(loom token create --user bot)
  loom token create --user ci --name "nightly job" --token-ttl 30d
  loom token create --user alice --json | jq -r .secret`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := loom.ValidTokenName(opts.Name); err != nil {
				return command.UsageErrorf("--name: %s", loom.ErrorMessage(err))
			}
			var err error
			if opts.TTL, err = TTLFlag(cmd); err != nil {
				return err
			}
			if err := loom.ValidTokenScope(opts.Scope); err != nil {
				return command.UsageErrorf("--scope: %s", loom.ErrorMessage(err))
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Name, "name", "n", "", "a label saying where the token is used")
	cmd.Flags().StringVar(&opts.Scope, "scope", loom.ScopeFull, "what the token may do: full, or share (share links only)")
	AddTTLFlag(cmd, "the token expires after `DURATION` (30d, 12h, 2w; default never)")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	ts, err := opts.TokenStore(ctx)
	if err != nil {
		return err
	}
	if opts.Scope == "" {
		opts.Scope = loom.ScopeFull
	}
	tok, secret, err := ts.CreateScopedToken(ctx, opts.User, opts.Name, opts.Scope, opts.TTL)
	if err != nil {
		return err
	}
	if opts.JSON {
		// The token's own fields and its secret, in one object.
		b, err := json.Marshal(tok)
		if err != nil {
			return err
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			return err
		}
		out["secret"] = secret
		return command.WriteJSON(opts.IO.Out, out)
	}
	fmt.Fprintln(opts.IO.Out, secret)
	if opts.IO.IsStderrTTY() {
		expires := ""
		if tok.ExpiresAt != nil {
			expires = " It expires " + tok.ExpiresAt.Local().Format("Jan 2, 2006 15:04 MST") + "."
		}
		scope := ""
		if tok.Scope == loom.ScopeShare {
			scope = " It may only create, list and revoke share links."
		}
		fmt.Fprintf(opts.IO.ErrOut, "Token %s for user %s, kept in the store %s: a loom serve of that store takes it.%s%s It is shown only now; 'loom token revoke %s' ends it.\n",
			tok.ID, tok.UserID, opts.StoreName(), expires, scope, term.DisplayID(opts.IO, tok.ID))
	}
	return nil
}

// ListOptions are the options of `loom token list`.
type ListOptions struct {
	IO         *term.IOStreams
	TokenStore func(context.Context) (loom.TokenStore, error)
	Now        func() time.Time
	// User is --user: list only that user's tokens (empty: everyone's).
	User string
	JSON bool
}

// newCmdTokenList builds loom token list. runF, when not nil, is
// called with the options instead of running the command (for tests).
func newCmdTokenList(inv *command.Invocation, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: inv.IO, TokenStore: tokenStore(inv), Now: inv.TimeNow}
	cmd := &cobra.Command{
		Use:   "list [--user NAME]",
		Short: "List access tokens (never their secrets)",
		Long: `List access tokens, oldest first: id, user, name, when made, when last
used (noted at most once a minute), when revoked and when it expires
(or expired). With --user, only that user's. --json prints every field,
with last_used_at, revoked_at and expires_at null when not set.`,
		Example: `  loom token list
  loom token list --user alice --json`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.User, opts.JSON = inv.UserFlag(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	ts, err := opts.TokenStore(ctx)
	if err != nil {
		return err
	}
	list, err := ts.Tokens(ctx, opts.User)
	if err != nil {
		return err
	}
	if opts.JSON {
		if list == nil {
			list = []*loom.Token{}
		}
		return command.WriteJSON(opts.IO.Out, list)
	}
	if len(list) == 0 {
		if opts.IO.IsStdoutTTY() {
			fmt.Fprintln(opts.IO.ErrOut, "No tokens. 'loom token create --user NAME' makes one; 'loom serve' makes one for you.")
		}
		return nil
	}
	now := opts.Now()
	cs := opts.IO.ColorScheme()
	tp := term.NewTable(opts.IO)
	// EXPIRES comes last so that the columns scripts read before it
	// existed stay where they were. The scope is in --json, and a
	// share-only token's name is marked.
	tp.Header("ID", "USER", "NAME", "CREATED", "LAST USED", "REVOKED", "EXPIRES")
	tp.Flex(2)
	// Tokens made in the same minute share 8 characters; a shown prefix
	// must work as revoke's argument, which looks among every user's.
	every := list
	if opts.User != "" {
		if every, err = ts.Tokens(ctx, ""); err != nil {
			return err
		}
	}
	ids := make([]string, len(every))
	for i, t := range every {
		ids[i] = t.ID
	}
	idLen := term.AbbrevLen(ids)
	for _, t := range list {
		tp.AddField(term.AbbrevID(opts.IO, t.ID, idLen), cs.Cyan)
		tp.AddField(t.UserID, nil)
		name := t.Name
		if t.Scope == loom.ScopeShare {
			name = strings.TrimSpace(name + " [share only]")
		}
		tp.AddField(name, nil)
		tp.AddField(term.DisplayTime(opts.IO, t.CreatedAt, now), cs.Gray)
		used, revoked := "", ""
		if t.LastUsedAt != nil {
			used = term.DisplayTime(opts.IO, *t.LastUsedAt, now)
		} else if opts.IO.IsStdoutTTY() {
			used = "never"
		}
		if t.RevokedAt != nil {
			revoked = term.DisplayTime(opts.IO, *t.RevokedAt, now)
		}
		tp.AddField(used, cs.Gray)
		tp.AddField(revoked, cs.Red)
		switch {
		case t.ExpiresAt == nil && opts.IO.IsStdoutTTY():
			tp.AddField("never", cs.Gray)
		case t.ExpiresAt == nil:
			tp.AddField("", nil)
		case !opts.IO.IsStdoutTTY():
			tp.AddField(loom.FormatTime(*t.ExpiresAt), nil)
		case t.Expired(now):
			tp.AddField("expired "+human.ShortAgo(now, *t.ExpiresAt), cs.Red)
		default:
			tp.AddField(shortUntil(now, *t.ExpiresAt), cs.Gray)
		}
		tp.EndRow()
	}
	return tp.Render()
}

// RevokeOptions are the options of `loom token revoke`.
type RevokeOptions struct {
	IO         *term.IOStreams
	TokenStore func(context.Context) (loom.TokenStore, error)
	JSON       bool

	Ref string
}

// newCmdTokenRevoke builds loom token revoke. runF, when not nil, is
// called with the options instead of running the command (for tests).
func newCmdTokenRevoke(inv *command.Invocation, runF func(*RevokeOptions) error) *cobra.Command {
	opts := &RevokeOptions{IO: inv.IO, TokenStore: tokenStore(inv)}
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an access token for good",
		Long: `Revoke an access token: requests with it are refused from then on, and a
dashboard logged in with it is logged out. ID is the full id or a unique
prefix of at least 4 characters, as 'loom token list' shows.`,
		Example: `  loom token revoke 0196a3b2`,
		Args:    command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref, opts.JSON = args[0], inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return revokeRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func revokeRun(ctx context.Context, opts *RevokeOptions) error {
	ts, err := opts.TokenStore(ctx)
	if err != nil {
		return err
	}
	tok, err := resolveToken(ctx, ts, opts.Ref)
	if err != nil {
		return err
	}
	if err := ts.RevokeToken(ctx, tok.ID); err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]string{"revoked": tok.ID})
	}
	fmt.Fprintf(opts.IO.ErrOut, "Revoked token %s of user %s.\n", tok.ID, tok.UserID)
	return nil
}

// resolveToken finds the token ref names: its id or a unique prefix of at
// least 4 characters.
func resolveToken(ctx context.Context, ts loom.TokenStore, ref string) (*loom.Token, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	list, err := ts.Tokens(ctx, "")
	if err != nil {
		return nil, err
	}
	var found []*loom.Token
	for _, t := range list {
		if t.ID == ref {
			return t, nil
		}
		if len(ref) >= 4 && strings.HasPrefix(t.ID, ref) {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
		return nil, loom.Errorf(loom.ENOTFOUND, "no token matches %q", ref)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, t := range found {
		ids[i] = t.ID
	}
	return nil, loom.Errorf(loom.EAMBIGUOUS, "%q matches %d tokens: %s", ref, len(found), strings.Join(ids, ", "))
}

// shortUntil says in few columns how far ahead t is, for tables. It
// rounds to the nearest unit, so that a token made for 30d shows "in
// 30d", not 29.
func shortUntil(now, t time.Time) string {
	d := t.Sub(now)
	in := func(unit time.Duration, suffix string) string {
		return fmt.Sprintf("in %d%s", int((d+unit/2)/unit), suffix)
	}
	switch {
	case d < time.Minute:
		return "in <1m"
	case d < time.Hour:
		return in(time.Minute, "m")
	case d < 24*time.Hour:
		return in(time.Hour, "h")
	case d <= 31*24*time.Hour:
		return in(24*time.Hour, "d")
	default:
		return t.Local().Format("Jan 2 2006")
	}
}
