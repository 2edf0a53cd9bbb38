package importer_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/importer/opencode"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/sqlite"
)

// Importers that race on files their tools are writing — hooks, a
// watcher and one-shot imports, each with a store handle of its own, as
// processes have — store every line once: the sessions, messages and
// forks are those one import of the finished files makes, no message id
// comes twice, no run fails, and a plain import afterwards adds nothing.
func TestImportersRace(t *testing.T) {
	for _, e := range testEngines {
		for _, src := range raceSources {
			for _, n := range []int{2, 4} {
				t.Run(fmt.Sprintf("%s/%s/%d", e.name, src.name, n), func(t *testing.T) {
					raceImport(t, e.open(t), src, n)
				})
			}
		}
	}
}

// testEngines are the engines import tests run on: each opens stores
// on one fresh database.
var testEngines = []struct {
	name string
	open func(t *testing.T) func() loom.Engine
}{
	{"sqlite", sqliteOpener},
	{"postgres", postgresOpener},
}

// raceTurns is how many turns a source is written with while imported.
const raceTurns = 40

// raceSource is a tool whose files grow while they are imported: start
// makes the tool's root in dir, turn writes turn i.
type raceSource struct {
	name   string
	format importer.Format
	start  func(t *testing.T, dir string) (root string, turn func(i int))
}

var raceSources = []raceSource{
	{"claude-code", claudecode.New(), claudeGrowing},
	{"codex", codex.Format{}, codexGrowing},
	{"opencode", opencode.Format{}, opencodeGrowing},
}

func raceImport(t *testing.T, open func() loom.Engine, src raceSource, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	root, turn := src.start(t, dir)
	targets := []importer.Target{{Format: src.format, Roots: []string{root}, Explicit: true}}
	newImporter := func() *importer.Importer {
		st := open()
		t.Cleanup(func() { st.Close() })
		return &importer.Importer{Store: st, UserID: "alice"}
	}

	written := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	// n-1 importers run again and again, as hooks and one-shot imports
	// do, until the files are written, then once more.
	for range n - 1 {
		im := newImporter()
		wg.Go(func() {
			for done := false; !done; {
				select {
				case <-written:
					done = true
				default:
				}
				rep, err := im.Run(ctx, targets)
				if err != nil {
					errs <- err
					return
				}
				for _, tr := range rep.Tools {
					for _, p := range tr.Problems {
						if !midWrite(p) {
							errs <- fmt.Errorf("problem: %s", p)
						}
					}
				}
			}
		})
	}
	// and one watches.
	watchCtx, stopWatch := context.WithCancel(ctx)
	watcher := newImporter()
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		watcher.Watch(watchCtx, targets, importer.WatchOptions{Quiet: time.Millisecond, Rescan: 20 * time.Millisecond}, func(rep *importer.Report) {
			for _, tr := range rep.Tools {
				for _, p := range tr.Problems {
					if !midWrite(p) {
						errs <- fmt.Errorf("watch problem: %s", p)
					}
				}
			}
		})
	}()
	for i := 1; i <= raceTurns; i++ {
		turn(i)
		time.Sleep(2 * time.Millisecond) // a tool's pace, not a wait for anything
	}
	close(written)
	wg.Wait()
	stopWatch()
	<-watching
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// A plain import adds nothing.
	im := newImporter()
	rep, err := im.Run(ctx, targets)
	if err != nil {
		t.Fatal(err)
	}
	if tr := rep.Tools[0]; tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.ToolsUpdated != 0 {
		t.Errorf("a plain import afterwards added: %+v", tr)
	}
	got := storedSessions(t, im.Store)

	// What one import of the finished files stores.
	ref := cleanImport(ctx, t, targets)
	want := storedSessions(t, ref)
	for key, ids := range want {
		if len(ids) < 2*raceTurns {
			t.Fatalf("one import of the finished files stores %d messages in %s, want a prompt and a reply for each of %d turns", len(ids), key, raceTurns)
		}
	}
	for key, ids := range want {
		if !slices.Equal(got[key], ids) {
			t.Errorf("%s: %d messages stored, want %d\n got %v\nwant %v", key, len(got[key]), len(ids), got[key], ids)
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("session %s (%d messages) should not be there", key, len(got[key]))
		}
	}
	for key, ids := range got {
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Errorf("%s: message %s stored twice", key, id)
			}
			seen[id] = true
		}
	}
}

