package secrets_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/replaylog"
	"github.com/loomhq/loom/secrets/secretstest"
	_ "github.com/loomhq/loom/sqlite" // the driver
	"github.com/loomhq/loom/synclog"
)

// planted are secrets made for one test, each unique, of shapes any
// detector finds, and the strings a byte search of files looks for:
// each value (every line of a PEM body), and what a search index keeps
// of it (lower case, stemmed: its first characters in lower case).
type planted struct {
	values  []string
	needles []string
}

const (
	base32Upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

func randomOf(set string, n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = set[int(b[i])%len(set)]
	}
	return string(b)
}

func (p *planted) keep(v string) string {
	p.values = append(p.values, v)
	p.needles = append(p.needles, v, strings.ToLower(v)[:len(v)-4])
	return v
}

// aws is an AWS access key id, github a GitHub token, bearer a token
// of no known shape (found only in an Authorization header).
func (p *planted) aws() string    { return p.keep("AKIA" + randomOf(base32Upper, 16)) }
func (p *planted) github() string { return p.keep("ghp_" + randomOf(alnum, 36)) }
func (p *planted) bearer() string { return p.keep(randomOf(alnum, 40)) }

// pem is an RSA private key block whose body lines are each unique.
func (p *planted) pem() string {
	lines := []string{"-----BEGIN RSA PRIVATE KEY-----"}
	for range 5 {
		lines = append(lines, p.keep("MII"+randomOf(alnum, 61)))
	}
	return strings.Join(append(lines, "-----END RSA PRIVATE KEY-----"), "\n")
}

func quoteJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// plantSessions writes to the store dsn sessions holding secrets in
// every place a record carries text: a title, prompts, a tool's input
// and output (a PEM key among them), a part updated, a renamed title, a
// fork's and a rewind's titles; and a token repeated where no rule sees
// it, in reasoning before the header that gives it away and in a reply
// after. Written before sync is set up they are the log's imported
// records; after, each change's own record.
func plantSessions(t *testing.T, dsn string, proj loom.Project, p *planted, key string) *loom.Session {
	t.Helper()
	ctx := context.Background()
	st, err := clitest.OpenEngine(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &loom.Session{UserID: "local", Key: key, Title: "deploy with " + p.aws(), Project: proj}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "release with the token " + p.github() + " please"}}}))
	tool := loom.Part{Type: loom.PartTool, ID: "p-" + key, CallID: "call-" + key, Name: "bash", Status: loom.ToolRunning,
		Input: []byte(`{"command":"aws configure set aws_access_key_id ` + p.aws() + `"}`)}
	must(st.Append(ctx, s, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{tool}}))
	tool.Status, tool.Output = loom.ToolCompleted, quoteJSON("wrote ~/.ssh/id_rsa:\n"+p.pem()+"\nand "+p.aws())
	must(st.UpdatePart(ctx, s.ID, 2, tool))
	bearer := p.bearer()
	must(st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "the smoke test fails"}}}))
	must(st.Append(ctx, s, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartReasoning, Text: "The bearer token " + bearer + " and the mysql password go in deploy.env."}}}))
	must(st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "curl -H 'Authorization: Bearer " + bearer + "' https://staging.example.com/health answers 401"}}}))
	must(st.Append(ctx, s, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "I used " + bearer + " for the call"}}}))
	must(st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "now tag it"}}}))
	must(st.Append(ctx, s, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "tagged with " + p.github()}}}))
	title := "deploy, key " + p.aws()
	_, err = st.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &title})
	must(err)
	_, err = st.Fork(ctx, s.ID, loom.ForkOptions{Turn: 1, Title: "try again with " + p.github()})
	must(err)
	_, err = st.Rewind(ctx, s.ID, loom.RewindOptions{Turn: 1})
	must(err)
	return s
}

