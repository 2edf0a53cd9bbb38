package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/paths"
)

// base is the fixture's clock: every store write advances it one second,
// so that the order of sessions and their times are the same every run.
var base = time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)

// fixture is a LOOM_HOME with a populated store and two project
// directories.
type fixture struct {
	home    string
	db      string
	project string // a git work tree: the "api" project
	other   string // a plain directory: the "web" project
	proj    loom.Project
	otherP  loom.Project

	main  *loom.Session // every part type, 3 turns
	sub   *loom.Session // sub-agent session of main
	fork  *loom.Session // main forked at turn 1
	web   *loom.Session // in the other project
	twin1 *loom.Session // twin1 and twin2 share a title
	twin2 *loom.Session
	tg    *loom.Session // telegram surface, no project

	clock time.Time
	mu    sync.Mutex
	// extraEnv is added to the environment of every loom process.
	extraEnv []string
}

func (fx *fixture) now() time.Time {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	fx.clock = fx.clock.Add(time.Second)
	return fx.clock
}

func mustProject(t *testing.T, dir string) loom.Project {
	t.Helper()
	p, err := paths.DetectProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newEmptyFixture makes the directories and an empty store.
func newEmptyFixture(t *testing.T) *fixture {
	t.Helper()
	home := t.TempDir()
	fx := &fixture{
		home:    home,
		db:      filepath.Join(home, "data", "sessions.db"),
		project: filepath.Join(home, "src", "api"),
		other:   filepath.Join(home, "src", "web"),
		clock:   base,
	}
	for _, d := range []string{filepath.Join(fx.project, ".git"), filepath.Join(fx.project, "pkg"), fx.other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fx.proj = mustProject(t, fx.project)
	fx.otherP = mustProject(t, fx.other)
	if onPostgres() {
		fx.db = freshSchema(t)
	}
	return fx
}

// openStore opens the fixture's store with the fixture's clock.
func (fx *fixture) openStore(t *testing.T) *fixtureStore {
	t.Helper()
	st, err := openEngine(context.Background(), fx.db)
	if err != nil {
		t.Fatal(err)
	}
	setNow(st, fx.now)
	t.Cleanup(func() { st.Close() })
	return &fixtureStore{st}
}

func textMsg(role, text string, at time.Time) *loom.Message {
	return &loom.Message{Role: role, CreatedAt: at, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
}

func tp(t time.Time) *time.Time { return &t }

// idAt returns a UUIDv7 made at t, so that fixture sessions made minutes
// apart (on the fixture's clock) have ids as far apart as real ones.
func idAt(t time.Time) string {
	u := uuid.Must(uuid.NewV7())
	ms := uint64(t.UnixMilli())
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (8 * (5 - i)))
	}
	return u.String()
}

// newFixture populates a store: a session with every part type, its
// sub-agent session and a fork, a session in another project, two
// sessions with the same title and a telegram session.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := newEmptyFixture(t)
	ctx := context.Background()
	st := fx.openStore(t)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	app := func(s *loom.Session, msgs ...*loom.Message) {
		t.Helper()
		if err := st.Append(ctx, s, msgs...); err != nil {
			t.Fatal(err)
		}
	}

	fx.main = &loom.Session{ID: idAt(at(0)), UserID: "local", Key: "cli:api", Project: fx.proj, Cwd: fx.project, Model: "gpt-x", Provider: "openai", Title: "Fix the flaky test"}
	u1 := textMsg(loom.RoleUser, "Why does TestRetry flake?", at(0))
	a1 := &loom.Message{Role: loom.RoleAssistant, Model: "gpt-x", Provider: "openai", CreatedAt: at(1), CompletedAt: tp(at(1).Add(3 * time.Second)),
		Usage: loom.Usage{InputTokens: 1200, OutputTokens: 300, ReasoningTokens: 50, CacheReadTokens: 800, CacheWriteTokens: 100, CostUSD: 0.0125, APICalls: 1},
		Parts: []loom.Part{
			{Type: loom.PartStepStart},
			{Type: loom.PartReasoning, Text: "The retry loop races with the timer."},
			{Type: loom.PartText, Text: "Let me read the test."},
			{Type: loom.PartTool, CallID: "call_1", Name: "read_file", Status: loom.ToolCompleted, Title: "retry_test.go",
				Input: json.RawMessage(`{"path":"retry_test.go"}`), Output: json.RawMessage(`"package retry\n\nfunc TestRetry(t *testing.T) {}"`),
				Metadata: json.RawMessage(`{"lines":42}`), StartedAt: tp(at(1).Add(time.Second)), EndedAt: tp(at(1).Add(time.Second + 120*time.Millisecond))},
			{Type: loom.PartTool, CallID: "call_2", Name: "run_tests", Status: loom.ToolError, Error: "exit status 1: FAIL TestRetry",
				Input: json.RawMessage(`{"pkg":"./retry"}`), StartedAt: tp(at(1).Add(2 * time.Second)), EndedAt: tp(at(1).Add(4 * time.Second))},
			{Type: loom.PartStepFinish, Usage: &loom.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0125, APICalls: 1}},
		}}
	app(fx.main, u1, a1)

	fx.sub = &loom.Session{ID: idAt(at(2)), UserID: "local", Kind: loom.KindSubagent, ParentID: fx.main.ID, Project: fx.proj, Cwd: fx.project, Title: "explore retry"}
	app(fx.sub, textMsg(loom.RoleUser, "List the files of the retry package.", at(2)),
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-x-mini", Provider: "openai", CreatedAt: at(3), Usage: loom.Usage{InputTokens: 100, OutputTokens: 20, CostUSD: 0.001, APICalls: 1},
			Parts: []loom.Part{{Type: loom.PartText, Text: "retry.go, retry_test.go, clock.go"}}})

	a2 := &loom.Message{Role: loom.RoleAssistant, Model: "gpt-x", Provider: "openai", CreatedAt: at(4),
		Parts: []loom.Part{
			{Type: loom.PartAgent, Name: "explore", SessionID: fx.sub.ID},
			{Type: loom.PartText, Text: "The package has a clock; the test uses the real one."},
		}}
	sum := textMsg(loom.RoleSummary, "The user asked why TestRetry flakes; it uses the real clock.", at(5))
	sum.Usage.Compactions = 1
	failed := textMsg(loom.RoleAssistant, "", at(7))
	failed.Parts = nil
	failed.Error = &loom.MessageError{Message: "rate limited", Type: "rate_limit"}
	// The file part sits in turn 2, outside the fork made at turn 1: the
	// store's fork derives last_prompt from the search text (file names
	// included) while append and import use the text parts only, so a
	// fork of a prompt with a file would not round-trip byte for byte.
	u2 := textMsg(loom.RoleUser, "Use a fake clock then.", at(6))
	u2.Parts = append(u2.Parts, loom.Part{Type: loom.PartFile, Mime: "text/x-go", Filename: "retry_test.go", URL: "file:///src/api/retry_test.go",
		Source: &loom.FileSource{Type: "file", Path: "retry_test.go", Start: 10, End: 42}})
	app(fx.main, a2, sum, u2, failed,
		textMsg(loom.RoleSystem, "Profile switched to reviewer.", at(8)),
		textMsg(loom.RoleUser, "thanks", at(9)),
		textMsg(loom.RoleAssistant, "You're welcome — the fix is in clock.go.", at(10)))

	var err error
	if fx.fork, err = st.Fork(ctx, fx.main.ID, loom.ForkOptions{ID: idAt(at(15)), Turn: 1, Title: "flaky test, other approach"}); err != nil {
		t.Fatal(err)
	}

	fx.web = &loom.Session{ID: idAt(at(20)), UserID: "local", Key: "cli:web", Project: fx.otherP, Cwd: fx.other, Title: "Deploy notes"}
	app(fx.web, textMsg(loom.RoleUser, "How do we deploy the web app?", at(20)), textMsg(loom.RoleAssistant, "With the deploy script.", at(21)))

	fx.twin1 = &loom.Session{ID: idAt(at(30)), UserID: "local", Key: "cli:api:1", Project: fx.proj, Cwd: fx.project, Title: "Twin"}
	app(fx.twin1, textMsg(loom.RoleUser, "first twin", at(30)))
	fx.twin2 = &loom.Session{ID: idAt(at(32)), UserID: "local", Key: "cli:api:2", Project: fx.proj, Cwd: fx.project, Title: "Twin"}
	app(fx.twin2, textMsg(loom.RoleUser, "second twin", at(31)))

	fx.tg = &loom.Session{ID: idAt(at(40)), UserID: "local", Key: "telegram:42", Title: "Telegram chat"}
	app(fx.tg, textMsg(loom.RoleUser, "hello from telegram", at(40)))

	// Someone else's session, never visible to local.
	app(&loom.Session{ID: idAt(at(50)), UserID: "bob", Key: "cli:api", Project: fx.proj, Title: "Bob's flaky test"},
		textMsg(loom.RoleUser, "flaky flake TestRetry", at(50)))

	// Re-read the sessions as listed.
	for _, p := range []**loom.Session{&fx.main, &fx.sub, &fx.web, &fx.twin1, &fx.twin2, &fx.tg} {
		s, err := st.Session(ctx, (*p).ID)
		if err != nil {
			t.Fatal(err)
		}
		*p = s
	}
	st.Close()
	return fx
}

