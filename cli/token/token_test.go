package token

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/sqlite"
)

// newStore is a SQLite store in a temporary directory, and the function
// the commands open it with.
func newStore(t *testing.T) (*sqlite.Store, func(context.Context) (loom.TokenStore, error)) {
	t.Helper()
	st := cmdtest.Store(t)
	return st, func(context.Context) (loom.TokenStore, error) { return st, nil }
}

// The commands fill their options from their flags, arguments and the
// global flags, and refuse what makes no token.
func TestNewCmdTokenOptions(t *testing.T) {
	t.Parallel()
	c := cmdtest.Options(t, newCmdTokenCreate, "--name", "telegram bot", "--token-ttl", "30d", "--scope", "share", "--user", "alice", "--json")
	if c.Name != "telegram bot" || c.TTL != 30*24*time.Hour || c.Scope != loom.ScopeShare || c.User != "alice" || !c.JSON || c.TokenStore == nil || c.StoreName == nil {
		t.Errorf("create options: %+v", c)
	}
	if c := cmdtest.Options(t, newCmdTokenCreate); c.Name != "" || c.TTL != 0 || c.Scope != loom.ScopeFull || c.User != "local" || c.JSON {
		t.Errorf("create's defaults: %+v", c)
	}
	for _, bad := range [][]string{
		{"--token-ttl", "0s"},
		{"--token-ttl", "soon"},
		{"--scope", "admin"},
		{"--name", "two\nlines"},
		{"extra"},
	} {
		cmdtest.Rejects(t, newCmdTokenCreate, bad...)
	}
	if err := cmdtest.Rejects(t, newCmdTokenCreate, "--token-ttl", "0s"); err.Error() != "--token-ttl must be more than zero" {
		t.Errorf("--token-ttl 0s: %v", err)
	}

	if l := cmdtest.Options(t, newCmdTokenList); l.User != "" || l.JSON || l.Now == nil {
		t.Errorf("list without --user lists everyone's: %+v", l)
	}
	if l := cmdtest.Options(t, newCmdTokenList, "--user", "alice"); l.User != "alice" {
		t.Errorf("list --user alice: %+v", l)
	}

	if r := cmdtest.Options(t, newCmdTokenRevoke, "0196a3b2", "--json"); r.Ref != "0196a3b2" || !r.JSON {
		t.Errorf("revoke options: %+v", r)
	}
	cmdtest.Rejects(t, newCmdTokenRevoke)
	cmdtest.Rejects(t, newCmdTokenRevoke, "0196a3b2", "0196a3b3")
}

