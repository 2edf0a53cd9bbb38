package session_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	clineim "github.com/loomhq/loom/importer/cline"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/continuedev"
	copilotim "github.com/loomhq/loom/importer/copilot"
	droidim "github.com/loomhq/loom/importer/droid"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/opencode"
	piim "github.com/loomhq/loom/importer/pi"
	qwenim "github.com/loomhq/loom/importer/qwen"
	"github.com/loomhq/loom/internal/shell"
	"github.com/loomhq/loom/internal/testkit/clitest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// handoffSources are sessions of every kind loom holds: its own, and one
// imported from each tool's sample files.
var handoffSources = []struct{ name, tool, path string }{
	{"loom", "loom", ""},
	{"claude-code", claudecode.Tool, clitest.Samples + "/claude-code/spotter/tool_heavy.jsonl"},
	// A long Claude Code 2.1 session with a compaction and sub-agents.
	{"claude-code-long", claudecode.Tool, clitest.Samples + "/claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"},
	{"codex", codex.Tool, clitest.Samples + "/codex/vibecodingtracker-codex.jsonl"},
	// A later Codex's rollout: custom tools (apply_patch), exec_command.
	{"codex-newer", codex.Tool, "../../importer/codex/testdata/newer.jsonl"},
	{"gemini", gemini.Tool, clitest.Samples + "/gemini/vibecodingtracker-gemini.jsonl"},
	// Copilot CLI 1.0.102: a file view, a sub-agent's task, a compaction.
	{"copilot", copilotim.Tool, "../../importer/copilot/testdata/session-state"},
	{"opencode", opencode.Tool, "../../importer/opencode/testdata/data"},
}

func formatOf(t *testing.T, tool string) importer.Format {
	t.Helper()
	f := &cli.Factory{}
	clitest.AllFormats(f)
	for _, fm := range f.Formats {
		if fm.Tool() == tool {
			return fm
		}
	}
	t.Fatalf("no format %s", tool)
	return nil
}

// readBack reads a handed-off file with loom's own reader of its tool:
// the one session it holds, or, in a database of the tool's sessions
// (opencode's, Kilo's), the one whose id is id.
func readBack(t *testing.T, tool, path string, id ...string) *importer.Session {
	t.Helper()
	// The bundle the import makes of the file (with the files beside
	// it that its reader reads: Cline's record, a database's log).
	fm := formatOf(t, tool)
	bs, err := fm.Bundles(context.Background(), path)
	if err != nil || len(bs) != 1 {
		t.Fatalf("bundles of %s: %v, %v", path, bs, err)
	}
	res, err := fm.Read(context.Background(), bs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) > 0 {
		t.Errorf("reading the handed-off file back: %v", res.Problems)
	}
	if len(id) > 0 && len(res.Sessions) > 1 {
		res.Sessions = slices.DeleteFunc(res.Sessions, func(s *importer.Session) bool { return s.SourceID != id[0] })
	}
	if len(res.Sessions) != 1 {
		t.Fatalf("the handed-off file holds %d sessions, want 1", len(res.Sessions))
	}
	return res.Sessions[0]
}

