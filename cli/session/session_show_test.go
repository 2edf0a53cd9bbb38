package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestSessionShow(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	out := fx.MustRun(t, "session", "show", "fix the FLAKY test")
	for _, want := range []string{"Fix the flaky test", "id:       " + fx.Main.ID, "key:      cli:api", "model:    openai:gpt-x",
		"messages: 9 in 3 turns", "the last 9 of 9"} {
		if want == "the last 9 of 9" {
			if strings.Contains(out, want) {
				t.Errorf("claims a partial view of a whole session")
			}
			continue
		}
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"── #1 user", "Why does TestRetry flake?", "📎 retry_test.go (text/x-go)",
		"⚙ read_file · completed · 120ms · retry_test.go", "⚙ run_tests · error · 2.0s: exit status 1: FAIL TestRetry",
		"↳ sub-agent explore → session " + fx.Sub.ID, "error: rate limited", "── #4 summary"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "races with the timer") {
		t.Error("reasoning shown without --show-thinking")
	}
	if out := fx.MustRun(t, "session", "show", fx.Main.ID, "--show-thinking"); !strings.Contains(out, "│ The retry loop races with the timer.") {
		t.Errorf("--show-thinking hides reasoning:\n%s", out)
	}
	out = fx.MustRun(t, "session", "show", fx.Main.ID[:8], "--limit", "2")
	if strings.Count(out, "── #") != 2 || !strings.Contains(out, "── #8 user") || !strings.Contains(out, "── #9 assistant") ||
		!strings.Contains(out, "(the last 2 of 9 messages") {
		t.Fatalf("--limit 2:\n%s", out)
	}
}