// env returns the environment of a loom run on the fixture.
func (fx *fixture) env() map[string]string {
	env := map[string]string{"LOOM_HOME": fx.home, "HOME": fx.home}
	if onPostgres() {
		env["LOOM_DB"] = fx.db
	}
	return env
}

// result is what a command run produced.
type result struct {
	code           int
	stdout, stderr string
}

// runOpts sets how a command runs in process.
type runOpts struct {
	dir    string
	stdin  string
	tty    bool
	width  int // of the terminal, with tty; default 200
	env    map[string]string
	before func(*Factory)
}

// run runs loom in process, in the project directory, with output piped.
func (fx *fixture) run(t *testing.T, args ...string) result {
	t.Helper()
	return fx.runWith(t, runOpts{}, args...)
}

func (fx *fixture) runWith(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	ios, in, out, errOut := term.Test()
	in.WriteString(o.stdin)
	if o.tty {
		ios.SetStdinTTY(true)
		ios.SetStdoutTTY(true)
		ios.SetStderrTTY(true)
		ios.SetWidth(200)
		if o.width > 0 {
			ios.SetWidth(o.width)
		}
	}
	dir := o.dir
	if dir == "" {
		dir = fx.project
	}
	env := fx.env()
	for k, v := range o.env {
		env[k] = v
	}
	f := &Factory{
		IO:    ios,
		Env:   func(k string) string { return env[k] },
		Getwd: func() (string, error) { return dir, nil },
		OpenStore: func(ctx context.Context, url string, access Access) (loom.Store, error) {
			st, err := openFor(ctx, url, access)
			if err != nil {
				return nil, err
			}
			setNow(st, fx.now)
			return st, nil
		},
		Now:     func() time.Time { return base.Add(2 * time.Hour) },
		Version: "1.2.3-test",
	}
	if o.before != nil {
		o.before(f)
	}
	code := Main(f, args)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// mustRun runs loom and fails the test unless it exits 0.
func (fx *fixture) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	r := fx.run(t, args...)
	if r.code != 0 {
		t.Fatalf("loom %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// sessionCount counts every session row of the store, trash included.
func (fx *fixture) sessionCount(t *testing.T) (sessions, messages int) {
	t.Helper()
	st := fx.openStore(t)
	defer st.Close()
	if err := st.DB().QueryRow(`SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages)`).Scan(&sessions, &messages); err != nil {
		t.Fatal(err)
	}
	return sessions, messages
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, s)
	}
	return v
}