// TestHandoffMatrix hands a session of every source (loom's own, and one
// imported from each tool's samples) to each of the eleven targets,
// and reads the written file back with loom's reader of the target:
// every user prompt, every reply's text and every tool call with its
// result must be there, as a call of the target's own or as a text
// record of it.
func TestHandoffMatrix(t *testing.T) {
	t.Parallel()
	targets := []string{claudecode.Tool, clineim.Tool, codex.Tool, continuedev.Tool, copilotim.Tool, droidim.Tool, gemini.Tool,
		opencode.KiloTool, opencode.Tool, piim.Tool, qwenim.Tool}
	for _, src := range handoffSources {
		t.Run(src.name, func(t *testing.T) {
			fx := clitest.NewFixture(t)
			withOpencodeDBs(t, fx.Home)
			s := fx.SourceSession(t, src.tool, src.path)
			st := fx.OpenStore(t)
			msgs, err := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			for _, to := range targets {
				t.Run(to, func(t *testing.T) {
					args := []string{"session", "handoff", s.ID, "--to", to, "--json"}
					if src.tool != "loom" {
						args = append(args, "--dir", fx.Project) // the sample's own directory is not on this machine
					}
					r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, args...)
					if r.Code != 0 {
						t.Fatalf("handoff: exit %d: %s", r.Code, r.Stderr)
					}
					out := clitest.DecodeJSON[clitest.HandoffJSON](t, r.Stdout)
					if out.Tool != to || out.From != s.ID || out.SessionID == "" || !strings.Contains(out.Resume, out.SessionID) {
						t.Errorf("report %+v", out)
					}
					got := readBack(t, to, out.Path, out.SessionID)
					if got.SourceID != out.SessionID {
						t.Errorf("the file's session is %s, the report says %s", got.SourceID, out.SessionID)
					}
					if got.Origin == nil || got.Origin.SessionID != s.ID {
						t.Errorf("the file records origin %+v, want session %s", got.Origin, s.ID)
					}
					t.Logf("%d messages, %d tool calls, %d as text, dropped %v", out.Messages, out.ToolCalls, out.ToolRecords, out.Dropped)
					checkCarried(t, msgs, got, out)
					switch {
					case src.tool == to && to == codex.Tool:
						// Codex's: the calls of the tools its model is
						// offered (shell commands, as exec scripts).
						if shells := shellCalls(msgs); out.ToolCalls < shells {
							t.Errorf("%d of codex's own tool calls carried as calls, want its %d shell commands", out.ToolCalls, shells)
						}
					case src.tool == to && out.ToolRecords > 0:
						t.Errorf("%d of %s's own tool calls told as text, want every one as a call", out.ToolRecords, to)
					}
				})
			}
		})
	}
}

// withOpencodeDBs gives opencode and Kilo under home a database each,
// as they make when they first run (a handoff to them needs one): a
// copy of the one opencode 1.18.33 wrote (importer/opencode/testdata).
func withOpencodeDBs(t *testing.T, home string) {
	t.Helper()
	data, err := os.ReadFile("../../importer/opencode/testdata/real-1.18.33.db")
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"opencode", "kilo"} {
		clitest.MustWrite(t, filepath.Join(home, ".local", "share", app, app+".db"), string(data))
	}
}

// shellCalls counts the shell commands among the tool calls of msgs.
func shellCalls(msgs []*loom.Message) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if _, ok := shell.Command(p); ok && p.Type == loom.PartTool {
				n++
			}
		}
	}
	return n
}

// checkCarried checks that got, read back from a handed-off file, holds
// what the source messages say it must.
func checkCarried(t *testing.T, src []*loom.Message, got *importer.Session, out clitest.HandoffJSON) {
	t.Helper()
	var user, said, results strings.Builder
	var calls []loom.Part
	for _, m := range got.Messages {
		for _, p := range m.Parts {
			switch {
			case p.Type == loom.PartText && m.Role == loom.RoleUser:
				user.WriteString(p.Text + "\n")
			case p.Type == loom.PartText:
				said.WriteString(p.Text + "\n")
			case p.Type == loom.PartTool:
				calls = append(calls, p)
				results.WriteString(handoff.ResultText(p) + "\n")
			}
		}
	}
	wantCalls := 0
	for _, m := range src {
		if m.Role == loom.RoleSystem {
			continue
		}
		for _, p := range m.Parts {
			text := strings.TrimSpace(p.Text)
			switch {
			case p.Type == loom.PartText && text == "":
			case p.Type == loom.PartText && (m.Role == loom.RoleUser || m.Role == loom.RoleSummary):
				if m.Role == loom.RoleSummary && out.Tool != claudecode.Tool {
					// Without the lines for Claude Code alone.
					text = handoff.OtherToolSummary(text)
				}
				if !strings.Contains(user.String(), text) {
					t.Errorf("prompt %.80q (seq %d) not carried", text, m.Seq)
				}
			case p.Type == loom.PartText:
				if !strings.Contains(said.String(), text) {
					t.Errorf("reply %.80q (seq %d) not carried", text, m.Seq)
				}
			case p.Type == loom.PartTool:
				wantCalls++
				if p.Status != loom.ToolCompleted && p.Status != loom.ToolError {
					p.Status, p.Error = loom.ToolError, loom.Interrupted
				}
				res := strings.TrimSpace(handoff.ResultText(p))
				if strings.Contains(said.String(), strings.TrimSpace(handoff.ToolRecord(p))) {
					continue
				}
				if !strings.Contains(results.String(), res) {
					t.Errorf("tool call %s %s (seq %d) and its result %.80q not carried", p.Name, p.CallID, m.Seq, res)
				}
			}
		}
	}
	if len(calls) != out.ToolCalls {
		t.Errorf("the file holds %d tool calls, the report says %d", len(calls), out.ToolCalls)
	}
	if out.ToolCalls+out.ToolRecords != wantCalls {
		t.Errorf("%d tool calls carried and %d as text, want %d in all", out.ToolCalls, out.ToolRecords, wantCalls)
	}
	for _, p := range calls {
		if p.Status != loom.ToolCompleted && p.Status != loom.ToolError {
			t.Errorf("call %s read back %s", p.CallID, p.Status)
		}
	}
}

