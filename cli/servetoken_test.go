package cli_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/syncio"
)

// binServe is the loom binary serving on a free port.
type binServe struct {
	base, token string
	stderr      *syncio.Buffer
	cmd         *exec.Cmd
}

// serveBinary starts `loom serve` with args on a free port and waits for
// the line with its address and token.
func serveBinary(t *testing.T, fx *clitest.Fixture, args ...string) *binServe {
	t.Helper()
	cmd := exec.Command(clitest.LoomBinary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = fx.Project
	cmd.Env = fx.BinEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sv := &binServe{stderr: &syncio.Buffer{}, cmd: cmd}
	cmd.Stderr = sv.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan []string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if m := clitest.ServeURL.FindStringSubmatch(lines.Text()); m != nil {
				found <- m
				io.Copy(io.Discard, stdout)
				return
			}
		}
		close(found)
	}()
	select {
	case m, ok := <-found:
		if !ok {
			t.Fatalf("loom serve %s printed no URL; stderr:\n%s", strings.Join(args, " "), sv.stderr)
		}
		sv.base, sv.token = m[1], m[2]
	case <-time.After(15 * time.Second):
		t.Fatalf("loom serve %s did not start; stderr:\n%s", strings.Join(args, " "), sv.stderr)
	}
	return sv
}

// stop ends the server as Ctrl+C does.
func (sv *binServe) stop(t *testing.T) {
	t.Helper()
	sv.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- sv.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v; stderr:\n%s", err, sv.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGINT")
	}
}

