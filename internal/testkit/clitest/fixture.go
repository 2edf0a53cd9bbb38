package clitest

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
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/syncrun"
)

// Base is the fixture's clock: every store write advances it one second,
// so that the order of sessions and their times are the same every run.
var Base = time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)

// Fixture is a LOOM_HOME with a populated store and two project
// directories.
type Fixture struct {
	Home    string
	DB      string
	Project string // a git work tree: the "api" project
	Other   string // a plain directory: the "web" project
	Proj    loom.Project
	OtherP  loom.Project

	Main  *loom.Session // every part type, 3 turns
	Sub   *loom.Session // sub-agent session of main
	Fork  *loom.Session // main forked at turn 1
	Web   *loom.Session // in the other project
	Twin1 *loom.Session // twin1 and twin2 share a title
	Twin2 *loom.Session
	Tg    *loom.Session // telegram surface, no project

	Clock time.Time
	mu    sync.Mutex
	// ExtraEnv is added to the environment of every loom process.
	ExtraEnv []string
}

func (fx *Fixture) Now() time.Time {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	fx.Clock = fx.Clock.Add(time.Second)
	return fx.Clock
}

func MustProject(t *testing.T, dir string) loom.Project {
	t.Helper()
	p, err := paths.DetectProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// NewEmptyFixture makes the directories and an empty store.
func NewEmptyFixture(t *testing.T) *Fixture {
	t.Helper()
	home := t.TempDir()
	fx := &Fixture{
		Home:    home,
		DB:      filepath.Join(home, "data", "sessions.db"),
		Project: filepath.Join(home, "src", "api"),
		Other:   filepath.Join(home, "src", "web"),
		Clock:   Base,
	}
	for _, d := range []string{filepath.Join(fx.Project, ".git"), filepath.Join(fx.Project, "pkg"), fx.Other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fx.Proj = MustProject(t, fx.Project)
	fx.OtherP = MustProject(t, fx.Other)
	if OnPostgres() {
		fx.DB = FreshSchema(t)
	}
	return fx
}

// OpenStore opens the fixture's store with the fixture's clock.
func (fx *Fixture) OpenStore(t *testing.T) *FixtureStore {
	t.Helper()
	o, err := openEngine(context.Background(), fx.DB, sqlite.ModeCreate)
	if err != nil {
		t.Fatal(err)
	}
	o.setNow(fx.Now)
	t.Cleanup(func() { o.st.Close() })
	return &FixtureStore{FixtureEngine: o.st, db: o.db}
}

// OpenEngine opens fx's store as OpenEngine does, on the real clock
// (OpenStore's runs on fx's); the caller closes it.
func (fx *Fixture) OpenEngine(t *testing.T) FixtureEngine {
	t.Helper()
	st, err := OpenEngine(context.Background(), fx.DB)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TextMsg(role, text string, at time.Time) *loom.Message {
	return &loom.Message{Role: role, CreatedAt: at, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
}

// TimeAt returns t as a message or part time (a pointer to it).
func TimeAt(t time.Time) *time.Time { return &t }

// IDAt returns a UUIDv7 made at t, so that fixture sessions made minutes
// apart (on the fixture's clock) have ids as far apart as real ones.
func IDAt(t time.Time) string {
	u := uuid.Must(uuid.NewV7())
	ms := uint64(t.UnixMilli())
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (8 * (5 - i)))
	}
	return u.String()
}

// NewFixture populates a store: a session with every part type, its
// sub-agent session and a fork, a session in another project, two
// sessions with the same title and a telegram session.
func NewFixture(t *testing.T) *Fixture {
	t.Helper()
	fx := NewEmptyFixture(t)
	ctx := context.Background()
	st := fx.OpenStore(t)
	at := func(min int) time.Time { return Base.Add(time.Duration(min) * time.Minute) }
	app := func(s *loom.Session, msgs ...*loom.Message) {
		t.Helper()
		if err := st.Append(ctx, s, msgs...); err != nil {
			t.Fatal(err)
		}
	}

	fx.Main = &loom.Session{ID: IDAt(at(0)), UserID: "local", Key: "cli:api", Project: fx.Proj, Cwd: fx.Project, Model: "gpt-x", Provider: "openai", Title: "Fix the flaky test"}
	u1 := TextMsg(loom.RoleUser, "Why does TestRetry flake?", at(0))
	a1 := &loom.Message{Role: loom.RoleAssistant, Model: "gpt-x", Provider: "openai", CreatedAt: at(1), CompletedAt: TimeAt(at(1).Add(3 * time.Second)),
		Usage: loom.Usage{InputTokens: 1200, OutputTokens: 300, ReasoningTokens: 50, CacheReadTokens: 800, CacheWriteTokens: 100, CostUSD: 0.0125, APICalls: 1},
		Parts: []loom.Part{
			{Type: loom.PartStepStart},
			{Type: loom.PartReasoning, Text: "The retry loop races with the timer."},
			{Type: loom.PartText, Text: "Let me read the test."},
			{Type: loom.PartTool, CallID: "call_1", Name: "read_file", Status: loom.ToolCompleted, Title: "retry_test.go",
				Input: json.RawMessage(`{"path":"retry_test.go"}`), Output: json.RawMessage(`"package retry\n\nfunc TestRetry(t *testing.T) {}"`),
				Metadata: json.RawMessage(`{"lines":42}`), StartedAt: TimeAt(at(1).Add(time.Second)), EndedAt: TimeAt(at(1).Add(time.Second + 120*time.Millisecond))},
			{Type: loom.PartTool, CallID: "call_2", Name: "run_tests", Status: loom.ToolError, Error: "exit status 1: FAIL TestRetry",
				Input: json.RawMessage(`{"pkg":"./retry"}`), StartedAt: TimeAt(at(1).Add(2 * time.Second)), EndedAt: TimeAt(at(1).Add(4 * time.Second))},
			{Type: loom.PartStepFinish, Usage: &loom.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0125, APICalls: 1}},
		}}
	app(fx.Main, u1, a1)

	fx.Sub = &loom.Session{ID: IDAt(at(2)), UserID: "local", Kind: loom.KindSubagent, ParentID: fx.Main.ID, Project: fx.Proj, Cwd: fx.Project, Title: "explore retry"}
	app(fx.Sub, TextMsg(loom.RoleUser, "List the files of the retry package.", at(2)),
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-x-mini", Provider: "openai", CreatedAt: at(3), Usage: loom.Usage{InputTokens: 100, OutputTokens: 20, CostUSD: 0.001, APICalls: 1},
			Parts: []loom.Part{{Type: loom.PartText, Text: "retry.go, retry_test.go, clock.go"}}})

	a2 := &loom.Message{Role: loom.RoleAssistant, Model: "gpt-x", Provider: "openai", CreatedAt: at(4),
		Parts: []loom.Part{
			{Type: loom.PartAgent, Name: "explore", SessionID: fx.Sub.ID},
			{Type: loom.PartText, Text: "The package has a clock; the test uses the real one."},
		}}
	sum := TextMsg(loom.RoleSummary, "The user asked why TestRetry flakes; it uses the real clock.", at(5))
	sum.Usage.Compactions = 1
	failed := TextMsg(loom.RoleAssistant, "", at(7))
	failed.Parts = nil
	failed.Error = &loom.MessageError{Message: "rate limited", Type: "rate_limit"}
	// The file part sits in turn 2, outside the fork made at turn 1: the
	// store's fork derives last_prompt from the search text (file names
	// included) while append and import use the text parts only, so a
	// fork of a prompt with a file would not round-trip byte for byte.
	u2 := TextMsg(loom.RoleUser, "Use a fake clock then.", at(6))
	u2.Parts = append(u2.Parts, loom.Part{Type: loom.PartFile, Mime: "text/x-go", Filename: "retry_test.go", URL: "file:///src/api/retry_test.go",
		Source: &loom.FileSource{Type: "file", Path: "retry_test.go", Start: 10, End: 42}})
	app(fx.Main, a2, sum, u2, failed,
		TextMsg(loom.RoleSystem, "Profile switched to reviewer.", at(8)),
		TextMsg(loom.RoleUser, "thanks", at(9)),
		TextMsg(loom.RoleAssistant, "You're welcome — the fix is in clock.go.", at(10)))

	var err error
	if fx.Fork, err = st.Fork(ctx, fx.Main.ID, loom.ForkOptions{ID: IDAt(at(15)), Turn: 1, Title: "flaky test, other approach"}); err != nil {
		t.Fatal(err)
	}

	fx.Web = &loom.Session{ID: IDAt(at(20)), UserID: "local", Key: "cli:web", Project: fx.OtherP, Cwd: fx.Other, Title: "Deploy notes"}
	app(fx.Web, TextMsg(loom.RoleUser, "How do we deploy the web app?", at(20)), TextMsg(loom.RoleAssistant, "With the deploy script.", at(21)))

	fx.Twin1 = &loom.Session{ID: IDAt(at(30)), UserID: "local", Key: "cli:api:1", Project: fx.Proj, Cwd: fx.Project, Title: "Twin"}
	app(fx.Twin1, TextMsg(loom.RoleUser, "first twin", at(30)))
	fx.Twin2 = &loom.Session{ID: IDAt(at(32)), UserID: "local", Key: "cli:api:2", Project: fx.Proj, Cwd: fx.Project, Title: "Twin"}
	app(fx.Twin2, TextMsg(loom.RoleUser, "second twin", at(31)))

	fx.Tg = &loom.Session{ID: IDAt(at(40)), UserID: "local", Key: "telegram:42", Title: "Telegram chat"}
	app(fx.Tg, TextMsg(loom.RoleUser, "hello from telegram", at(40)))

	// Someone else's session, never visible to local.
	app(&loom.Session{ID: IDAt(at(50)), UserID: "bob", Key: "cli:api", Project: fx.Proj, Title: "Bob's flaky test"},
		TextMsg(loom.RoleUser, "flaky flake TestRetry", at(50)))

	// Re-read the sessions as listed.
	for _, p := range []**loom.Session{&fx.Main, &fx.Sub, &fx.Web, &fx.Twin1, &fx.Twin2, &fx.Tg} {
		s, err := st.Session(ctx, (*p).ID)
		if err != nil {
			t.Fatal(err)
		}
		*p = s
	}
	st.Close()
	return fx
}