// TestHandoffBadInput: bad input is one line and the exit code of its
// kind, and writes nothing.
func TestHandoffBadInput(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	if err := os.WriteFile(filepath.Join(fx.Project, "notes.txt"), []byte("a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"session", "handoff", fx.Main.ID}, 2, "--to is required: claude-code, cline, codex, continue, copilot, droid, gemini, kilo, opencode, pi, qwen"},
		{[]string{"session", "handoff", fx.Main.ID, "--to", "aider"}, 2, `--to "aider": want claude-code, cline, codex, continue, copilot, droid, gemini, kilo, opencode, pi, qwen`},
		// opencode makes its database when it first runs; loom does not.
		{[]string{"session", "handoff", fx.Main.ID, "--to", "opencode"}, 2, "opencode.db to write to (opencode makes it when it first runs: run opencode once)"},
		{[]string{"session", "handoff", fx.Main.ID, "--to", "codex", "--last", "0"}, 2, "--last must be 1 or more"},
		{[]string{"session", "handoff", fx.Main.ID, "--to", "codex", "--dir", "nowhere"}, 2, "--dir nowhere: no such directory"},
		{[]string{"session", "handoff", fx.Main.ID, "--to", "codex", "--dir", "notes.txt"}, 2, "--dir notes.txt is a file, not a directory"},
		{[]string{"session", "handoff", "no-such-session", "--to", "codex"}, 3, "no-such-session"},
		{[]string{"session", "handoff", fx.Tg.ID, "--to", "codex"}, 2, "has no project directory; name one with --dir"},
	} {
		r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", c.args[2:], r.Code, r.Stderr, c.code, c.want)
		}
	}
	for _, d := range []string{".claude", ".codex", ".gemini", ".local"} {
		if _, err := os.Stat(filepath.Join(fx.Home, d)); err == nil {
			t.Errorf("bad input wrote %s", d)
		}
	}
}

// TestHandoffLast: --last N carries the last N turns and says so.
func TestHandoffLast(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "handoff", fx.Main.ID, "--to", "claude-code", "--last", "1")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, want := range []string{
		`Handed "Fix the flaky test" to claude-code: 2 messages.`,
		"Only the last turn was carried (turn 3 of 3).",
		"Resume it with:\n  cd " + fx.Project + " && claude --resume ",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Stdout)
		}
	}
	path := strings.TrimPrefix(clitest.Lines(r.Stdout)[2], "Wrote ")
	got := readBack(t, claudecode.Tool, path)
	var texts []string
	for _, m := range got.Messages {
		texts = append(texts, m.Role+": "+m.Text())
	}
	want := []string{"user: thanks", "assistant: You're welcome — the fix is in clock.go."}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("carried %q, want %q", texts, want)
	}
	if got.Origin == nil || got.Origin.Turn != 3 {
		t.Errorf("origin %+v, want turn 3", got.Origin)
	}
	if filepath.Dir(path) != filepath.Join(fx.Home, ".claude", "projects", claudecode.ProjectSlug(fx.Project)) {
		t.Errorf("written to %s", path)
	}
}