func TestSessionShowDefaultsToLastTen(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	s := &loom.Session{UserID: "local", Key: "cli:api", Project: fx.Proj}
	for i := 1; i <= 14; i++ {
		role := loom.RoleUser
		if i%2 == 0 {
			role = loom.RoleAssistant
		}
		if err := st.Append(context.Background(), s, clitest.TextMsg(role, fmt.Sprintf("message number %d", i), clitest.Base.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out := fx.MustRun(t, "session", "show", s.ID)
	if strings.Count(out, "── #") != 10 || strings.Contains(out, "message number 4\n") || !strings.Contains(out, "message number 5\n") {
		t.Fatalf("default show is not the last 10:\n%s", out)
	}
	if out := fx.MustRun(t, "session", "show", s.ID, "--full-history"); strings.Count(out, "── #") != 14 {
		t.Fatalf("--full-history shows %d", strings.Count(out, "── #"))
	}
	if r := fx.Run(t, "session", "show", s.ID, "--full-history", "--limit", "3"); r.Code != cli.ExitUsage {
		t.Fatalf("--full-history with --limit: exit %d", r.Code)
	}
}

// On a terminal, show renders what the model wrote as Markdown, as live
// replies are; piped, it is the text as stored.
func TestSessionShowRendersMarkdown(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	s := &loom.Session{UserID: "local", Key: "cli:api", Project: fx.Proj}
	reply := "# Findings\n\nThe **timer** races.\n\n- `retry.go`\n- the test\n\n| file | lines |\n|---|---|\n| retry.go | 40 |\n"
	if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "what is **wrong**?", clitest.Base), clitest.TextMsg(loom.RoleAssistant, reply, clitest.Base)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	term := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "show", s.ID)
	plain := ansi.Strip(term.Stdout)
	for _, want := range []string{"# Findings", "The timer races.", "• retry.go", "• the test", "file     │ lines", "retry.go │ 40", "what is **wrong**?"} {
		if !strings.Contains(plain, want) {
			t.Errorf("terminal show lacks %q:\n%s", want, plain)
		}
	}
	if !strings.Contains(term.Stdout, "\x1b[1mtimer\x1b[m") || strings.Contains(plain, "**timer**") || strings.Contains(plain, "|---|") {
		t.Errorf("Markdown not rendered:\n%q", term.Stdout)
	}
	piped := fx.MustRun(t, "session", "show", s.ID)
	if !strings.Contains(piped, reply) {
		t.Errorf("piped show is not the stored text:\n%s", piped)
	}
}

func TestSessionShowJSON(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	out := fx.MustRun(t, "session", "show", fx.Main.ID, "--json", "--full-history")
	got := clitest.DecodeJSON[struct {
		Session  *loom.Session   `json:"session"`
		Messages []*loom.Message `json:"messages"`
	}](t, out)
	if got.Session.ID != fx.Main.ID || len(got.Messages) != 9 || got.Messages[0].Seq != 1 {
		t.Fatalf("show --json: session %s, %d messages", got.Session.ID, len(got.Messages))
	}
	var raw map[string]json.RawMessage
	json.Unmarshal([]byte(out), &raw)
	if len(raw) != 2 {
		t.Fatalf("show --json has keys %v", raw)
	}
	tool := got.Messages[1].Parts[3]
	var input bytes.Buffer
	json.Compact(&input, tool.Input)
	if tool.Type != loom.PartTool || tool.CallID != "call_1" || input.String() != `{"path":"retry_test.go"}` || tool.EndedAt.Sub(*tool.StartedAt) != 120*time.Millisecond {
		t.Fatalf("tool part = %+v", tool)
	}
}

// A tool call shows what it ran and the first lines of what it returned;
// --full shows all of both.
func TestSessionShowToolInputAndOutput(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	s := &loom.Session{UserID: "local", Key: "cli:tools", Project: fx.Proj, Title: "Run the tests"}
	var out []string
	for i := 1; i <= 8; i++ {
		out = append(out, fmt.Sprintf("ok  example.com/pkg%d 0.1s", i))
	}
	output, _ := json.Marshal(strings.Join(out, "\n"))
	a := &loom.Message{Role: loom.RoleAssistant, CreatedAt: clitest.Base.Add(time.Minute), Parts: []loom.Part{
		{Type: loom.PartTool, CallID: "c1", Name: "Bash", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"command":"go test ./...","description":"Run the tests"}`), Output: output,
			StartedAt: clitest.TimeAt(clitest.Base.Add(time.Minute)), EndedAt: clitest.TimeAt(clitest.Base.Add(time.Minute + 50*time.Millisecond))},
		{Type: loom.PartTool, CallID: "c2", Name: "Read", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"file_path":"/src/api/go.mod"}`), Output: json.RawMessage(`"module example.com"`)},
		// Codex's argv, and a 2,000-character line of output.
		{Type: loom.PartTool, CallID: "c3", Name: "exec_command", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"command":["bash","-lc","rg -n \"go [0-9]+\" go.mod"]}`), Output: json.RawMessage(`"` + strings.Repeat("minified", 250) + `"`)},
	}}
	if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "run the tests", clitest.Base), a); err != nil {
		t.Fatal(err)
	}
	st.Close()
	got := fx.MustRun(t, "session", "show", s.ID)
	for _, want := range []string{"⚙ Bash · completed · 50ms\n    $ go test ./...\n    │ ok  example.com/pkg1 0.1s\n",
		"│ ok  example.com/pkg5 0.1s\n    … 3 more lines (--full shows all)\n", "⚙ Read · completed\n    /src/api/go.mod\n    │ module example.com\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("show lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "pkg6") {
		t.Errorf("show prints more than 5 lines of output:\n%s", got)
	}
	if !strings.Contains(got, `$ bash -lc 'rg -n "go [0-9]+" go.mod'`) {
		t.Errorf("show loses the quoting of an argv command:\n%s", got)
	}
	for l := range strings.Lines(got) {
		if len([]rune(l)) > 100 {
			t.Errorf("show prints a line of %d characters in a brief:\n%s", len([]rune(l)), l)
		}
	}
	full := fx.MustRun(t, "session", "show", s.ID, "--full")
	if !strings.Contains(full, "│ ok  example.com/pkg8 0.1s") || strings.Contains(full, "more lines") || !strings.Contains(full, `›   "command": "go test ./...",`) {
		t.Errorf("--full does not show the whole input and output:\n%s", full)
	}
}

// A user message followed by another got no reply: show says its turn
// was interrupted, once, under it.
func TestSessionShowMarksInterruptedTurns(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	s := &loom.Session{UserID: "local", Key: "cli:interrupted", Project: fx.Proj}
	if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "first question", clitest.Base),
		clitest.TextMsg(loom.RoleUser, "second question", clitest.Base.Add(time.Minute)), clitest.TextMsg(loom.RoleAssistant, "the answer", clitest.Base.Add(2*time.Minute))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	got := fx.MustRun(t, "session", "show", s.ID)
	mark := strings.Index(got, "no reply: the turn was interrupted")
	if strings.Count(got, "no reply: the turn was interrupted") != 1 || mark < strings.Index(got, "first question") || mark > strings.Index(got, "second question") {
		t.Fatalf("show does not mark the interrupted turn once, under it:\n%s", got)
	}
}
