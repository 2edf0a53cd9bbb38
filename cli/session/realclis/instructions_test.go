package realclis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/providertest"
)

// instructionsRule is what each agent's instructions file says: a word
// (quokka) that no prompt or reply holds, so that a search or a recall
// that finds it found the instructions.
const instructionsRule = "The quokka rule of this project: answer every greeting in one line, and run make check before any commit."

// screenRows is what "one screen" is for `loom session show`: a
// terminal of 50 rows of 80 columns.
const screenRows, screenColumns = 50, 80

// TestRealInstructionsAreNotTheConversation: Codex, Claude Code and
// Gemini CLI, run offline on one prompt in a directory whose
// instructions file (AGENTS.md, CLAUDE.md, GEMINI.md) holds a rule,
// write what they were told into their sessions as each does (Codex
// its system prompt, the file and its environment in the rollout;
// Claude Code its environment, the file and its system prompt as
// attachment lines; Gemini CLI its environment and the file in a
// <session_context> before the prompt).
// Imported, what an agent was told is kept as system messages: the
// title is the prompt, a search finds the rule only with --role system,
// a recall never hands it back, and `loom session show` of the
// one-prompt session fits one screen (instructions folded), with
// --full unfolding them.
func TestRealInstructionsAreNotTheConversation(t *testing.T) {
	clitest.RealAgentsOnce(t)
	prompt, reply := "Say hello in one line.", "Hello there."
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		fx := clitest.NewEmptyFixture(t)
		bin, dir, env, _, sc := clitest.StartCodex(t, fx)
		clitest.MustWrite(t, filepath.Join(dir, "AGENTS.md"), instructionsRule+"\n")
		sc.On(prompt, sc.Answer(agentclitest.Turn{Text: reply, Usage: agentclitest.Usage{Input: 1000, Output: 5}}))
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "exec", "--skip-git-repo-check", "-s", "danger-full-access", prompt)
		checkInstructions(t, fx, "codex", prompt, reply, true)
	})
	t.Run("claude-code", func(t *testing.T) {
		t.Parallel()
		bin := agentclitest.Install(t, agentclitest.ClaudeCode)
		fx := clitest.NewEmptyFixture(t)
		dir := filepath.Join(fx.Home, "work")
		clitest.MustWrite(t, filepath.Join(dir, "CLAUDE.md"), instructionsRule+"\n")
		srv := anthropictest.NewServer()
		t.Cleanup(srv.Close)
		sc := &clitest.Script[anthropictest.Reply]{Last: func(r providertest.Request) string { return clitest.LastJSON(r, "messages") }}
		srv.Respond(sc.Respond)
		env := agentclitest.Env(fx.Home, "ANTHROPIC_BASE_URL="+srv.BaseURL(), "ANTHROPIC_API_KEY=sk-ant-fake",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
		sc.On(prompt, sc.Answer(anthropictest.Reply{Text: reply, Usage: &anthropictest.Usage{InputTokens: 1000, OutputTokens: 5}}))
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "-p", "--session-id", "c1a0e5c0-0000-4000-8000-0000000000aa",
			"--model", "claude-sonnet-4-5", "--", prompt)
		checkInstructions(t, fx, "claude-code", prompt, reply, true)
	})
	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		g := clitest.StartGemini(t, "")
		clitest.MustWrite(t, filepath.Join(g.Dir, "GEMINI.md"), instructionsRule+"\n")
		g.Sc.On(prompt, g.Say("", reply, g.Usage(1000, 0, 5, 0)))
		g.Run("", prompt)
		// Gemini CLI records GEMINI.md inside the <session_context> it
		// puts before the first prompt.
		checkInstructions(t, g.Fx, "gemini", prompt, reply, true)
	})
}