// Env returns the environment of a loom run on the fixture.
func (fx *Fixture) Env() map[string]string {
	env := map[string]string{"LOOM_HOME": fx.Home, "HOME": fx.Home}
	if OnPostgres() {
		env["LOOM_DB"] = fx.DB
	}
	if RedactingOnWrite() {
		env["LOOM_REDACT_ON_WRITE"] = "true"
	}
	return env
}

// Result is what a command run produced.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// RunOpts sets how a command runs in process.
type RunOpts struct {
	Dir    string
	Stdin  string
	Tty    bool
	Width  int // of the terminal, with tty; default 200
	Env    map[string]string
	Before func(*cli.Factory)
}

// Run runs loom in process, in the project directory, with output piped.
func (fx *Fixture) Run(t *testing.T, args ...string) Result {
	t.Helper()
	return fx.RunWith(t, RunOpts{}, args...)
}

func (fx *Fixture) RunWith(t *testing.T, o RunOpts, args ...string) Result {
	t.Helper()
	ios, in, out, errOut := term.Test()
	in.WriteString(o.Stdin)
	if o.Tty {
		ios.SetStdinTTY(true)
		ios.SetStdoutTTY(true)
		ios.SetStderrTTY(true)
		ios.SetWidth(200)
		if o.Width > 0 {
			ios.SetWidth(o.Width)
		}
	}
	dir := o.Dir
	if dir == "" {
		dir = fx.Project
	}
	env := fx.Env()
	for k, v := range o.Env {
		env[k] = v
	}
	f := &cli.Factory{
		IO:    ios,
		Env:   func(k string) string { return env[k] },
		Getwd: func() (string, error) { return dir, nil },
		OpenStore: func(ctx context.Context, url string, access cli.Access, opts ...sessionstore.Option) (loom.Engine, error) {
			return openFor(ctx, url, access, fx.Now, opts...)
		},
		OpenReplica: func(ctx context.Context, url string, opts ...sessionstore.Option) (loom.Engine, syncrun.Store, error) {
			return openReplica(ctx, url, fx.Now, opts...)
		},
		Now:     func() time.Time { return Base.Add(2 * time.Hour) },
		Version: "1.2.3-test",
	}
	if o.Before != nil {
		o.Before(f)
	}
	code := cli.Main(f, args)
	return Result{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// MustRun runs loom and fails the test unless it exits 0.
func (fx *Fixture) MustRun(t *testing.T, args ...string) string {
	t.Helper()
	r := fx.Run(t, args...)
	if r.Code != 0 {
		t.Fatalf("loom %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// SessionCount counts every session row of the store, trash included.
func (fx *Fixture) SessionCount(t *testing.T) (sessions, messages int) {
	t.Helper()
	st := fx.OpenStore(t)
	defer st.Close()
	if err := st.DB().QueryRow(`SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages)`).Scan(&sessions, &messages); err != nil {
		t.Fatal(err)
	}
	return sessions, messages
}

func Lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func DecodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, s)
	}
	return v
}