// continueAs appends to a handed-off file what tool writes when it
// continues the session: one more prompt and its reply, in the tool's
// own format.
func continueAs(t *testing.T, tool, path, prompt, reply string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := clitest.Lines(string(data))
	var add []string
	switch tool {
	case claudecode.Tool:
		last := clitest.DecodeJSON[map[string]any](t, ls[len(ls)-1])
		u1, u2 := uuid.NewString(), uuid.NewString()
		add = []string{
			`{"parentUuid":"` + last["uuid"].(string) + `","isSidechain":false,"type":"user","sessionId":"` + last["sessionId"].(string) + `","cwd":"/x","version":"2.1.50","message":{"role":"user","content":"` + prompt + `"},"uuid":"` + u1 + `","timestamp":"2026-11-23T10:00:00.000Z"}`,
			`{"parentUuid":"` + u1 + `","isSidechain":false,"type":"assistant","sessionId":"` + last["sessionId"].(string) + `","cwd":"/x","version":"2.1.50","message":{"id":"msg_` + u2[:8] + `","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"` + reply + `"}],"usage":{"input_tokens":10,"output_tokens":5}},"uuid":"` + u2 + `","timestamp":"2026-11-23T10:00:02.000Z"}`,
		}
	case codex.Tool:
		add = []string{
			`{"timestamp":"2026-11-23T10:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + prompt + `"}]}}`,
			`{"timestamp":"2026-11-23T10:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"` + reply + `"}]}}`,
		}
	case gemini.Tool:
		add = []string{
			`{"$set":{"sessionId":"` + clitest.DecodeJSON[map[string]any](t, ls[0])["sessionId"].(string) + `"}}`,
			`{"id":"` + uuid.NewString() + `","timestamp":"2026-11-23T10:00:00.000Z","type":"user","content":[{"text":"` + prompt + `"}]}`,
			`{"id":"` + uuid.NewString() + `","timestamp":"2026-11-23T10:00:02.000Z","type":"gemini","content":"` + reply + `","model":"gemini-2.5-pro"}`,
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(add, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// TestHandoffRoundTrip: a session handed to a tool, once the tool has
// continued it, comes back through loom session import as a fork of the
// original (parent_id, fork_turn, shown by list --tree), holding the
// carried history and what the tool added; importing again adds nothing,
// and a later turn grows the same fork.
func TestHandoffRoundTrip(t *testing.T) {
	t.Parallel()
	for _, to := range []string{claudecode.Tool, codex.Tool, gemini.Tool} {
		t.Run(to, func(t *testing.T) {
			fx := clitest.NewFixture(t)
			run := func(args ...string) clitest.Result {
				t.Helper()
				r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, args...)
				if r.Code != 0 {
					t.Fatalf("loom %v: exit %d: %s", args, r.Code, r.Stderr)
				}
				return r
			}
			out := clitest.DecodeJSON[clitest.HandoffJSON](t, run("session", "handoff", fx.Main.ID, "--to", to, "--json").Stdout)
			// Imported before the tool ran: nothing new, nothing added
			// (no copy of the session to tell apart from it).
			run("session", "import", "--from", to, out.Path)
			if ss := clitest.DecodeJSON[[]*loom.Session](t, run("session", "list", "-a", "--surface", to, "--json").Stdout); len(ss) != 0 {
				t.Fatalf("importing the handed-off file before %s ran made %d sessions", to, len(ss))
			}
			if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "show", fx.Main.Title, "--json"); r.Code != 0 {
				t.Fatalf("the session's title no longer finds it alone: exit %d, %s", r.Code, r.Stderr)
			}
			continueAs(t, to, out.Path, "Now make the clock injectable.", "Done: NewRetry takes a Clock.")
			run("session", "import", "--from", to, out.Path)
			ss := clitest.DecodeJSON[[]*loom.Session](t, run("session", "list", "-a", "--surface", to, "--json").Stdout)
			if len(ss) != 1 {
				t.Fatalf("%d sessions imported from %s, want 1", len(ss), to)
			}
			s := ss[0]
			if s.Kind != loom.KindFork || s.ParentID != fx.Main.ID || s.ForkTurn != fx.Main.TurnCount || s.Key != to+":"+out.SessionID {
				t.Errorf("imported as kind %s, parent %s, fork turn %d, key %s; want a fork of %s at turn %d keyed %s:%s",
					s.Kind, s.ParentID, s.ForkTurn, s.Key, fx.Main.ID, fx.Main.TurnCount, to, out.SessionID)
			}
			if s.Title != fx.Main.Title {
				t.Errorf("the fork is titled %q, want the original's %q", s.Title, fx.Main.Title)
			}
			show := run("session", "show", s.ID, "--json").Stdout
			for _, want := range []string{"Why does TestRetry flake?", "Now make the clock injectable.", "Done: NewRetry takes a Clock."} {
				if !strings.Contains(show, want) {
					t.Errorf("the imported session lacks %q", want)
				}
			}
			tree := run("session", "list", "--tree").Stdout
			if !strings.Contains(tree, "fork") || !strings.Contains(tree, s.ID) && !strings.Contains(tree, s.ID[:8]) {
				t.Errorf("list --tree does not show the handed-off session as a fork:\n%s", tree)
			}
			again := clitest.DecodeJSON[map[string]any](t, run("session", "import", "--from", to, out.Path, "--json").Stdout)
			if n := again["tools"].([]any)[0].(map[string]any)["messages_added"].(float64); n != 0 {
				t.Errorf("importing again added %v messages", n)
			}
			continueAs(t, to, out.Path, "And the test?", "It uses a fake clock now.")
			run("session", "import", "--from", to, out.Path)
			grown := clitest.DecodeJSON[[]*loom.Session](t, run("session", "list", "-a", "--surface", to, "--json").Stdout)
			if len(grown) != 1 || grown[0].ID != s.ID || grown[0].MessageCount <= s.MessageCount {
				t.Errorf("after a second turn: %d sessions, %+v; want %s grown", len(grown), grown, s.ID)
			}
		})
	}
}

// TestHandoffOriginGone: a handed-off session whose original is no
// longer in the store (purged, or another user's) comes in as a main
// session of its own, not a fork of nothing.
func TestHandoffOriginGone(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "handoff", fx.Web.ID, "--to", "codex", "--json")
	if r.Code != 0 {
		t.Fatalf("handoff: %s", r.Stderr)
	}
	out := clitest.DecodeJSON[clitest.HandoffJSON](t, r.Stdout)
	fx.MustRun(t, "session", "delete", fx.Web.ID, "--yes", "--purge")
	if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", "codex", out.Path); r.Code != 0 {
		t.Fatalf("import: %s", r.Stderr)
	}
	ss := clitest.DecodeJSON[[]*loom.Session](t, fx.MustRun(t, "session", "list", "-a", "--surface", "codex", "--json"))
	if len(ss) != 1 || ss[0].Kind != loom.KindMain || ss[0].ParentID != "" {
		t.Fatalf("imported %+v, want one main session", ss)
	}
}

