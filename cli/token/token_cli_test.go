package token_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestTokenCommands(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	r := fx.Run(t, "token", "create", "--user", "alice", "--name", "telegram bot")
	if r.Code != 0 {
		t.Fatalf("create: exit %d: %s", r.Code, r.Stderr)
	}
	secret := strings.TrimSpace(r.Stdout)
	if !strings.HasPrefix(secret, loom.TokenPrefix) || strings.Contains(secret, "\n") {
		t.Fatalf("create printed %q, want the secret alone", r.Stdout)
	}
	r = fx.Run(t, "token", "create", "--json")
	if r.Code != 0 {
		t.Fatalf("create --json: exit %d: %s", r.Code, r.Stderr)
	}
	var created struct {
		ID, Secret string
		UserID     string `json:"user_id"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &created); err != nil || created.UserID != "local" || !strings.HasPrefix(created.Secret, loom.TokenPrefix) || created.ID == "" {
		t.Fatalf("create --json = %s (%v)", r.Stdout, err)
	}

	// The secrets authenticate as their users, and are stored hashed.
	st := fx.OpenStore(t)
	tok, err := st.Authenticate(context.Background(), secret)
	if err != nil || tok.UserID != "alice" || tok.Name != "telegram bot" {
		t.Fatalf("authenticate: %+v, %v", tok, err)
	}
	var hashes int
	st.DB().QueryRow(`SELECT count(*) FROM tokens WHERE hash = ?`, loom.HashToken(secret)).Scan(&hashes)
	var plain int
	st.DB().QueryRow(`SELECT count(*) FROM tokens WHERE hash = ? OR name = ? OR id = ?`, secret, secret, secret).Scan(&plain)
	if hashes != 1 || plain != 0 {
		t.Errorf("store holds %d hashes and %d plain copies of the secret", hashes, plain)
	}

	r = fx.Run(t, "token", "list")
	if r.Code != 0 || strings.Count(r.Stdout, "\n") != 2 || strings.Contains(r.Stdout, loom.TokenPrefix) {
		t.Fatalf("list: exit %d\n%s", r.Code, r.Stdout)
	}
	if !strings.Contains(r.Stdout, tok.ID+"\talice\ttelegram bot\t") {
		t.Errorf("list lacks alice's token:\n%s", r.Stdout)
	}
	r = fx.Run(t, "token", "list", "--user", "alice", "--json")
	var list []loom.Token
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || len(list) != 1 || list[0].ID != tok.ID {
		t.Fatalf("list --user alice --json = %s (%v)", r.Stdout, err)
	}
	if strings.Contains(r.Stdout, "secret") || strings.Contains(r.Stdout, "hash") {
		t.Errorf("list --json shows secrets: %s", r.Stdout)
	}
	r = fx.RunWith(t, clitest.RunOpts{Tty: true}, "token", "list")
	if r.Code != 0 || !strings.Contains(r.Stdout, "LAST USED") {
		t.Errorf("list on a terminal:\n%s", r.Stdout)
	}

	r = fx.Run(t, "token", "revoke", tok.ID[:len(tok.ID)-4])
	if r.Code != 0 || !strings.Contains(r.Stderr, "Revoked token "+tok.ID) {
		t.Fatalf("revoke by prefix: exit %d: %s", r.Code, r.Stderr)
	}
	if _, err := st.Authenticate(context.Background(), secret); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("revoked token still authenticates: %v", err)
	}
	r = fx.Run(t, "token", "list", "--user", "alice")
	if fields := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\t"); len(fields) != 7 || fields[5] == "" {
		t.Errorf("list does not show the revocation: %q", r.Stdout)
	}

	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"token", "revoke", "ffffffff"}, cli.ExitNotFound},
		{[]string{"token", "revoke", "01"}, cli.ExitNotFound}, // too short to be a prefix
		{[]string{"token", "revoke"}, cli.ExitUsage},
		{[]string{"token", "create", "--name", "two\nlines"}, cli.ExitUsage},
		{[]string{"token", "frobnicate"}, cli.ExitUsage},
	} {
		if r := fx.Run(t, tc.args...); r.Code != tc.code {
			t.Errorf("loom %s: exit %d, want %d (%s)", strings.Join(tc.args, " "), r.Code, tc.code, r.Stderr)
		}
	}
	// Two tokens made in the same millisecond share a prefix: ambiguous.
	a, _, _ := st.CreateToken(context.Background(), "x", "", 0)
	b, _, _ := st.CreateToken(context.Background(), "y", "", 0)
	common := 0
	for common < len(a.ID) && a.ID[common] == b.ID[common] {
		common++
	}
	if common >= 4 {
		if r := fx.Run(t, "token", "revoke", a.ID[:common]); r.Code != cli.ExitAmbiguous {
			t.Errorf("revoke an ambiguous prefix: exit %d (%s)", r.Code, r.Stderr)
		}
	}
	// The ids a terminal shows are prefixes revoke accepts, even when
	// tokens share their first 8 characters and the list is one user's.
	r = fx.RunWith(t, clitest.RunOpts{Tty: true}, "token", "list", "--user", "x")
	lines := strings.Split(strings.TrimSpace(ansi.Strip(r.Stdout)), "\n")
	shown := strings.Fields(lines[len(lines)-1])[0]
	if !strings.HasPrefix(a.ID, shown) {
		t.Fatalf("list shows %q for %s", shown, a.ID)
	}
	if r := fx.Run(t, "token", "revoke", shown); r.Code != 0 {
		t.Errorf("revoke the shown prefix %q: exit %d (%s)", shown, r.Code, r.Stderr)
	}
}

// Token JSON has one shape: every field, unset times as null, and the
// secret only when the token is made.
func TestTokenJSONShape(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	keys := func(s string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%v in %s", err, s)
		}
		var k []string
		for key := range m {
			k = append(k, key)
		}
		sort.Strings(k)
		return strings.Join(k, " ")
	}
	out := fx.MustRun(t, "token", "create", "--token-ttl", "1d12h", "--json")
	if got, want := keys(out), "created_at expires_at id last_used_at name revoked_at scope secret user_id"; got != want {
		t.Errorf("create --json keys: %s, want %s", got, want)
	}
	created := clitest.DecodeJSON[map[string]any](t, out)
	made, _ := time.Parse(time.RFC3339, created["created_at"].(string))
	if exp, _ := time.Parse(time.RFC3339, created["expires_at"].(string)); exp.Sub(made) != 36*time.Hour {
		t.Errorf("--token-ttl 1d12h: created %v, expires %v", created["created_at"], created["expires_at"])
	}
	fx.MustRun(t, "token", "create")
	var list []map[string]any
	if err := json.Unmarshal([]byte(fx.MustRun(t, "token", "list", "--json")), &list); err != nil || len(list) != 2 {
		t.Fatalf("list --json: %v, %v", list, err)
	}
	for _, tok := range list {
		b, _ := json.Marshal(tok)
		if got, want := keys(string(b)), "created_at expires_at id last_used_at name revoked_at scope user_id"; got != want {
			t.Errorf("list --json keys: %s, want %s", got, want)
		}
	}
	if list[1]["expires_at"] != nil || list[1]["last_used_at"] != nil {
		t.Errorf("a token without lifetime or use: %v", list[1])
	}
}

// The table shows each token's expiry: never, in how long, or expired
// how long ago on a terminal; the time when piped. Bad --token-ttl
// values are usage errors.
func TestTokenListExpiry(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	// The store's clock is the fixture's (a second a write from base);
	// the command's is base+2h.
	fx.MustRun(t, "token", "create", "--name", "hour", "--token-ttl", "1h")
	fx.MustRun(t, "token", "create", "--name", "month", "--token-ttl", "30d")
	fx.MustRun(t, "token", "create", "--name", "forever")
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "token", "list")
	screen := ansi.Strip(r.Stdout)
	if !strings.Contains(screen, "EXPIRES") {
		t.Fatalf("no EXPIRES column:\n%s", screen)
	}
	for name, want := range map[string]string{"hour": "expired 59m ago", "month": "in 30d", "forever": "never"} {
		found := false
		for _, line := range clitest.Lines(screen) {
			if strings.Contains(line, " "+name+" ") && strings.HasSuffix(strings.TrimSpace(line), want) {
				found = true
			}
		}
		if !found {
			t.Errorf("token %s: want %q at the end of its row:\n%s", name, want, screen)
		}
	}
	out := fx.MustRun(t, "token", "list")
	for _, line := range clitest.Lines(out) {
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			t.Fatalf("piped row has %d fields: %q", len(f), line)
		}
		if _, err := loom.ParseTime(f[6]); (f[2] == "forever") != (f[6] == "") || (f[6] != "" && err != nil) {
			t.Errorf("piped row of %s: EXPIRES %q", f[2], f[6])
		}
	}

	for _, args := range [][]string{
		{"token", "create", "--token-ttl", "0"},
		{"token", "create", "--token-ttl", "0s"},
		{"token", "create", "--token-ttl", "soon"},
		{"token", "create", "--token-ttl", "5ms"},
	} {
		if r := fx.Run(t, args...); r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "--token-ttl") {
			t.Errorf("loom %s: exit %d, %s", strings.Join(args, " "), r.Code, r.Stderr)
		}
	}
}
