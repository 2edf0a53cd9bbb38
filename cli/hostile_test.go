package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/export"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// hostile is stored text that tries to take over the terminal it is
// printed on: set the window title (OSC 0), clear the screen, write the
// clipboard (OSC 52), and a C1 CSI that some terminals take as ESC [.
const hostile = "A\x1b]0;pwned\x07B\x1b[2JC\x1b]52;c;cHduZWQ=\x07D\u009b31mE"

// hostileShown is how the start of hostile looks once escaped.
const hostileShown = `A\x1b]0;pwned\x07B`

// noEscapes fails the test when out carries any of hostile's control
// sequences: the bytes that would act on a terminal. Without colour,
// out holds no ESC at all.
func noEscapes(t *testing.T, what, out string, colour bool) {
	t.Helper()
	for _, bad := range []string{"\x07", "\x1b]", "\x1b[2J", "\u009b", "\x9b"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s: output carries %q:\n%q", what, bad, out)
			return
		}
	}
	if !colour && strings.Contains(out, "\x1b") {
		t.Errorf("%s: output without colour carries an ESC:\n%q", what, out)
	}
}

// noEscapesIn checks, as noEscapes does, both what r wrote to stdout and
// what it wrote to stderr.
func noEscapesIn(t *testing.T, what string, r clitest.Result, colour bool) {
	t.Helper()
	noEscapes(t, what+" (stdout)", r.Stdout, colour)
	noEscapes(t, what+" (stderr)", r.Stderr, colour)
}

// newHostileFixture is a store whose one session carries hostile in every
// field a command prints: title, key, model, prompt, reply, reasoning,
// tool title, input, output and error, file name, sub-agent name and a
// message error.
func newHostileFixture(t *testing.T) (*clitest.Fixture, *loom.Session) {
	t.Helper()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	at := clitest.Base.Add(time.Minute)
	s := &loom.Session{ID: clitest.IDAt(at), UserID: "local", Key: "cli:api" + hostile, Project: fx.Proj, Cwd: fx.Project,
		Model: "gpt" + hostile, Provider: "openai", Title: "title pwned " + hostile}
	out, _ := json.Marshal("output " + hostile)
	in, _ := json.Marshal(map[string]string{"path": hostile})
	reply := &loom.Message{Role: loom.RoleAssistant, Model: "gpt" + hostile, Provider: "openai", CreatedAt: at.Add(time.Second),
		Usage: loom.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.001, APICalls: 1},
		Error: &loom.MessageError{Message: "failed " + hostile},
		Parts: []loom.Part{
			{Type: loom.PartReasoning, Text: "thinking " + hostile},
			{Type: loom.PartText, Text: "reply pwned " + hostile + "\nsecond line " + hostile},
			{Type: loom.PartTool, CallID: "c1", Name: "read" + hostile, Status: loom.ToolError, Title: "tool title " + hostile,
				Input: in, Output: out, Error: "tool error " + hostile, StartedAt: clitest.TimeAt(at), EndedAt: clitest.TimeAt(at.Add(time.Second))},
			{Type: loom.PartFile, Filename: "file" + hostile, Mime: "text/plain" + hostile},
			{Type: loom.PartAgent, Name: "agent" + hostile},
		}}
	if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "prompt pwned "+hostile, at), reply); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return fx, s
}

// Every command that prints stored text escapes the control characters
// in it, on a terminal (where loom's own colours still work) and piped.
func TestStoredTextCannotReachTheTerminal(t *testing.T) {
	t.Parallel()
	fx, s := newHostileFixture(t)
	commands := [][]string{
		{"session", "list"},
		{"session", "list", "--all-projects", "--tree"},
		{"session", "show", s.ID, "--show-thinking"},
		{"search", "pwned"},
		{"replay", s.ID, "--speed", "0", "--show-thinking"},
		{"usage"},
		{"session", "export", s.ID, "--format", "markdown"},
	}
	for _, args := range commands {
		for _, tty := range []bool{true, false} {
			if !tty && len(args) > 1 && args[1] == "export" {
				continue // piped, an export is the data (TestStoredTextStaysExactForPrograms)
			}
			name := strings.Join(args, " ")
			if tty {
				name += " (terminal)"
			}
			r := fx.RunWith(t, clitest.RunOpts{Tty: tty}, args...)
			if r.Code != 0 {
				t.Fatalf("%s: exit %d\n%s", name, r.Code, r.Stderr)
			}
			noEscapesIn(t, name, r, tty)
			if args[0] != "usage" && !strings.Contains(r.Stdout, `\x1b]0;`) {
				t.Errorf("%s: the escaped text is not shown:\n%s", name, r.Stdout)
			}
		}
	}
	// Colour still works on a terminal: the data is escaped, not loom's
	// own styles.
	if r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "show", s.ID); !strings.Contains(r.Stdout, "\x1b[1m") {
		t.Errorf("show on a terminal lost its colours:\n%q", r.Stdout)
	}
}

