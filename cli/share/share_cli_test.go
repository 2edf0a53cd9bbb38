package share_test

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/share"
)

// shareResult is what loom share --json prints.
type shareResult struct {
	ID        string        `json:"id"`
	Link      string        `json:"link"`
	Hub       string        `json:"hub"`
	SessionID string        `json:"session_id"`
	ExpiresAt string        `json:"expires_at"`
	Preview   share.Preview `json:"preview"`
}

// hubExec runs the loom binary as the hub's machine (its home and store).
func hubExec(t *testing.T, hubHome, hubDB string, args ...string) clitest.Result {
	t.Helper()
	cmd := exec.Command(clitest.LoomBinary(t), args...)
	cmd.Env = []string{"LOOM_HOME=" + hubHome, "HOME=" + hubHome, "PATH=" + os.Getenv("PATH")}
	if hubDB != "" {
		cmd.Env = append(cmd.Env, "LOOM_DB="+hubDB)
	}
	return clitest.ExecCmd(t, cmd, "")
}

// hubSQL runs query on the hub's store: its SQLite file under hubHome,
// or hubDB on PostgreSQL.
func hubSQL(t *testing.T, hubHome, hubDB, query string) {
	t.Helper()
	ctx := context.Background()
	if hubDB != "" {
		pool, err := pgxpool.New(ctx, hubDB)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		if _, err := pool.Exec(ctx, query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(hubHome, "data", "sessions.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// hubHoldsBytes fails if the hub's store holds b: any file of its
// SQLite store, or a share's blob on PostgreSQL.
func hubHoldsBytes(t *testing.T, hubHome, hubDB, what string, b []byte) {
	t.Helper()
	if hubDB != "" {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, hubDB)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM shares WHERE position($1::bytea IN blob) > 0`, b).Scan(&n); err != nil || n > 0 {
			t.Errorf("the hub's shares: %d hold %s (%v)", n, what, err)
		}
		return
	}
	files, _ := filepath.Glob(filepath.Join(hubHome, "data", "sessions.db*"))
	if len(files) == 0 {
		t.Fatal("the hub's store is not there to read")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, b) {
			t.Errorf("the hub's %s holds %s", filepath.Base(f), what)
		}
	}
}

// loom share end to end, through a real loom serve: a share-only token
// shares and does nothing else; the preview counts the secrets redacted
// and names the paths, and off a terminal nothing is published without
// --yes; the link's ciphertext opens with its key to the session,
// redacted, with paths hidden; the hub's store and logs hold none of its
// text; revoke makes the link 404 and deletes the ciphertext; an expiry
// past (written into the hub's store) makes it 404 too; revoke --all ends
// every live share.
func TestShareLink(t *testing.T) {
	t.Parallel()
	hubDB := ""
	if clitest.OnPostgres() {
		hubDB = clitest.FreshSchema(t)
	}
	srv, hubHome, _ := clitest.StartHub(t, hubDB)
	shareTok := strings.TrimSpace(hubExec(t, hubHome, hubDB, "token", "create", "--user", "local", "--scope", "share").Stdout)
	if !strings.HasPrefix(shareTok, loom.TokenPrefix) {
		t.Fatalf("token create --scope share printed %q", shareTok)
	}
	fx := clitest.NewEmptyFixture(t)
	s, secretValues := clitest.SeedSecrets(t, fx)
	fx.ExtraEnv = []string{"LOOM_SHARE_HUB=" + srv.Base, "LOOM_SHARE_TOKEN=" + shareTok}

	// The share-only token is refused by sync (which keeps SQLite
	// stores in step).
	if !clitest.OnPostgres() {
		sync := exec.Command(clitest.LoomBinary(t), "sync", "status")
		sync.Dir, sync.Env = fx.Project, fx.BinEnv("LOOM_SYNC_HUB="+srv.Base, "LOOM_SYNC_TOKEN="+shareTok)
		if r := clitest.ExecCmd(t, sync, ""); r.Code == 0 || !strings.Contains(r.Stderr, "share links") {
			t.Errorf("sync with a share-only token: exit %d, %s", r.Code, r.Stderr)
		}
	}

	// Off a terminal, without --yes: the preview, then nothing sent.
	r := fx.Exec(t, "", "share", s.ID)
	if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "--yes") || !strings.Contains(r.Stderr, "redacted 6 secrets") || !strings.Contains(r.Stderr, "nothing was sent") {
		t.Fatalf("share without --yes off a terminal: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := fx.Exec(t, "", "share", s.ID, "--expires", "2020-01-01", "--yes"); r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "already passed") {
		t.Errorf("an expiry already past: exit %d, %s", r.Code, r.Stderr)
	}
	if r := fx.Exec(t, "", "share", s.ID, "--turns", "5-2", "--yes"); r.Code != cli.ExitUsage {
		t.Errorf("a backwards turn range: exit %d, %s", r.Code, r.Stderr)
	}
	// A hub that is not there: one line, nothing published.
	if r := fx.Exec(t, "", "share", s.ID, "--yes", "--hub", "http://127.0.0.1:1"); r.Code == 0 || !strings.Contains(r.Stderr, "unreachable") ||
		!strings.Contains(r.Stderr, "nothing was published") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 3 {
		t.Errorf("a hub that is not there: exit %d, %s", r.Code, r.Stderr)
	}
	c := &share.Client{URL: srv.Base, Token: shareTok}
	if list, err := c.Shares(context.Background()); err != nil || len(list) != 0 {
		t.Fatalf("the hub holds %d shares after refusals (%v)", len(list), err)
	}

	// A path of the project's in a message: the preview names it, and
	// --hide-paths replaces it.
	st := fx.OpenEngine(t)
	if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "wombat: look at "+filepath.Join(fx.Project, "pkg", "deploy.go"), fx.Now())); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out := fx.MustExec(t, "share", s.ID, "--yes", "--json", "--hide-paths", "--expires", "2d")
	res := clitest.DecodeJSON[shareResult](t, out)
	if res.Preview.Redactions != 6 || res.Preview.Messages != 7 || res.Preview.Hidden == 0 || len(res.Preview.Paths) != 0 {
		t.Errorf("preview %+v: want 6 redactions of 7 messages, paths hidden", res.Preview)
	}
	link := res.Link
	if !strings.HasPrefix(link, srv.Base+share.PagePath+res.ID+"#k=") {
		t.Fatalf("link %q", link)
	}
	key := link[strings.Index(link, "#k=")+3:]

	// What a browser gets: the page, and ciphertext that opens with the
	// key to the session, redacted and with its paths hidden.
	_, blob, text := clitest.OpenShare(t, srv.Base, link)
	if !strings.Contains(text, "wombat deploy step") || !strings.Contains(text, "[REDACTED:") {
		t.Errorf("the shared session lacks its text or its markers:\n%s", text)
	}
	if v := secretstest.HoldsAny(text, secretValues); v != "" {
		t.Errorf("the shared session holds the secret %q", v)
	}
	if strings.Contains(text, fx.Project) || !strings.Contains(text, "<project>/pkg/deploy.go") {
		t.Errorf("--hide-paths left the project's path:\n%s", text)
	}

	// The hub holds ciphertext only, and logs no text and no key.
	if hubDB == "" {
		clitest.HubHoldsNo(t, hubHome, "", "wombat", "deploy the api")
	} else {
		hubHoldsBytes(t, hubHome, hubDB, "the session's text", []byte("wombat"))
	}
	for _, w := range []string{"wombat", key} {
		if strings.Contains(srv.Stderr.String(), w) {
			t.Errorf("the hub's log holds %q", w)
		}
	}

	list := clitest.DecodeJSON[[]map[string]any](t, fx.MustExec(t, "share", "list", "--json"))
	if len(list) != 1 || list[0]["id"] != res.ID || list[0]["state"] != "live" || list[0]["link"] != link {
		t.Fatalf("share list: %v", list)
	}

	// Revoked: 404, and the ciphertext is gone from the store.
	if r := fx.Exec(t, "", "share", "revoke", res.ID[:6]); r.Code != 0 || !strings.Contains(r.Stderr, "Revoked 1 share") {
		t.Fatalf("revoke: exit %d, %s", r.Code, r.Stderr)
	}
	if resp, err := http.Get(link); err != nil || resp.StatusCode != 404 {
		t.Errorf("GET the revoked link: %v %v", resp.StatusCode, err)
	}
	if _, err := (&share.Client{URL: srv.Base}).Blob(context.Background(), res.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("blob of the revoked share: %v", err)
	}
	hubHoldsBytes(t, hubHome, hubDB, "the revoked share's ciphertext", blob[len(blob)/2:len(blob)/2+64])
	list = clitest.DecodeJSON[[]map[string]any](t, fx.MustExec(t, "share", "list", "--json"))
	if len(list) != 1 || list[0]["state"] != "revoked" {
		t.Errorf("share list after revoke: %v", list)
	}

	// Expired: an expiry in the past, written into the hub's store.
	exp := clitest.DecodeJSON[shareResult](t, fx.MustExec(t, "share", s.ID, "--yes", "--json", "--turns", "2-3"))
	if resp, err := http.Get(exp.Link); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET a new link: %v %v", resp, err)
	}
	hubSQL(t, hubHome, hubDB, `UPDATE shares SET expires_at = '2020-01-01T00:00:00.000Z' WHERE id = '`+exp.ID+`'`)
	if resp, err := http.Get(exp.Link); err != nil || resp.StatusCode != 404 {
		t.Errorf("GET an expired link: %v %v", resp.StatusCode, err)
	}

	// revoke --all ends the live ones.
	a := clitest.DecodeJSON[shareResult](t, fx.MustExec(t, "share", s.ID, "--yes", "--json", "--exclude", "1-2"))
	b := clitest.DecodeJSON[shareResult](t, fx.MustExec(t, "share", s.ID, "--yes", "--json", "--no-redact"))
	if r := fx.Exec(t, "", "share", "revoke", "--all"); r.Code != 0 || !strings.Contains(r.Stderr, "Revoked 2 shares") {
		t.Errorf("revoke --all: exit %d, %s", r.Code, r.Stderr)
	}
	for _, l := range []string{a.Link, b.Link} {
		if resp, err := http.Get(l); err != nil || resp.StatusCode != 404 {
			t.Errorf("GET a link after revoke --all: %v %v", resp.StatusCode, err)
		}
	}
}