// get sends GET path with token and returns the status and body.
func (sv *binServe) get(t *testing.T, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", sv.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// tokensJSON is `loom token list --json` through the binary.
func tokensJSON(t *testing.T, fx *clitest.Fixture, args ...string) []*loom.Token {
	t.Helper()
	var list []*loom.Token
	out := fx.MustExec(t, append([]string{"token", "list", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("token list --json: %v in %s", err, out)
	}
	return list
}

// loom serve prints the same token at every start while the store takes
// it: the secret is kept in the state directory with mode 0600 (set back
// when it was widened), and a revoked token, or one of another store,
// gives way to a new one.
func TestBinaryServeKeepsToken(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	kept := filepath.Join(fx.Home, "state", "serve-token-local")
	keptSecret := func() string {
		t.Helper()
		fi, err := os.Stat(kept)
		if err != nil {
			t.Fatalf("the token is not kept: %v", err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", kept, mode)
		}
		b, _ := os.ReadFile(kept)
		return strings.TrimSpace(string(b))
	}
	authenticates := func(sv *binServe, token string) {
		t.Helper()
		if code, body := sv.get(t, "/api/v1/sessions", token); code != 200 {
			t.Errorf("the printed token: GET /api/v1/sessions = %d %s", code, body)
		}
	}

	first := serveBinary(t, fx)
	if keptSecret() != first.token {
		t.Fatal("the kept secret is not the printed one")
	}
	authenticates(first, first.token)
	// What a process writes to stderr before its URL on stdout may reach
	// the test after the URL, the two pipes being read apart.
	clitest.WaitFor(t, first.stderr, "New token ")
	if strings.Contains(first.stderr.String(), first.token) {
		t.Errorf("first start's stderr:\n%s", first.stderr)
	}
	first.stop(t)

	second := serveBinary(t, fx)
	if second.token != first.token {
		t.Fatalf("second start printed another token:\n%s\n%s", first.token, second.token)
	}
	authenticates(second, second.token)
	clitest.WaitFor(t, second.stderr, "Same token as at the last start")
	second.stop(t)
	if list := tokensJSON(t, fx); len(list) != 1 {
		t.Fatalf("%d tokens after two starts, want 1", len(list))
	}

	// A kept file others could read is set back to 0600, with a warning.
	if err := os.Chmod(kept, 0o644); err != nil {
		t.Fatal(err)
	}
	third := serveBinary(t, fx)
	if third.token != first.token || keptSecret() != first.token {
		t.Error("a widened file lost the token")
	}
	clitest.WaitFor(t, third.stderr, "could be read by others")
	third.stop(t)

	// Revoked: a new token, kept in its place.
	fx.MustExec(t, "token", "revoke", tokensJSON(t, fx)[0].ID)
	fourth := serveBinary(t, fx)
	if fourth.token == first.token || keptSecret() != fourth.token {
		t.Fatal("a revoked token was printed again, or the new one not kept")
	}
	authenticates(fourth, fourth.token)
	if code, _ := fourth.get(t, "/api/v1/sessions", first.token); code != 401 {
		t.Errorf("the revoked token: %d, want 401", code)
	}
	fourth.stop(t)

	// Another store does not know the kept token: it gets its own, and
	// then the first store does not know that one.
	other := filepath.Join(t.TempDir(), "other.db")
	if clitest.OnPostgres() {
		other = clitest.FreshSchema(t)
	}
	elsewhere := serveBinary(t, fx, "--db", other)
	if elsewhere.token == fourth.token || keptSecret() != elsewhere.token {
		t.Fatal("another store printed this store's token, or did not keep its own")
	}
	authenticates(elsewhere, elsewhere.token)
	elsewhere.stop(t)
	back := serveBinary(t, fx)
	if back.token == elsewhere.token {
		t.Fatal("a token of another store was printed")
	}
	authenticates(back, back.token)
	back.stop(t)

	// Each user has a token and a file of their own.
	alice := serveBinary(t, fx, "--user", "alice")
	if alice.token == back.token {
		t.Fatal("alice was given local's token")
	}
	alice.stop(t)
	if b, err := os.ReadFile(filepath.Join(fx.Home, "state", "serve-token-alice")); err != nil || strings.TrimSpace(string(b)) != alice.token {
		t.Errorf("alice's kept token: %q, %v", b, err)
	}
	if keptSecret() != back.token {
		t.Error("alice's start replaced local's kept token")
	}
}

// token list shows when each token was last used: never before, and after
// an API call with it, in the table and in --json.
func TestBinaryTokenLastUsed(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	var created struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(fx.MustExec(t, "token", "create", "--name", "bot", "--json")), &created); err != nil {
		t.Fatal(err)
	}
	botOf := func(list []*loom.Token) *loom.Token {
		for _, tok := range list {
			if tok.ID == created.ID {
				return tok
			}
		}
		t.Fatalf("token %s not listed", created.ID)
		return nil
	}
	if bot := botOf(tokensJSON(t, fx)); bot.LastUsedAt != nil {
		t.Fatalf("an unused token was last used at %v", bot.LastUsedAt)
	}
	sv := serveBinary(t, fx)
	before := time.Now().Add(-time.Second)
	if code, body := sv.get(t, "/api/v1/sessions", created.Secret); code != 200 {
		t.Fatalf("GET with the token: %d %s", code, body)
	}
	bot := botOf(tokensJSON(t, fx))
	if bot.LastUsedAt == nil || bot.LastUsedAt.Before(before) || bot.LastUsedAt.After(time.Now().Add(time.Second)) {
		t.Fatalf("last_used_at = %v after an API call", bot.LastUsedAt)
	}
	out := fx.MustExec(t, "token", "list")
	var row []string
	for _, line := range clitest.Lines(out) {
		if f := strings.Split(line, "\t"); f[0] == created.ID {
			row = f
		}
	}
	if len(row) != 7 || row[4] != loom.FormatTime(*bot.LastUsedAt) {
		t.Errorf("token list row %q, want LAST USED %s", row, loom.FormatTime(*bot.LastUsedAt))
	}
	sv.stop(t)
}

// --token-ttl gives new tokens an expiry, which token list shows; an
// expired token is refused like an unknown one. loom serve reuses a kept
// token only when it expires no later than --token-ttl asks.
func TestBinaryTokenTTL(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	if r := fx.Run(t, "serve", "--token-ttl", "-1h"); r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "--token-ttl") {
		t.Errorf("serve --token-ttl -1h: exit %d, %s", r.Code, r.Stderr)
	}
	sv := serveBinary(t, fx)
	noExpiry := sv.token

	var created map[string]any
	if err := json.Unmarshal([]byte(fx.MustExec(t, "token", "create", "--token-ttl", "2s", "--json")), &created); err != nil {
		t.Fatal(err)
	}
	secret, _ := created["secret"].(string)
	if code, body := sv.get(t, "/api/v1/sessions", secret); code != 200 {
		t.Fatalf("a token within its lifetime: %d %s", code, body)
	}
	made, err1 := time.Parse(time.RFC3339, created["created_at"].(string))
	expires, err2 := time.Parse(time.RFC3339, created["expires_at"].(string))
	if err1 != nil || err2 != nil || expires.Sub(made) != 2*time.Second {
		t.Fatalf("created %v, expires %v (%v, %v): want 2s apart", created["created_at"], created["expires_at"], err1, err2)
	}
	time.Sleep(time.Until(expires) + 50*time.Millisecond)
	code, body := sv.get(t, "/api/v1/sessions", secret)
	if code != 401 || !strings.Contains(body, `"unauthorized"`) || !strings.Contains(body, "expired") {
		t.Errorf("an expired token: %d %s", code, body)
	}
	if code, _ := sv.get(t, "/api/v1/sessions", noExpiry); code != 200 {
		t.Errorf("a token without a lifetime: %d", code)
	}
	sv.stop(t)

	// serve --token-ttl: the kept token never expires, so a new one is
	// made with the lifetime asked; a longer limit reuses it, and so does
	// a start without the flag.
	short := serveBinary(t, fx, "--token-ttl", "1h")
	if short.token == noExpiry {
		t.Fatal("serve --token-ttl 1h reused a token that never expires")
	}
	short.stop(t)
	var serveTok *loom.Token
	for _, tok := range tokensJSON(t, fx) {
		if tok.ExpiresAt != nil && strings.HasPrefix(tok.Name, "serve ") {
			serveTok = tok
		}
	}
	if serveTok == nil || serveTok.ExpiresAt.Sub(serveTok.CreatedAt) != time.Hour {
		t.Fatalf("the token of serve --token-ttl 1h: %+v", serveTok)
	}
	for _, args := range [][]string{{"--token-ttl", "2h"}, nil} {
		sv := serveBinary(t, fx, args...)
		if sv.token != short.token {
			t.Errorf("serve %v made a new token instead of the kept one, which expires in an hour", args)
		}
		sv.stop(t)
	}
}