// Data meant for programs stays exact: --json is JSON (which escapes what
// it must), and an export written to a file is what the store holds.
func TestStoredTextStaysExactForPrograms(t *testing.T) {
	t.Parallel()
	fx, s := newHostileFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "show", s.ID, "--json")
	noEscapes(t, "show --json", r.Stdout, false)
	shown := clitest.DecodeJSON[struct {
		Session  *loom.Session   `json:"session"`
		Messages []*loom.Message `json:"messages"`
	}](t, r.Stdout)
	if shown.Session.Title != s.Title {
		t.Fatalf("--json title = %q, want %q", shown.Session.Title, s.Title)
	}
	file := filepath.Join(t.TempDir(), "s.md")
	fx.MustRun(t, "session", "export", s.ID, "--format", "markdown", "-o", file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), hostile) {
		t.Fatalf("the export file is not the stored text:\n%q", b)
	}
}

// Errors and the candidates of an ambiguous reference quote titles and
// keys escaped.
func TestErrorsEscapeStoredText(t *testing.T) {
	t.Parallel()
	fx, s := newHostileFixture(t)
	st := fx.OpenStore(t)
	twin := &loom.Session{ID: clitest.IDAt(clitest.Base.Add(time.Hour)), UserID: "local", Key: "cli:twin", Project: fx.Proj, Cwd: fx.Project, Title: s.Title}
	if err := st.Append(context.Background(), twin, clitest.TextMsg(loom.RoleUser, "twin", clitest.Base.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "show", s.Title)
	if r.Code != cli.ExitAmbiguous {
		t.Fatalf("exit %d, want ambiguous:\n%s", r.Code, r.Stderr)
	}
	noEscapes(t, "ambiguous reference", r.Stderr, true)
	if !strings.Contains(r.Stderr, hostileShown) {
		t.Errorf("candidates do not show the escaped title:\n%s", r.Stderr)
	}

	// An import refused for a record that quotes its own data.
	bad := `{"type":"session","session":{"id":"` + clitest.IDAt(clitest.Base) + `","user_id":"local","created_at":"2025-05-01T10:00:00.000Z","updated_at":"2025-05-01T10:00:00.000Z"}}` + "\n" +
		`{"type":"message","message":{"id":"` + clitest.IDAt(clitest.Base) + `","session_id":` + clitest.JsonString("x"+hostile) + `,"seq":1,"role":"user","parts":[],"created_at":"2025-05-01T10:00:00.000Z"}}` + "\n"
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	r = fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "import", path)
	if r.Code == 0 {
		t.Fatal("a bad import was accepted")
	}
	noEscapes(t, "import error", r.Stderr, true)
}

// The turns that fork offers on a terminal show prompts escaped.
func TestForkChoiceEscapesPrompts(t *testing.T) {
	t.Parallel()
	fx, s := newHostileFixture(t)
	st := fx.OpenStore(t)
	if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "again "+hostile, clitest.Base.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	r := fx.RunWith(t, clitest.RunOpts{Tty: true, Stdin: "1\n"}, "session", "fork", s.ID)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	noEscapesIn(t, "fork", r, true)
}