// writeStateFiles writes, in the state directory of home, a replay log
// of session id as loom's agent writes one, and a chat history, each
// holding secrets.
func writeStateFiles(t *testing.T, home, id string, p *planted) {
	t.Helper()
	d := dirsOf(t, home)
	lg, err := replaylog.Open(d.SessionLog("local", id))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []replaylog.Entry{
		{Kind: replaylog.KindSessionStart, SessionID: id},
		{Kind: replaylog.KindUserMessage, Text: "release with the token " + p.github()},
		{Kind: replaylog.KindStep, Type: replaylog.StepToolEnd, Tool: "bash", CallID: "c1",
			Input: []byte(`{"command":"cat ~/.ssh/id_rsa"}`), Output: quoteJSON(p.pem())},
		{Kind: replaylog.KindFinalResult, Text: "done with " + p.aws()},
	} {
		if err := lg.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	hist := "ls\n" + "export GITHUB_TOKEN=" + p.github() + "\n"
	if err := os.WriteFile(d.HistoryFile(), []byte(hist), 0o600); err != nil {
		t.Fatal(err)
	}
}

// filesHolding searches every file under dirs, byte for byte, for the
// needles, and the payloads of the sync log of each SQLite store among
// them decoded (a payload's zstd could hide a value), and returns where
// it found which.
func filesHolding(t *testing.T, needles []string, dirs ...string) []string {
	t.Helper()
	var found []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || !e.Type().IsRegular() {
				return err
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, n := range needles {
				if bytes.Contains(raw, []byte(n)) {
					found = append(found, fmt.Sprintf("%s holds %q", path, n))
				}
			}
			if filepath.Base(path) == "sessions.db" {
				found = append(found, logHolding(t, path, needles)...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// logHolding returns where the decoded payloads of the sync log of the
// SQLite store at path hold a needle.
func logHolding(t *testing.T, path string, needles []string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT idx, payload FROM sync_log ORDER BY idx`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var idx int64
		var payload []byte
		if err := rows.Scan(&idx, &payload); err != nil {
			t.Fatal(err)
		}
		p, err := synclog.Decode(payload)
		if err != nil {
			continue // a fragment
		}
		js, _ := json.Marshal(p)
		for _, n := range needles {
			if bytes.Contains(js, []byte(n)) {
				found = append(found, fmt.Sprintf("%s: sync log record %d (%s) holds %q", path, idx, p.Type(), n))
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return found
}

// dirsOf returns loom's directories under LOOM_HOME home.
func dirsOf(t *testing.T, home string) paths.Dirs {
	t.Helper()
	d, err := paths.Resolve(func(k string) string {
		if k == "LOOM_HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func dataAndState(t *testing.T, home string) []string {
	d := dirsOf(t, home)
	return []string{d.Data, d.State}
}

// After loom secrets redact on machine A and loom sync on A and B, no
// file of either machine (the store, its WAL and shm, the sync log,
// the replay logs and chat history) nor of the hub holds a secret
// redacted, whether as it was written or as a search index keeps it;
// the hub holds ciphertext only; and the machines go on syncing, A
// under its own host, with the records it rewrote compared equal to
// the hub's copies.
func TestRedactLeavesNoCopy(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; TestRedactLeavesNoCopyOnPostgres is the PostgreSQL store's")
	clitest.OnBothHubs(t, func(t *testing.T, hubDB func(*testing.T) string) {
		db := hubDB(t)
		a, b, _, hubHome := clitest.SyncPair(t, db)
		p := &planted{}
		before := plantSessions(t, a.DB, a.Proj, p, "cli:before-sync")
		a.MustExec(t, "sync") // sets sync up: the session is an imported record
		s := plantSessions(t, a.DB, a.Proj, p, "cli:after-sync")
		writeStateFiles(t, a.Home, s.ID, p)
		a.MustExec(t, "sync")
		b.MustExec(t, "sync")
		for _, id := range []string{before.ID, s.ID} {
			if shown := b.MustExec(t, "session", "show", id, "--full-history"); secretstest.HoldsAny(shown, p.values) == "" {
				t.Fatalf("machine B did not get session %s:\n%s", id, shown)
			}
		}
		if len(filesHolding(t, p.needles, dataAndState(t, a.Home)...)) == 0 || len(filesHolding(t, p.needles, dataAndState(t, b.Home)...)) == 0 {
			t.Fatal("before the redaction no file holds a secret: the search finds nothing")
		}

		r := a.Exec(t, "", "secrets", "redact", "--yes")
		if r.Code != 0 || !strings.Contains(r.Stdout, "redacted ") {
			t.Fatalf("redact: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		for _, m := range []*clitest.Fixture{a, b} {
			r := m.Exec(t, "", "sync", "--json")
			if r.Code != 0 || strings.Contains(r.Stderr, "syncs on as host") || strings.Contains(r.Stdout, `"rehomed"`) {
				t.Fatalf("sync after the redaction: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
			}
			if m == b && !strings.Contains(r.Stderr, "Another machine redacted secrets") {
				t.Errorf("machine B's sync does not say it scrubbed its store: %s", r.Stderr)
			}
		}
		shown := b.MustExec(t, "session", "show", s.ID, "--full-history")
		if v := secretstest.HoldsAny(shown, p.values); v != "" || !strings.Contains(shown, "[REDACTED:") {
			t.Errorf("machine B shows %q after the redaction:\n%s", v, shown)
		}

		dirs := append(append(dataAndState(t, a.Home), dataAndState(t, b.Home)...), filepath.Join(hubHome, "data"))
		for _, f := range filesHolding(t, p.needles, dirs...) {
			t.Error(f)
		}
		clitest.HubHoldsNo(t, hubHome, db, p.values...)

		// The machines sync on: A's next records leave under its own
		// host, and B applies them.
		later := clitest.Say(t, a, "after the redaction", 1)
		for _, m := range []*clitest.Fixture{a, b} {
			if r := m.Exec(t, "", "sync"); r.Code != 0 || strings.Contains(r.Stderr, "syncs on as host") {
				t.Fatalf("sync: exit %d\n%s", r.Code, r.Stderr)
			}
		}
		if r := b.Exec(t, "", "session", "show", later.ID); r.Code != 0 {
			t.Errorf("machine B lacks A's session after the redaction: %s", r.Stderr)
		}
	})
}

// On a PostgreSQL store, after loom secrets redact no file of the
// database's relations that hold sessions (the tables, their TOAST
// tables and indexes, the search index among them) holds a secret
// redacted: not in a dead row version either.
func TestRedactLeavesNoCopyOnPostgres(t *testing.T) {
	t.Parallel()
	admin := clitest.PostgresAdmin(t)
	ctx := context.Background()
	var dataDir string
	if err := admin.QueryRow(ctx, `SHOW data_directory`).Scan(&dataDir); err != nil {
		t.Skipf("the server's data directory cannot be read: SHOW data_directory: %v", err)
	}
	if _, err := os.ReadDir(filepath.Join(dataDir, "base")); err != nil {
		t.Skipf("the server's data directory is not readable by this test (run it as root or as the server's user): %v", err)
	}
	// A database of its own: VACUUM keeps the row versions a
	// transaction open in the same database may still read, and the
	// other tests of a run keep some open in theirs.
	var b [6]byte
	rand.Read(b[:])
	dbName := "loomscrub_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+dbName); err != nil {
		t.Skipf("this test makes a database of its own: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), `DROP DATABASE `+dbName+` WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", dbName, err)
		}
	})
	u, err := url.Parse(clitest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + dbName
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	dsn := u.String()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	fx := clitest.NewEmptyFixture(t)
	fx.DB = dsn
	fx.ExtraEnv = []string{"LOOM_DB=" + dsn}
	p := &planted{}
	plantSessions(t, dsn, fx.Proj, p, "cli:pg")
	schema := "public"

	files := func() []string {
		t.Helper()
		// Pages still in the server's buffers reach the files at a
		// checkpoint.
		if _, err := admin.Exec(ctx, `CHECKPOINT`); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, `WITH t AS (
				SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				 WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')),
			rel AS (SELECT oid FROM t UNION SELECT reltoastrelid FROM pg_class WHERE oid IN (SELECT oid FROM t) AND reltoastrelid <> 0),
			every AS (SELECT oid FROM rel UNION SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT oid FROM rel))
			SELECT pg_relation_filepath(oid) FROM every WHERE pg_relation_filepath(oid) IS NOT NULL`, schema)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var rel string
			if err := rows.Scan(&rel); err != nil {
				t.Fatal(err)
			}
			base := filepath.Join(dataDir, rel)
			for i := 0; ; i++ {
				f := base
				if i > 0 {
					f = fmt.Sprintf("%s.%d", base, i)
				}
				if _, err := os.Stat(f); err != nil {
					break
				}
				out = append(out, f)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(out) < 10 {
			t.Fatalf("found %d files of the schema's relations", len(out))
		}
		return out
	}
	holding := func() []string {
		t.Helper()
		var found []string
		for _, f := range files() {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range p.needles {
				if bytes.Contains(raw, []byte(n)) {
					found = append(found, fmt.Sprintf("%s holds %q", f, n))
				}
			}
		}
		return found
	}
	if len(holding()) == 0 {
		t.Fatal("before the redaction no file of the schema holds a secret: the search finds nothing")
	}
	r := fx.Exec(t, "", "secrets", "redact", "--yes")
	if r.Code != 0 || !strings.Contains(r.Stdout, "redacted ") {
		t.Fatalf("redact: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	found := holding()
	slices.Sort(found)
	for _, f := range found {
		t.Error(f)
	}
}

// A purge on a machine that syncs keeps what it took until its next
// sync (to save in a copy work another machine did in the session
// meanwhile): a redaction before that sync lets it go, so no file holds
// the secrets the purged session held.
func TestRedactForgetsWhatAPurgeKept(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step")
	a, _, _, _ := clitest.SyncPair(t, "")
	p := &planted{}
	plantSessions(t, a.DB, a.Proj, p, "cli:kept")
	a.MustExec(t, "sync")
	s := plantSessions(t, a.DB, a.Proj, p, "cli:purged")
	a.MustExec(t, "session", "delete", s.ID, "--purge", "--yes")
	if len(filesHolding(t, p.needles, dataAndState(t, a.Home)...)) == 0 {
		t.Fatal("before the redaction no file holds a secret: the search finds nothing")
	}
	if r := a.Exec(t, "", "secrets", "redact", "--yes"); r.Code != 0 {
		t.Fatalf("redact: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, f := range filesHolding(t, p.needles, dataAndState(t, a.Home)...) {
		t.Errorf("after the redaction %s", f)
	}
}
