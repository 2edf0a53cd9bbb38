package team_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/sqlite"
)

// balancer is what a hub of several processes runs behind: one URL, each
// request to the next process in turn (no sticky sessions), a process
// that refuses connections skipped. With killPush set, the next push of
// sync records goes to victim, which is killed (SIGKILL) once it has
// answered and before its answer reaches the client: the push was
// stored, and the client does not know it.
type balancer struct {
	mu       sync.Mutex
	backends []*clitest.ServeProc
	n        int
	killPush bool
	victim   *clitest.ServeProc
	killed   chan int // the status the victim answered
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	b.mu.Lock()
	kill := b.killPush && r.Method == http.MethodPost && r.URL.Path == "/api/v1/sync/records"
	order := make([]*clitest.ServeProc, 0, len(b.backends))
	if kill {
		b.killPush = false
		order = append(order, b.victim)
	} else {
		for i := range b.backends {
			order = append(order, b.backends[(b.n+i)%len(b.backends)])
		}
		b.n++
	}
	b.mu.Unlock()
	for _, be := range order {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, be.Base+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			continue // not listening (killed): the next one
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if kill {
			be.Cmd.Process.Signal(syscall.SIGKILL)
			b.mu.Lock()
			for i, x := range b.backends {
				if x == be {
					b.backends = append(b.backends[:i:i], b.backends[i+1:]...)
					break
				}
			}
			b.mu.Unlock()
			b.killed <- resp.StatusCode
			// The connection closes without an answer.
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(answer)
		return
	}
	http.Error(w, "no hub process answers", http.StatusBadGateway)
}

func (b *balancer) add(sp *clitest.ServeProc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = append(b.backends, sp)
}

// planted is a set of strings unique to one run, planted in a session:
// the hub's database, which other tests share, holds them nowhere else.
type planted struct{ Title, Text, Path, Project string }

func plant(t *testing.T) planted {
	var b [8]byte
	rand.Read(b[:])
	x := hex.EncodeToString(b[:])
	return planted{Title: "title" + x, Text: "message" + x, Path: "src/path" + x + "/main.go", Project: "project" + x}
}

func (p planted) all() []string { return []string{p.Title, p.Text, p.Path, p.Project} }

// importPlanted imports a session holding p into m's store, in project
// dir (named p.Project).
func importPlanted(t *testing.T, m *member, id string, p planted, dir string) {
	t.Helper()
	at := "2026-03-02T10:00:00.000Z"
	lines := []any{
		map[string]any{"type": "session", "session": map[string]any{"id": id, "key": "cli:" + id[:8], "title": p.Title, "user_id": m.name, "surface": "cli", "kind": "main",
			"project": map[string]any{"id": "0000000000000000", "name": p.Project, "root": "/elsewhere/" + p.Project}, "created_at": at, "updated_at": at}},
		map[string]any{"type": "message", "message": map[string]any{"id": id[:30] + "000001", "session_id": id, "seq": 1, "role": "user", "created_at": at,
			"parts": []any{map[string]any{"id": "p1", "type": "text", "text": "please look at " + p.Text}}}},
		map[string]any{"type": "message", "message": map[string]any{"id": id[:30] + "000002", "session_id": id, "seq": 2, "role": "assistant", "created_at": at, "model": "gpt-4o",
			"parts": []any{map[string]any{"id": "p2", "type": "text", "text": "done with " + p.Text}, map[string]any{"id": "p3", "type": "tool", "call_id": "c1", "name": "edit", "status": "completed", "input": map[string]any{"path": p.Path}, "output": "ok"}}}},
	}
	importLines(t, m, id, dir, lines)
}

// onSQLite keeps a member's own store in a SQLite file of its home
// whatever engine the tests run on: the byte search of the hub's
// database must find nothing a client wrote there in the clear.
func onSQLite(t *testing.T, m *member) *member {
	t.Helper()
	m.fx.DB = filepath.Join(m.fx.Home, "data", "sessions.db")
	// Made now: a store named by LOOM_DB must exist, as the fixture's
	// does on SQLite.
	st, err := sqlite.Open(t.Context(), m.fx.DB)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return m
}

// TestHubOfTwoProcesses runs a hub as two loom serve processes on one
// PostgreSQL database behind one URL that sends each request to the
// other process: personal sync and team sync between machines whose
// requests alternate between the processes; a process killed with
// SIGKILL after storing a push and before answering it, the push sent
// again through the other, nothing lost or twice; a process started
// again serving what the others stored. Then a byte search of the
// server's data files, WAL and logs finds none of the strings planted
// in the sessions.
func TestHubOfTwoProcesses(t *testing.T) {
	hubDB := clitest.FreshSchema(t)
	hubA, hubHome, _ := clitest.StartHub(t, hubDB)
	hubEnv := []string{"LOOM_HOME=" + t.TempDir(), "HOME=" + hubHome, "PATH=" + os.Getenv("PATH"), "LOOM_DB=" + hubDB}
	hubB := clitest.StartServeProc(t, hubEnv, "")
	lb := &balancer{backends: []*clitest.ServeProc{hubA, hubB}, victim: hubA, killed: make(chan int, 1)}
	front := httptest.NewServer(lb)
	defer front.Close()

	tok := hubToken(t, hubHome, hubDB, "alice")
	alice1 := onSQLite(t, newMember(t, "alice", front.URL, tok))
	alice2 := onSQLite(t, newMember(t, "alice", front.URL, tok))
	bob := onSQLite(t, newMember(t, "bob", front.URL, hubToken(t, hubHome, hubDB, "bob")))
	key := strings.TrimSpace(alice1.must(t, "sync", "key"))
	if r := alice2.fx.Exec(t, key+"\n", "sync", "key", "--set"); r.Code != 0 {
		t.Fatalf("set the key: %s", r.Stderr)
	}

	// The team's project is one repository on every machine, named
	// with a planted string; alice's other session is in a project of
	// her own, also planted.
	own, shared := plant(t), plant(t)
	for _, m := range []*member{alice1, bob} {
		dir := filepath.Join(m.fx.Home, "src", shared.Project)
		os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
		os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[remote \"origin\"]\n\turl = https://github.com/acme/"+shared.Project+".git\n"), 0o644)
		os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		m.fx.Project = dir
	}
	ownDir := filepath.Join(alice1.fx.Home, "src", own.Project)
	os.MkdirAll(filepath.Join(ownDir, ".git"), 0o755)
	importPlanted(t, alice1, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c11", own, ownDir)
	importPlanted(t, alice1, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c12", shared, alice1.fx.Project)

	// Alice's first push goes to hub A, which stores it and is killed
	// before its answer leaves: her sync fails.
	lb.mu.Lock()
	lb.killPush = true
	lb.mu.Unlock()
	r := alice1.run(t, "sync")
	if status := <-lb.killed; status != http.StatusOK {
		t.Fatalf("hub A answered the push %d before it was killed", status)
	}
	if r.Code == 0 {
		t.Fatalf("a sync whose push got no answer succeeded: %s", r.Stdout)
	}
	pool, err := pgxpool.New(context.Background(), hubDB)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var stored int
	pool.QueryRow(context.Background(), `SELECT count(*) FROM sync_records`).Scan(&stored)
	if stored == 0 {
		t.Fatal("the killed hub stored nothing of the push it answered")
	}
	// Sent again, through hub B: stored once.
	alice1.must(t, "sync")
	hubConsistent(t, pool, stored)

	// Hub A starts again; alice's other machine syncs through both.
	lb.add(clitest.StartServeProc(t, hubEnv, ""))
	alice2.must(t, "sync")
	if s1, m1 := alice1.fx.SessionCount(t); true {
		if s2, m2 := alice2.fx.SessionCount(t); s1 != s2 || m1 != m2 || s1 < 2 {
			t.Fatalf("alice's machines hold %d sessions, %d messages and %d, %d", s1, m1, s2, m2)
		}
	}
	if out := alice2.must(t, "search", own.Text, "--all-projects"); !strings.Contains(out, "0196a3b2") {
		t.Fatalf("alice's other machine does not find her session: %s", out)
	}
	alice1.must(t, "sync")
	alice2.must(t, "sync")
	hubConsistent(t, pool, 0)

	// A team through the same URL: every step on whichever process.
	var created struct{ ID string }
	json.Unmarshal([]byte(alice1.must(t, "team", "create", "core", "--json")), &created)
	alice1.admit(t, bob)
	alice1.must(t, "team", "share", "--content", "--yes")
	for range 2 {
		alice1.must(t, "team", "sync")
		bob.must(t, "team", "sync")
	}
	if out := bob.must(t, "search", "--team", "core", shared.Text, "--json"); !strings.Contains(out, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c12") {
		t.Fatalf("bob's team search: %s", out)
	}
	var teamRecs, distinct int
	pool.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT (host_id, idx)) FROM team_records`).Scan(&teamRecs, &distinct)
	if teamRecs == 0 || teamRecs != distinct {
		t.Fatalf("the hub holds %d team records, %d distinct", teamRecs, distinct)
	}

	// Nothing planted is anywhere in the server's files.
	var logs []string
	for _, sp := range lb.backends {
		logs = append(logs, sp.Stderr.String())
	}
	logs = append(logs, hubA.Stderr.String())
	serverHoldsNo(t, pool, strings.Join(logs, "\n"), append(own.all(), shared.all()...)...)
}

// hubConsistent fails unless every host's records on the hub run from
// 1 to its last without a gap or a second copy, as its summary counts
// them, and (when want > 0) the hub holds want records.
func hubConsistent(t *testing.T, pool *pgxpool.Pool, want int) {
	t.Helper()
	var n, distinct, counted, last int
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM sync_records), (SELECT count(DISTINCT (host_id, idx)) FROM sync_records),
		(SELECT coalesce(sum(records), 0) FROM sync_hosts), (SELECT coalesce(sum(last), 0) FROM sync_hosts)`).Scan(&n, &distinct, &counted, &last); err != nil {
		t.Fatal(err)
	}
	if n != distinct || n != counted || n != last || (want > 0 && n < want) {
		t.Fatalf("the hub holds %d records, %d distinct, %d counted, last indexes summing to %d (at least %d wanted)", n, distinct, counted, last, want)
	}
}