// The report of an import of another agent's files names files and
// problems escaped: a file name is data too.
func TestImportReportEscapesNames(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "projects", "-src-x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "0196a3b2-0000-7000-8000-00000000000a"+hostile+".jsonl")
	if err := os.WriteFile(name, []byte("{not json "+hostile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{true, false} {
		fx := clitest.NewEmptyFixture(t)
		withFormats := func(f *cli.Factory) { f.Formats = []importer.Format{claudecode.Format{}} }
		r := fx.RunWith(t, clitest.RunOpts{Tty: tty, Before: withFormats}, "session", "import", "--from", "claude-code", filepath.Dir(dir))
		noEscapesIn(t, "import report", r, tty)
		if !strings.Contains(r.Stdout, "pwned") {
			t.Errorf("the report does not name the file:\n%s", r.Stdout)
		}
	}
}

// A turn on a terminal: the history shown on resume, the streamed reply,
// reasoning and tool calls are escaped; piped, the reply is the model's
// text exactly.
func TestTurnOutputEscapesModelText(t *testing.T) {
	t.Parallel()
	fx, s := newHostileFixture(t)
	srv := openaitest.NewServer()
	defer srv.Close()
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini"}
	srv.Enqueue(
		openaitest.Reply{Reasoning: "hmm " + hostile, ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "session_search", Args: `{"query":` + clitest.JsonString(hostile) + `}`}}},
		openaitest.Reply{Text: "answer " + hostile},
	)
	withProviders := func(f *cli.Factory) { f.Providers = clitest.TestProviders() }
	run := func(tty bool, before func(*cli.Factory), args ...string) clitest.Result {
		t.Helper()
		r := fx.RunWith(t, clitest.RunOpts{Tty: tty, Env: env, Before: before}, args...)
		if r.Code != 0 {
			t.Fatalf("loom %s: exit %d\n%s", strings.Join(args, " "), r.Code, r.Stderr)
		}
		return r
	}
	r := run(true, withProviders, "run", "--resume", s.ID, "go on")
	noEscapesIn(t, "run on a terminal", r, true)
	if !strings.Contains(r.Stdout, "answer") {
		t.Fatalf("no reply:\n%q", r.Stdout)
	}

	srv.Enqueue(openaitest.Reply{Text: "answer " + hostile})
	if r := run(false, withProviders, "run", "--resume", s.ID, "again"); !strings.Contains(r.Stdout, "answer "+hostile) {
		t.Fatalf("piped reply is not exact:\n%q", r.Stdout)
	}

	// chat on a terminal without typed input: the resumed history is
	// shown, escaped.
	r = run(true, func(f *cli.Factory) {
		withProviders(f)
		f.IO.SetStdinTTY(false)
	}, "chat", "--resume", s.ID)
	noEscapesIn(t, "chat resume", r, true)
	if !strings.Contains(r.Stderr, "reply pwned") {
		t.Fatalf("the history is not shown:\n%s", r.Stderr)
	}
}

// loom session import refuses, with the file's line and importing
// nothing, a session id that is not a UUID (it would name the replay log
// and pages), a message id of loom's own that is not one, and a fork or
// sub-agent session whose parent is neither in the files nor the user's
// in the store.
func TestImportRefusesHostileRecords(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	bobs := &loom.Session{ID: clitest.IDAt(clitest.Base), UserID: "bob", Key: "cli:bob"}
	mine := &loom.Session{ID: clitest.IDAt(clitest.Base.Add(time.Second)), UserID: "local", Key: "cli:mine", Project: fx.Proj}
	for _, s := range []*loom.Session{bobs, mine} {
		if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "hi", clitest.Base)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	dir := t.TempDir()
	file := func(name string, data ...*loom.SessionData) string {
		t.Helper()
		var b strings.Builder
		if err := export.Write(&b, export.JSONL, data); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	at := clitest.Base.Add(time.Hour)
	session := func(id, kind, parent string) *loom.SessionData {
		m := clitest.TextMsg(loom.RoleUser, "imported", at)
		m.ID, m.Seq = loom.NewID(), 1
		m.Parts[0].ID = m.ID + "/0"
		return &loom.SessionData{Session: &loom.Session{ID: id, UserID: "local", Kind: kind, ParentID: parent, CreatedAt: at, UpdatedAt: at},
			Messages: []*loom.Message{m}}
	}
	badMsg := session(loom.NewID(), loom.KindMain, "")
	badMsg.Messages[0].ID = "../../m"
	refused := []struct {
		name string
		path string
		want string
	}{
		{"path as id", file("path.jsonl", session("../../etc/passwd", loom.KindMain, "")), `path.jsonl:1: session id "../../etc/passwd" is not a UUID`},
		{"message id", file("msg.jsonl", badMsg), `msg.jsonl:2: message 1 has id "../../m", not a UUID`},
		{"orphan fork", file("orphan.jsonl", session(loom.NewID(), loom.KindFork, loom.NewID())), "orphan.jsonl:1: session "},
		{"another user's parent", file("bobs.jsonl", session(loom.NewID(), loom.KindSubagent, bobs.ID)), "which is neither in the file nor in the store"},
	}
	for _, tc := range refused {
		r := fx.Run(t, "session", "import", tc.path)
		if r.Code != cli.ExitError || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, r.Code, r.Stderr, tc.want)
		}
		if n, _ := fx.SessionCount(t); n != 2 {
			t.Fatalf("%s: %d sessions stored, want the 2 seeded", tc.name, n)
		}
	}
	// A parent in the store as the user's, or in a file named before.
	parent := session(loom.NewID(), loom.KindMain, "")
	fx.MustRun(t, "session", "import",
		file("fork.jsonl", session(loom.NewID(), loom.KindFork, mine.ID)),
		file("parent.jsonl", parent),
		file("child.jsonl", session(loom.NewID(), loom.KindSubagent, parent.Session.ID)))
	if n, _ := fx.SessionCount(t); n != 5 {
		t.Fatalf("%d sessions stored, want 5", n)
	}
}