// create prints the secret alone on stdout, and the store then takes
// it as the user's token of the scope asked.
func TestCreateRunMakesATokenTheStoreTakes(t *testing.T) {
	t.Parallel()
	st, open := newStore(t)
	ios, _, out, errOut := term.Test()
	opts := &CreateOptions{IO: ios, TokenStore: open, StoreName: func() string { return "/data/sessions.db" },
		User: "alice", Name: "bot", Scope: loom.ScopeShare, TTL: 24 * time.Hour}
	if err := createRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimSuffix(out.String(), "\n")
	if !strings.HasPrefix(secret, loom.TokenPrefix) || strings.Contains(secret, "\n") {
		t.Fatalf("stdout %q, want the secret alone", out.String())
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr, not a terminal: %q", errOut.String())
	}
	tok, err := st.Authenticate(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if tok.UserID != "alice" || tok.Name != "bot" || tok.Scope != loom.ScopeShare || tok.ExpiresAt == nil {
		t.Errorf("the stored token: %+v", tok)
	}

	// On a terminal, stderr says where it is kept and what it may do.
	ios, _, _, errOut = term.Test()
	ios.SetStderrTTY(true)
	opts.IO = ios
	if err := createRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"for user alice, kept in the store /data/sessions.db", "It expires ", "It may only create, list and revoke share links.", "'loom token revoke "} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr on a terminal lacks %q:\n%s", want, errOut.String())
		}
	}

	// --json prints the token's fields and its secret.
	ios, _, out, _ = term.Test()
	opts.IO, opts.JSON, opts.Scope, opts.TTL = ios, true, "", 0
	if err := createRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID, Secret, Scope string
		ExpiresAt         *string `json:"expires_at"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if tok, err := st.Authenticate(t.Context(), got.Secret); err != nil || tok.ID != got.ID || got.Scope != loom.ScopeFull || got.ExpiresAt != nil {
		t.Errorf("--json %s: the store has %+v, %v", out.String(), tok, err)
	}
}

// list prints a line per token, oldest first, only --user's with it,
// and never a secret.
func TestListRunPrintsTokens(t *testing.T) {
	t.Parallel()
	st, open := newStore(t)
	ctx := t.Context()
	alice, aliceSecret, err := st.CreateScopedToken(ctx, "alice", "laptop", loom.ScopeFull, 0)
	if err != nil {
		t.Fatal(err)
	}
	bob, _, err := st.CreateScopedToken(ctx, "bob", "sharing", loom.ScopeShare, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RevokeToken(ctx, alice.ID); err != nil {
		t.Fatal(err)
	}
	list := func(user string, json bool) string {
		t.Helper()
		ios, _, out, _ := term.Test()
		if err := listRun(ctx, &ListOptions{IO: ios, TokenStore: open, Now: time.Now, User: user, JSON: json}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	lines := strings.Split(strings.TrimSuffix(list("", false), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("list: %q, want a line per token", lines)
	}
	a, b := strings.Split(lines[0], "\t"), strings.Split(lines[1], "\t")
	if len(a) != 7 || !strings.HasPrefix(alice.ID, a[0]) || a[1] != "alice" || a[2] != "laptop" || a[5] == "" || a[6] != "" {
		t.Errorf("alice's revoked token that never expires: %q", a)
	}
	if len(b) != 7 || !strings.HasPrefix(bob.ID, b[0]) || b[1] != "bob" || b[2] != "sharing [share only]" || b[5] != "" || b[6] != loom.FormatTime(*bob.ExpiresAt) {
		t.Errorf("bob's share-only token: %q", b)
	}
	if got := list("bob", false); strings.Contains(got, "alice") || !strings.Contains(got, "bob") {
		t.Errorf("list --user bob:\n%s", got)
	}
	var toks []*loom.Token
	if err := json.Unmarshal([]byte(list("", true)), &toks); err != nil || len(toks) != 2 || toks[0].ID != alice.ID || toks[0].RevokedAt == nil {
		t.Errorf("list --json: %+v, %v", toks, err)
	}
	if got := list("", true) + list("", false); strings.Contains(got, aliceSecret) {
		t.Errorf("list printed a secret:\n%s", got)
	}
	if got := list("carol", true); got != "[]\n" {
		t.Errorf("list --user carol --json: %q, want []", got)
	}
}

// revoke takes a unique prefix, and the store refuses the token after.
func TestRevokeRunEndsTheToken(t *testing.T) {
	t.Parallel()
	st, open := newStore(t)
	ctx := t.Context()
	tok, secret, err := st.CreateScopedToken(ctx, "alice", "bot", loom.ScopeFull, 0)
	if err != nil {
		t.Fatal(err)
	}
	ios, _, out, errOut := term.Test()
	if err := revokeRun(ctx, &RevokeOptions{IO: ios, TokenStore: open, Ref: strings.ToUpper(tok.ID[:8])}); err != nil {
		t.Fatal(err)
	}
	if want := "Revoked token " + tok.ID + " of user alice.\n"; errOut.String() != want || out.Len() != 0 {
		t.Errorf("revoke: stdout %q, stderr %q, want %q", out.String(), errOut.String(), want)
	}
	if _, err := st.Authenticate(ctx, secret); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("a revoked token authenticates: %v", err)
	}

	ios, _, out, _ = term.Test()
	other, _, err := st.CreateScopedToken(ctx, "bob", "", loom.ScopeFull, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := revokeRun(ctx, &RevokeOptions{IO: ios, TokenStore: open, Ref: other.ID, JSON: true}); err != nil {
		t.Fatal(err)
	}
	if want := `{"revoked":"` + other.ID + `"}`; strings.Join(strings.Fields(out.String()), "") != want {
		t.Errorf("revoke --json: %q, want %s", out.String(), want)
	}
	// Both ids start with the same time; fewer than 4 characters match none.
	for ref, code := range map[string]string{"ffffffff": loom.ENOTFOUND, tok.ID[:4]: loom.EAMBIGUOUS, tok.ID[:3]: loom.ENOTFOUND} {
		if err := revokeRun(ctx, &RevokeOptions{IO: ios, TokenStore: open, Ref: ref}); loom.ErrorCode(err) != code {
			t.Errorf("revoke %s: %v, want %s", ref, err, code)
		}
	}
}