// cleanImport is a new store holding one import of targets.
func cleanImport(ctx context.Context, t *testing.T, targets []importer.Target) loom.Engine {
	t.Helper()
	ref, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ref.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	if _, err := (&importer.Importer{Store: ref, UserID: "alice"}).Run(ctx, targets); err != nil {
		t.Fatal(err)
	}
	return ref
}

// storedSessions are the message ids of every session of st, by key.
func storedSessions(t *testing.T, st loom.Store) map[string][]string {
	t.Helper()
	ctx := context.Background()
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, s := range ss {
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := out[s.Key]; dup {
			t.Errorf("two sessions have key %s", s.Key)
		}
		ids := []string{}
		for _, m := range msgs {
			ids = append(ids, m.ID)
		}
		out[s.Key] = ids
	}
	return out
}

func sqliteOpener(t *testing.T) func() loom.Engine {
	path := filepath.Join(t.TempDir(), "loom.db")
	return func() loom.Engine {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
}

const defaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var pgAdmin struct {
	once sync.Once
	url  string
	pool *pgxpool.Pool
	err  error
}

// postgresOpener opens stores on a schema of their own on the test
// server ($LOOM_TEST_POSTGRES, else the local one); without a server
// the test is skipped, except in CI.
func postgresOpener(t *testing.T) func() loom.Engine {
	pgAdmin.once.Do(func() {
		pgAdmin.url = os.Getenv("LOOM_TEST_POSTGRES")
		if pgAdmin.url == "" {
			pgAdmin.url = defaultPostgres
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pgAdmin.pool, pgAdmin.err = pgxpool.New(ctx, pgAdmin.url)
		if pgAdmin.err == nil {
			pgAdmin.err = pgAdmin.pool.Ping(ctx)
		}
	})
	if pgAdmin.err != nil {
		msg := "PostgreSQL is unreachable (set LOOM_TEST_POSTGRES): " + pgAdmin.err.Error()
		if os.Getenv("LOOM_TEST_POSTGRES") != "" || os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "loomimport_" + hex.EncodeToString(b[:])
	if _, err := pgAdmin.pool.Exec(context.Background(), `CREATE SCHEMA `+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pgAdmin.pool.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`) })
	u, err := url.Parse(pgAdmin.url)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	dsn := u.String()
	return func() loom.Engine {
		st, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
}

// appendLines appends lines to file, each with its newline, in one
// write.
// midWrite says whether p is the line of a file read while its writer
// was writing: between the file's creation and its first write (a
// writer that appends, as Claude Code does, opens its file before it
// writes a line), the import says the file holds nothing yet; in the
// middle of a write, the last line read ends before its end. Either is
// read whole once written, which the checks after the race show (every
// message stored once, as one import of the finished files stores it).
// Any other problem fails the test.
func midWrite(p importer.Problem) bool {
	return p.Reason == "empty: no session in it yet" || strings.HasSuffix(p.Reason, "unexpected end of JSON input")
}

func appendLines(t *testing.T, file string, lines ...string) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	if _, err := f.Write(b); err != nil {
		t.Error(err)
	}
}

var raceStart = time.Date(2026, 5, 18, 14, 0, 0, 0, time.UTC)

func raceTime(i, k int) string {
	return raceStart.Add(time.Duration(i)*time.Minute + time.Duration(k)*time.Second).Format("2006-01-02T15:04:05.000Z")
}

// claudeGrowing is a Claude Code session file, a prompt and a reply a
// turn, each line naming the one before.
func claudeGrowing(t *testing.T, dir string) (string, func(int)) {
	const sid = "6b1e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14"
	root := filepath.Join(dir, "projects", "-work-race")
	importertest.MkdirAll(t, root)
	file := filepath.Join(root, sid+".jsonl")
	parent := "null"
	return root, func(i int) {
		u := fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i)
		a := fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i+1)
		common := `"isSidechain":false,"userType":"external","cwd":"/work/race","sessionId":"` + sid + `","version":"2.1.62"`
		appendLines(t, file,
			`{"parentUuid":`+parent+`,`+common+`,"type":"user","message":{"role":"user","content":"cc prompt `+fmt.Sprint(i)+`"},"uuid":"`+u+`","timestamp":"`+raceTime(i, 0)+`"}`,
			`{"parentUuid":"`+u+`",`+common+`,"type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_`+fmt.Sprint(i)+`","type":"message","role":"assistant","content":[{"type":"text","text":"cc reply `+fmt.Sprint(i)+`"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":5}},"uuid":"`+a+`","timestamp":"`+raceTime(i, 1)+`"}`)
		parent = `"` + a + `"`
	}
}

// codexGrowing is a Codex rollout, a prompt and a reply a turn.
func codexGrowing(t *testing.T, dir string) (string, func(int)) {
	const id = "019f7ecd-c978-7a41-9c3e-5b1f0d2e8a47"
	root := filepath.Join(dir, "sessions", "2026", "05", "18")
	importertest.MkdirAll(t, root)
	file := filepath.Join(root, "rollout-2026-05-18T14-00-00-"+id+".jsonl")
	appendLines(t, file, `{"timestamp":"`+raceTime(0, 0)+`","type":"session_meta","payload":{"id":"`+id+`","timestamp":"`+raceTime(0, 0)+`","cwd":"/work/race","originator":"codex-tui","cli_version":"0.146.0","source":"cli","model_provider":"openai"}}`)
	return filepath.Join(dir, "sessions"), func(i int) {
		appendLines(t, file,
			`{"timestamp":"`+raceTime(i, 0)+`","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"codex prompt `+fmt.Sprint(i)+`"}]}}`,
			`{"timestamp":"`+raceTime(i, 1)+`","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"codex reply `+fmt.Sprint(i)+`"}]}}`)
	}
}

// opencodeGrowing is an opencode.db with two sessions, each getting a
// prompt and a reply a turn, each message in a transaction of its own
// as opencode writes them.
func opencodeGrowing(t *testing.T, dir string) (string, func(int)) {
	root := filepath.Join(dir, "opencode")
	importertest.MkdirAll(t, root)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(root, "opencode.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	exec := func(q string, args ...any) {
		if _, err := db.Exec(q, args...); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		"CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text, `icon_url` text, `icon_color` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_initialized` integer, `sandboxes` text NOT NULL)",
		"CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL, `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `share_url` text, `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `revert` text, `permission` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer)",
		"CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL)",
		"CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL)",
	} {
		exec(q)
	}
	at := raceStart.UnixMilli()
	exec("INSERT INTO project VALUES ('prj_race', '/work/race', 'git', NULL, NULL, NULL, ?, ?, NULL, '[]')", at, at)
	sessions := []string{"ses_race000000000000000000001", "ses_race000000000000000000002"}
	for _, s := range sessions {
		exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'prj_race', 'race', '/work/race', 'race', '1.2.0', ?, ?)", s, at, at)
	}
	return root, func(i int) {
		for k, s := range sessions {
			for j, role := range []string{"user", "assistant"} {
				ms := at + int64(i)*60000 + int64(2*k+j)*1000
				id := fmt.Sprintf("msg_race%d%04d%d", k, i, j)
				data := fmt.Sprintf(`{"role":%q,"time":{"created":%d}}`, role, ms)
				if role == "assistant" {
					data = fmt.Sprintf(`{"role":"assistant","time":{"created":%d,"completed":%d},"modelID":"gpt-5","providerID":"openai"}`, ms, ms)
				}
				tx, err := db.Begin()
				if err != nil {
					t.Error(err)
					return
				}
				tx.Exec("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)", id, s, ms, ms, data)
				tx.Exec("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
					"prt"+id[3:], id, s, ms, ms, fmt.Sprintf(`{"type":"text","text":"opencode %s %d"}`, role, i))
				if err := tx.Commit(); err != nil {
					t.Error(err)
				}
			}
		}
	}
}