// serverHoldsNo fails if any file of the PostgreSQL server's data
// directory (tables, indexes, WAL), its log files, or the hub's own
// logs hold any of words, after a checkpoint has written out what the
// server holds in memory. A data directory this test cannot read skips
// it (CI runs it as root on the server's machine).
func serverHoldsNo(t *testing.T, pool *pgxpool.Pool, hubLogs string, words ...string) {
	t.Helper()
	ctx := context.Background()
	// A control: a string the test writes in the clear, which the
	// search must find, or it finds nothing at all.
	control := plant(t).Text
	if _, err := pool.Exec(ctx, `CREATE TABLE byte_search_control (t text); INSERT INTO byte_search_control VALUES ('`+control+`')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CHECKPOINT`); err != nil {
		t.Skipf("CHECKPOINT: %v (the byte search needs a superuser on the server's machine)", err)
	}
	var dataDir string
	if err := pool.QueryRow(ctx, `SHOW data_directory`).Scan(&dataDir); err != nil {
		t.Skipf("SHOW data_directory: %v", err)
	}
	if _, err := os.ReadDir(filepath.Join(dataDir, "base")); err != nil {
		t.Skipf("the server's data directory %s is not readable here (%v): the byte search needs to run on the server's machine as root or its owner", dataDir, err)
	}
	roots := []string{dataDir}
	var logDir string
	if pool.QueryRow(ctx, `SHOW log_directory`).Scan(&logDir) == nil && filepath.IsAbs(logDir) {
		roots = append(roots, logDir)
	}
	// Debian's clusters log outside the data directory.
	if _, err := os.Stat("/var/log/postgresql"); err == nil {
		roots = append(roots, "/var/log/postgresql")
	}
	needles := make([][]byte, len(words))
	for i, w := range words {
		needles[i] = []byte(w)
	}
	found := false
	files, bytesRead := 0, int64(0)
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				// A file the server removed while the walk ran.
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("read %s: %v", p, err)
				}
				return nil
			}
			files++
			bytesRead += int64(len(b))
			found = found || bytes.Contains(b, []byte(control))
			for i, n := range needles {
				if bytes.Contains(b, n) {
					t.Errorf("the server's %s holds %q in the clear", p, words[i])
				}
			}
			return nil
		})
	}
	if !found {
		t.Errorf("the search found not even the control %q written in the clear", control)
	}
	for _, w := range words {
		if strings.Contains(hubLogs, w) {
			t.Errorf("the hub's log holds %q", w)
		}
	}
	t.Logf("searched %d files, %d MB, under %s for %d planted strings", files, bytesRead>>20, strings.Join(roots, ", "), len(words))
}
