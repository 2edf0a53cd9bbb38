// Package importertest holds what the session format readers' tests
// share: counting what a session holds, finding sessions and messages in
// a reader's result, links, and a store to import into.
package importertest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/sqlite"
)

// Tally is what a session holds: messages by role, tool parts by status,
// and agent, reasoning and file parts.
type Tally struct {
	Roles     map[string]int
	Tools     map[string]int
	Agents    int
	Reasoning int
	Files     int
}

// TallyOf counts what s holds.
func TallyOf(s *importer.Session) Tally {
	c := Tally{Roles: map[string]int{}, Tools: map[string]int{}}
	for _, m := range s.Messages {
		c.Roles[m.Role]++
		for _, p := range m.Parts {
			switch p.Type {
			case loom.PartTool:
				c.Tools[p.Status]++
			case loom.PartAgent:
				c.Agents++
			case loom.PartReasoning:
				c.Reasoning++
			case loom.PartFile:
				c.Files++
			}
		}
	}
	return c
}

// CheckValid checks what every reader's result must be, whatever its
// files held: each session's SourceID set, on one line and its own;
// each message valid, completed no earlier than created, its id and its
// parts' ids unique in the session, each part's id under its message's.
func CheckValid(t testing.TB, res *importer.Result) {
	t.Helper()
	sids := map[string]bool{}
	for _, s := range res.Sessions {
		checkSourceID(t, s, sids)
		ids := map[string]bool{}
		for _, m := range s.Messages {
			checkMessage(t, m, ids)
			if m.CompletedAt == nil || m.CompletedAt.Before(m.CreatedAt) {
				t.Errorf("message %s: completed %v before created %v", m.ID, m.CompletedAt, m.CreatedAt)
			}
			for _, p := range m.Parts {
				if ids[p.ID] {
					t.Errorf("part id %s twice", p.ID)
				}
				ids[p.ID] = true
				if !strings.HasPrefix(p.ID, m.ID+"/") {
					t.Errorf("part id %s not under message %s", p.ID, m.ID)
				}
			}
		}
	}
}

// checkSourceID fails t unless s's SourceID is set, on one line, and
// not in seen, to which it adds it.
func checkSourceID(t testing.TB, s *importer.Session, seen map[string]bool) {
	t.Helper()
	if s.SourceID == "" || strings.ContainsAny(s.SourceID, "\n\r") || seen[s.SourceID] {
		t.Errorf("bad or repeated SourceID %q", s.SourceID)
	}
	seen[s.SourceID] = true
}

// checkMessage fails t unless m is valid and its id not in ids, to
// which it adds it.
func checkMessage(t testing.TB, m *loom.Message, ids map[string]bool) {
	t.Helper()
	if err := m.Validate(); err != nil {
		t.Errorf("message %s: %v", m.ID, err)
	}
	if ids[m.ID] {
		t.Errorf("message id %s twice", m.ID)
	}
	ids[m.ID] = true
}

// CheckTree checks what a reader of forks and sub-agents must return,
// whatever its files held: each session's SourceID set, on one line
// and its own; its kind main, fork or sub-agent, a fork or sub-agent
// naming its parent and a fork coming after it; each message valid,
// its id set and unique in the session, its parts' ids set and unique
// in the message; each tool call's input a JSON object.
func CheckTree(t testing.TB, res *importer.Result) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range res.Sessions {
		checkSourceID(t, s, seen)
		switch s.Kind {
		case loom.KindMain:
		case loom.KindFork, loom.KindSubagent:
			if s.ParentSourceID == "" {
				t.Errorf("%s session %s has no parent", s.Kind, s.SourceID)
			}
			if s.Kind == loom.KindFork && !seen[s.ParentSourceID] {
				t.Errorf("fork %s comes before its parent %s", s.SourceID, s.ParentSourceID)
			}
		default:
			t.Errorf("session %s kind %q", s.SourceID, s.Kind)
		}
		ids := map[string]bool{}
		for _, m := range s.Messages {
			checkMessage(t, m, ids)
			if m.ID == "" {
				t.Errorf("session %s has a message without an id", s.SourceID)
			}
			parts := map[string]bool{}
			for _, p := range m.Parts {
				if p.ID == "" || parts[p.ID] {
					t.Errorf("message %s part id %q empty or repeated", m.ID, p.ID)
				}
				parts[p.ID] = true
				if p.Type == loom.PartTool && (len(p.Input) == 0 || p.Input[0] != '{') {
					t.Errorf("tool part %s input %s is not an object", p.ID, p.Input)
				}
			}
		}
	}
}

