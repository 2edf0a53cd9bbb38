package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
)

// newCmdToken groups the access-token commands.
func newCmdToken(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "token <command>",
		Short:   "Create, list and revoke access tokens of loom serve",
		Aliases: []string{"tokens"},
		Long: `Access tokens let programs and browsers use loom serve. Each token acts
as one user, who sees only their own sessions. Only a hash of each token
is stored: a token is shown once, when it is made.`,
		Example: `  loom token create --user alice --name "telegram bot"
  loom token list
  loom token revoke 0196a3b2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdTokenCreate(f, nil), newCmdTokenList(f, nil), newCmdTokenRevoke(f, nil))
	return cmd
}

// tokenStore returns the store's token store.
func (f *Factory) tokenStore(ctx context.Context) (loom.TokenStore, error) {
	st, err := f.CreateStore(ctx)
	if err != nil {
		return nil, err
	}
	ts, ok := st.(loom.TokenStore)
	if !ok {
		return nil, fmt.Errorf("this store keeps no access tokens")
	}
	return ts, nil
}

// TokenCreateOptions are the options of `loom token create`.
type TokenCreateOptions struct {
	f    *Factory
	Name string
}

func newCmdTokenCreate(f *Factory, runF func(*TokenCreateOptions) error) *cobra.Command {
	opts := &TokenCreateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "create [--user NAME] [--name LABEL]",
		Short: "Make an access token and print it once",
		Long: `Make an access token for a user (--user, else $LOOM_USER, else local) and
print it on stdout. It is not shown again: store it where the program
that uses it can read it.`,
		Example: `  loom token create --user alice --name "telegram bot"
  TOKEN=$(loom token create --user bot)
  loom token create --user alice --json | jq -r .secret`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := loom.ValidTokenName(opts.Name); err != nil {
				return usageErrorf("--name: %s", loom.ErrorMessage(err))
			}
			if runF != nil {
				return runF(opts)
			}
			return tokenCreateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "a label saying where the token is used")
	return cmd
}

func tokenCreateRun(ctx context.Context, opts *TokenCreateOptions) error {
	f := opts.f
	ts, err := f.tokenStore(ctx)
	if err != nil {
		return err
	}
	tok, secret, err := ts.CreateToken(ctx, f.User(), opts.Name)
	if err != nil {
		return err
	}
	if f.JSON() {
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
		return writeJSON(f.IO.Out, out)
	}
	fmt.Fprintln(f.IO.Out, secret)
	if f.IO.IsStderrTTY() {
		fmt.Fprintf(f.IO.ErrOut, "Token %s for user %s. It is shown only now; 'loom token revoke %s' ends it.\n", tok.ID, tok.UserID, displayID(f.IO, tok.ID))
	}
	return nil
}

// TokenListOptions are the options of `loom token list`.
type TokenListOptions struct {
	f *Factory
}

func newCmdTokenList(f *Factory, runF func(*TokenListOptions) error) *cobra.Command {
	opts := &TokenListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list [--user NAME]",
		Short: "List access tokens (never their secrets)",
		Long: `List access tokens, oldest first: id, user, name, when made, last used and
revoked. With --user, only that user's.`,
		Example: `  loom token list
  loom token list --user alice --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return tokenListRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func tokenListRun(ctx context.Context, opts *TokenListOptions) error {
	f := opts.f
	ts, err := f.tokenStore(ctx)
	if err != nil {
		return err
	}
	list, err := ts.Tokens(ctx, f.flags.user)
	if err != nil {
		return err
	}
	if f.JSON() {
		if list == nil {
			list = []*loom.Token{}
		}
		return writeJSON(f.IO.Out, list)
	}
	if len(list) == 0 {
		if f.IO.IsStdoutTTY() {
			fmt.Fprintln(f.IO.ErrOut, "No tokens. 'loom token create --user NAME' makes one; 'loom serve' makes one for you.")
		}
		return nil
	}
	now := f.now()
	cs := f.IO.ColorScheme()
	tp := newTablePrinter(f.IO)
	tp.Header("ID", "USER", "NAME", "CREATED", "LAST USED", "REVOKED")
	tp.Flex(2)
	// Tokens made in the same minute share 8 characters; a shown prefix
	// must work as revoke's argument, which looks among every user's.
	every := list
	if f.flags.user != "" {
		if every, err = ts.Tokens(ctx, ""); err != nil {
			return err
		}
	}
	ids := make([]string, len(every))
	for i, t := range every {
		ids[i] = t.ID
	}
	idLen := abbrevLen(ids)
	for _, t := range list {
		tp.AddField(abbrevID(f.IO, t.ID, idLen), cs.Cyan)
		tp.AddField(t.UserID, nil)
		tp.AddField(t.Name, nil)
		tp.AddField(displayTime(f.IO, t.CreatedAt, now), cs.Gray)
		used, revoked := "", ""
		if t.LastUsedAt != nil {
			used = displayTime(f.IO, *t.LastUsedAt, now)
		} else if f.IO.IsStdoutTTY() {
			used = "never"
		}
		if t.RevokedAt != nil {
			revoked = displayTime(f.IO, *t.RevokedAt, now)
		}
		tp.AddField(used, cs.Gray)
		tp.AddField(revoked, cs.Red)
		tp.EndRow()
	}
	return tp.Render()
}

// TokenRevokeOptions are the options of `loom token revoke`.
type TokenRevokeOptions struct {
	f   *Factory
	Ref string
}

func newCmdTokenRevoke(f *Factory, runF func(*TokenRevokeOptions) error) *cobra.Command {
	opts := &TokenRevokeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an access token for good",
		Long: `Revoke an access token: requests with it are refused from then on, and a
dashboard logged in with it is logged out. ID is the full id or a unique
prefix of at least 4 characters, as 'loom token list' shows.`,
		Example: `  loom token revoke 0196a3b2`,
		Args:    argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if runF != nil {
				return runF(opts)
			}
			return tokenRevokeRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func tokenRevokeRun(ctx context.Context, opts *TokenRevokeOptions) error {
	f := opts.f
	ts, err := f.tokenStore(ctx)
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
	if f.JSON() {
		return writeJSON(f.IO.Out, map[string]string{"revoked": tok.ID})
	}
	fmt.Fprintf(f.IO.ErrOut, "Revoked token %s of user %s.\n", tok.ID, tok.UserID)
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