// TestMCPHandoff: loom mcp offers the handoff tool only when config.toml
// turns it on; then it writes the session for the agent named and says
// how to resume it, and refuses bad arguments with a tool error.
func TestMCPHandoff(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	has := func(cs *sdk.ClientSession) bool {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Tools, func(tl *sdk.Tool) bool { return tl.Name == "handoff" })
	}
	if has(clitest.ConnectStdio(t, fx)) {
		t.Fatal("loom mcp offers handoff without [mcp] handoff = true")
	}
	cfg := filepath.Join(fx.Home, "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("[mcp]\nhandoff = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := clitest.ConnectStdio(t, fx)
	if !has(cs) {
		t.Fatal("loom mcp does not offer handoff with [mcp] handoff = true")
	}
	c := clitest.MustCall(t, cs, "handoff", map[string]any{"ref": fx.Main.ID, "to": "gemini", "last": 1})
	path, _ := c.Data["path"].(string)
	if !strings.Contains(c.Text, "gemini --resume "+c.Data["session_id"].(string)) || !strings.Contains(c.Text, "turns 3–3 of 3") || path == "" {
		t.Fatalf("handoff: %s %v", c.Text, c.Data)
	}
	got := readBack(t, gemini.Tool, path)
	if got.Origin == nil || got.Origin.SessionID != fx.Main.ID || len(got.Messages) != 2 {
		t.Errorf("the file read back: origin %+v, %d messages", got.Origin, len(got.Messages))
	}
	clitest.WantToolError(t, cs, "handoff", map[string]any{"ref": fx.Main.ID, "to": "vim"}, `not "vim"`)
	clitest.WantToolError(t, cs, "handoff", map[string]any{"ref": fx.Main.ID, "to": "codex", "dir": "relative"}, "absolute path")
	clitest.WantToolError(t, cs, "handoff", map[string]any{"ref": fx.Tg.ID, "to": "codex"}, "name one in dir")
	clitest.WantToolError(t, cs, "handoff", map[string]any{"ref": "no-such", "to": "codex"}, "no session matches")
}