// checkInstructions imports tool's one session from fx's HOME and
// checks what the agent was told against the conversation; kept says
// whether the agent's file holds its instructions at all.
func checkInstructions(t *testing.T, fx *clitest.Fixture, tool, prompt, reply string, kept bool) {
	t.Helper()
	keepAgentHome(fx)
	fx.MustExec(t, "session", "import", "--from", tool)
	listed := clitest.DecodeJSON[[]*loom.Session](t, fx.MustExec(t, "session", "list", "-a", "--surface", tool, "--json"))
	if len(listed) != 1 {
		t.Fatalf("%d sessions imported, want 1", len(listed))
	}
	s := listed[0]
	if s.Title != prompt {
		t.Errorf("title %q, want the prompt %q", s.Title, prompt)
	}
	msgs := fx.ShowMessages(t, s.ID)
	var system strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case loom.RoleSystem:
			system.WriteString(m.Text() + "\n")
		case loom.RoleUser:
			if m.Text() != prompt {
				t.Errorf("a user message that is not the prompt: %.200q", m.Text())
			}
		}
		if m.Role != loom.RoleSystem && strings.Contains(m.Text(), "quokka") {
			t.Errorf("the instructions in a %s message: %.200q", m.Role, m.Text())
		}
	}
	if kept && !strings.Contains(system.String(), "quokka rule") {
		t.Errorf("the instructions file is kept in no system message; system messages:\n%.2000s", system.String())
	}
	// Search: not without asking, found when asked.
	if out := fx.MustExec(t, "search", "-a", "quokka rule", "--json"); strings.Contains(out, "quokka") {
		t.Errorf("search found the instructions:\n%.2000s", out)
	}
	if out := fx.MustExec(t, "search", "-a", "greeting line commit quokka", "--json"); strings.Contains(out, "quokka") {
		t.Errorf("search of some of the words found the instructions:\n%.2000s", out)
	}
	if kept {
		if out := fx.MustExec(t, "search", "-a", "--role", "system", "quokka rule", "--json"); !strings.Contains(out, "quokka") {
			t.Errorf("search --role system did not find the instructions:\n%.2000s", out)
		}
	}
	if out := fx.MustExec(t, "search", "-a", "hello line"); !strings.Contains(out, s.ID[:8]) {
		t.Errorf("search of the prompt did not find its session:\n%s", out)
	}
	// Recall, as the agent's hook asks it and from the command line.
	for _, q := range []string{"quokka rule make check commit", "hello greeting one line"} {
		if out := fx.MustExec(t, "recall", "-a", q); strings.Contains(out, "quokka") || strings.Contains(out, "<environment_context>") {
			t.Errorf("recall %q handed back the instructions:\n%s", q, out)
		}
	}
	// Show: one screen, the instructions folded; --full unfolds them.
	out := fx.MustExec(t, "session", "show", s.ID)
	rows := screenRowsOf(out)
	t.Logf("%s: session show is %d rows of %d columns, --full %d (%d messages, %d bytes of system text)",
		tool, rows, screenColumns, screenRowsOf(fx.MustExec(t, "session", "show", s.ID, "--full")), len(msgs), system.Len())
	if rows > screenRows {
		t.Errorf("session show of a one-prompt session is %d rows of %d columns, more than one screen (%d):\n%s", rows, screenColumns, screenRows, out)
	}
	for _, want := range []string{prompt, reply} {
		if !strings.Contains(out, want) {
			t.Errorf("session show lacks %q:\n%s", want, out)
		}
	}
	if kept {
		if full := fx.MustExec(t, "session", "show", s.ID, "--full"); !strings.Contains(full, "run make check before any commit") {
			t.Errorf("session show --full does not unfold the instructions:\n%.3000s", full)
		}
	}
	if os.Getenv("LOOM_TEST_SHOW_PAGES") != "" {
		t.Logf("%s", out)
	}
}

// screenRowsOf is how many rows of screenColumns out takes on a
// terminal: a line longer than the screen is wide wraps.
func screenRowsOf(out string) int {
	rows := 0
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		rows += max(1, (utf8.RuneCountInString(l)+screenColumns-1)/screenColumns)
	}
	return rows
}