// Session is the session of res with source id id; the test fails,
// naming the ones there are, when there is none.
func Session(t testing.TB, res *importer.Result, id string) *importer.Session {
	t.Helper()
	var have []string
	for _, s := range res.Sessions {
		if s.SourceID == id {
			return s
		}
		have = append(have, s.SourceID)
	}
	t.Fatalf("no session %s among %v", id, have)
	return nil
}

// SessionOf reads root with f and returns its session with source id
// id, whose messages' roles (Roles) must be roles: the test fails
// otherwise.
func SessionOf(t testing.TB, f importer.Format, root, id, roles string) *importer.Session {
	t.Helper()
	s := Session(t, ReadAll(t, f, root), id)
	if got := Roles(s); got != roles {
		t.Fatalf("session %s: roles %q, want %q", id, got, roles)
	}
	return s
}

// Message is the message of s with id id; the test fails when there is
// none.
func Message(t testing.TB, s *importer.Session, id string) *loom.Message {
	t.Helper()
	for _, m := range s.Messages {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("session %s has no message %s", s.SourceID, id)
	return nil
}

// Symlink makes a symbolic link name to target, and the directory it
// is in; the test is skipped where there are no links.
func Symlink(t testing.TB, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}

// Store is a new SQLite store in a temporary directory, closed when the
// test ends.
func Store(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "loom.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Import runs one import of f's sessions at roots into st as user
// "alice", and returns its report; an error of the run fails the test.
func Import(t testing.TB, st loom.Engine, f importer.Format, roots ...string) *importer.ToolReport {
	t.Helper()
	im := &importer.Importer{Store: st, UserID: "alice"}
	rep, err := im.Run(context.Background(), []importer.Target{{Format: f, Roots: roots, Explicit: true}})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Tools[0]
}

// Check fails the test for anything in res that loom would not store: a
// session without an id, a message that is not valid.
func Check(t testing.TB, res *importer.Result) {
	t.Helper()
	for _, s := range res.Sessions {
		if s.SourceID == "" {
			t.Errorf("session without an id")
		}
		for _, m := range s.Messages {
			if err := m.Validate(); err != nil {
				t.Errorf("session %s message %s: %v", s.SourceID, m.ID, err)
			}
		}
	}
}

// CheckValidOf checks what every reader's result must be: each session's
// source id keys a session of tool and is unique in the result, its
// messages are valid, their ids unique, none completed before it was
// created, and part ids unique and under their message's id.
func CheckValidOf(t testing.TB, tool string, res *importer.Result) {
	t.Helper()
	for _, s := range res.Sessions {
		if loom.ValidKey(tool+":"+s.SourceID) != nil {
			t.Errorf("SourceID %q cannot key a session of %s", s.SourceID, tool)
		}
	}
	CheckValid(t, res)
}

// Roles is the roles of s's messages in order, separated by spaces.
func Roles(s *importer.Session) string {
	r := make([]string, 0, len(s.Messages))
	for _, m := range s.Messages {
		r = append(r, m.Role)
	}
	return strings.Join(r, " ")
}

// Texts is the text of each of s's messages of role that has any, in
// order: a session's prompts (loom.RoleUser) or replies.
func Texts(s *importer.Session, role string) []string {
	var out []string
	for _, m := range s.Messages {
		if m.Role == role && m.Text() != "" {
			out = append(out, m.Text())
		}
	}
	return out
}

// SumUsage is the usage of s's messages added up.
func SumUsage(s *importer.Session) loom.Usage {
	var u loom.Usage
	for _, m := range s.Messages {
		u.Add(m.Usage)
	}
	return u
}

// ReadFile reads the file at path with f, failing the test when it
// cannot, and checks the result (CheckValidOf).
func ReadFile(t testing.TB, f importer.Format, path string) *importer.Result {
	t.Helper()
	res, err := f.Read(context.Background(), importer.Bundle{Files: []string{path}})
	if err != nil {
		t.Fatalf("Read(%s): %v", path, err)
	}
	CheckValidOf(t, f.Tool(), res)
	return res
}

// SQLiteWriter opens the database at path (made with its directory if
// need be) read-write in WAL mode, as the agents that keep their
// sessions in SQLite run it: the program writing while a test reads.
func SQLiteWriter(t testing.TB, path string) *sql.DB {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// Exec runs q on db, failing the test when it fails.
func Exec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// ReadAllValid is ReadAll, the result checked as every reader's must be
// (CheckValidOf).
func ReadAllValid(t testing.TB, f importer.Format, root string) *importer.Result {
	t.Helper()
	res := ReadAll(t, f, root)
	CheckValidOf(t, f.Tool(), res)
	return res
}

// Watching is an importer.Watch of one format's roots into a store, run
// until the test ends.
type Watching struct {
	reports chan *importer.Report
}

// Watch starts following f's sessions at roots into st as user "alice"
// (importer.Watch, no periodic rescan: only file notifications bring a
// change in), stopped when the test ends.
func Watch(t testing.TB, st loom.Engine, f importer.Format, roots ...string) *Watching {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watching{reports: make(chan *importer.Report, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		im := &importer.Importer{Store: st, UserID: "alice"}
		_ = im.Watch(ctx, []importer.Target{{Format: f, Roots: roots, Explicit: true}},
			importer.WatchOptions{Rescan: time.Hour}, func(r *importer.Report) {
				select {
				case w.reports <- r:
				case <-ctx.Done():
				}
			})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// First is the report of the watch's first run, which imports what is
// there.
func (w *Watching) First(t testing.TB) *importer.ToolReport {
	t.Helper()
	select {
	case r := <-w.reports:
		return r.Tools[0]
	case <-time.After(time.Minute):
		t.Fatal("the watch made no first run")
	}
	return nil
}

// Follows fails the test unless a run of the watch adds messages within
// a second: what was written (named by what) was followed.
func (w *Watching) Follows(t testing.TB, what string) {
	t.Helper()
	deadline := time.After(time.Second)
	for {
		select {
		case r := <-w.reports:
			if r.Tools[0].MessagesAdded > 0 {
				return
			}
		case <-deadline:
			t.Fatalf("%s was not imported within a second", what)
		}
	}
}

// RefusesOtherDB checks that f refuses, with an error, a SQLite database
// that is not its tool's.
func RefusesOtherDB(t testing.TB, f importer.Format, name string) {
	t.Helper()
	other := filepath.Join(t.TempDir(), name)
	db := SQLiteWriter(t, other)
	Exec(t, db, `CREATE TABLE t (a)`)
	db.Close()
	if _, err := f.Read(context.Background(), importer.Bundle{Files: []string{other}}); err == nil || !strings.Contains(err.Error(), "not a") {
		t.Errorf("read a database that is not %s's: %v", f.Tool(), err)
	}
}

// NothingNew imports f's sessions at roots into st once more and fails
// the test when that adds or changes anything.
func NothingNew(t testing.TB, st loom.Engine, f importer.Format, roots ...string) {
	t.Helper()
	if rep := Import(t, st, f, roots...); rep.MessagesAdded != 0 || rep.SessionsNew != 0 || rep.SessionsGrown != 0 {
		t.Fatalf("an import of what was imported: %+v", rep)
	}
}

// GrowsBy imports f's sessions at roots into st once more after one of
// them grew: the test fails unless that import grows one session by
// messages messages and adds none, and one more import adds nothing
// (NothingNew).
func GrowsBy(t testing.TB, st loom.Engine, f importer.Format, messages int, roots ...string) {
	t.Helper()
	if rep := Import(t, st, f, roots...); rep.SessionsGrown != 1 || rep.MessagesAdded != messages || rep.SessionsNew != 0 {
		t.Fatalf("import of a grown session: %+v, want it grown by %d messages", rep, messages)
	}
	NothingNew(t, st, f, roots...)
}

// StoredUsage is the usage of the stored session of tool whose source
// id is id (user "alice"); the test fails when there is none.
func StoredUsage(t testing.TB, st loom.Store, tool, id string) loom.Usage {
	t.Helper()
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Surface: tool})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if s.Key == tool+":"+id {
			return s.Usage
		}
	}
	t.Fatalf("no stored session %s:%s", tool, id)
	return loom.Usage{}
}

// Zstd is data compressed with zstd.
func Zstd(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ImportThenWatch imports f's sessions at roots into st (the test fails
// unless that brings new sessions and no file fails), then watches
// them, its first run done.
func ImportThenWatch(t testing.TB, st loom.Engine, f importer.Format, roots ...string) *Watching {
	t.Helper()
	if rep := Import(t, st, f, roots...); rep.SessionsNew == 0 || rep.FilesFailed != 0 {
		t.Fatalf("first import %+v", rep)
	}
	w := Watch(t, st, f, roots...)
	w.First(t)
	return w
}

// CheckComplete checks CheckValid, and that no session is without
// messages and every tool part ended, completed or failed.
func CheckComplete(t testing.TB, res *importer.Result) {
	t.Helper()
	CheckValid(t, res)
	for _, s := range res.Sessions {
		if len(s.Messages) == 0 {
			t.Errorf("session %s has no messages", s.SourceID)
		}
		for _, m := range s.Messages {
			for _, p := range m.Parts {
				if p.Type == loom.PartTool && p.Status != loom.ToolCompleted && p.Status != loom.ToolError {
					t.Errorf("tool part %s is %q", p.ID, p.Status)
				}
			}
		}
	}
}

// Handoff is a session to hand off for a writer's tests, to be written
// under home for the project /src/my app: a prompt, then a reply with
// reasoning, a shell command (Bash), a failed file read (Read), a call of
// a tool no target has (WebSearch) and text after them.
func Handoff(home string) *handoff.Handoff {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	done := at.Add(time.Second)
	return &handoff.Handoff{Session: &loom.Session{ID: "s"}, Dir: "/src/my app", Home: home, Env: func(string) string { return "" }, Now: at,
		Messages: []*loom.Message{
			{ID: "u", Role: loom.RoleUser, Turn: 1, CreatedAt: at, Parts: []loom.Part{{Type: loom.PartText, Text: "What changed?"}}},
			{ID: "a", Role: loom.RoleAssistant, Turn: 1, CreatedAt: at, Model: "m", Parts: []loom.Part{
				{Type: loom.PartReasoning, Text: "Look at the log."},
				{Type: loom.PartTool, CallID: "1", Name: "Bash", Status: loom.ToolCompleted, Input: json.RawMessage(`{"command":"git log -1"}`), Output: json.RawMessage(`"one commit"`), EndedAt: &done},
				{Type: loom.PartTool, CallID: "2", Name: "Read", Status: loom.ToolError, Input: json.RawMessage(`{"file_path":"/src/my app/x.go"}`), Error: "no such file"},
				{Type: loom.PartTool, CallID: "3", Name: "WebSearch", Status: loom.ToolCompleted, Input: json.RawMessage(`{"query":"q"}`), Output: json.RawMessage(`"r"`)},
				{Type: loom.PartText, Text: "One commit."},
			}},
		}}
}

// HandOff hands h to w and returns what w wrote; an error fails the
// test.
func HandOff(t testing.TB, w handoff.Writer, h *handoff.Handoff) *handoff.Handed {
	t.Helper()
	out, err := w.Handoff(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// HandsBack hands Handoff to f under a new home directory, reads the
// file back with f's reader and checks it with CheckHandedBack (shell
// and read are f's tools for the shell command and the file read). It
// returns the home and what f wrote, for the caller to check where.
func HandsBack(t testing.TB, f interface {
	importer.Format
	handoff.Writer
}, shell, read string) (string, *handoff.Handed) {
	t.Helper()
	home := t.TempDir()
	out := HandOff(t, f, Handoff(home))
	res, err := f.Read(context.Background(), importer.Bundle{Files: []string{out.Path}})
	if err != nil {
		t.Fatal(err)
	}
	CheckHandedBack(t, res, out, shell, read)
	return home, out
}

// CheckHandedBack checks s, read back from the file Handoff was written
// to as out: a session of out's id that continues session "s" in its
// directory, with the prompt, the reasoning, the reply's text last, and
// the shell command and the file read as the calls shell and read with
// their results, the other call told as text.
func CheckHandedBack(t testing.TB, res *importer.Result, out *handoff.Handed, shell, read string) {
	t.Helper()
	CheckComplete(t, res)
	s := Session(t, res, out.SessionID)
	if s.Origin == nil || s.Origin.SessionID != "s" || s.Cwd != "/src/my app" || len(res.Problems) != 0 || out.ToolCalls != 2 || out.ToolRecords != 1 {
		t.Errorf("session %+v, origin %+v, problems %v, handed %+v", s, s.Origin, res.Problems, out)
	}
	var calls []string
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type == loom.PartTool {
				calls = append(calls, p.Name+" "+p.Status+" "+string(p.Output)+p.Error)
			}
		}
	}
	if got, want := strings.Join(calls, "; "), shell+` completed "one commit"; `+read+` error no such file`; got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
	c := TallyOf(s)
	if c.Reasoning != 1 || c.Roles["user"] != 1 || !strings.Contains(s.Messages[len(s.Messages)-1].Text(), "One commit.") {
		t.Errorf("tally %+v: %s", c, Roles(s))
	}
}
