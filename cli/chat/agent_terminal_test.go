package chat_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// On a terminal: type a message, see the streamed reply; Ctrl+C during a
// slow reply cancels that turn only; chatting goes on.
func TestAgentChatOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(
		openaitest.Reply{Text: "streamed hello"},
		openaitest.Reply{Text: strings.Repeat("slow words ", 200), Delay: 50 * time.Millisecond},
		openaitest.Reply{Text: "still here"},
	)
	fx.ExtraEnv = fx.Env
	p := fx.StartPTY(t, "chat")
	p.WaitFor(t, "›")
	p.Send("hello\r")
	p.WaitFor(t, "streamed hello")
	p.WaitPrompt(t, "›")
	p.Send("tell me slowly\r")
	p.WaitFor(t, "slow words slow words")
	p.Send("\x03") // Ctrl+C
	p.WaitFor(t, "interrupted")
	if strings.Contains(p.Output(), "^C") {
		t.Fatalf("Ctrl+C left ^C in the reply:\n%s", p.Output())
	}
	p.WaitPrompt(t, "›")
	p.Send("are you there?\r")
	p.WaitFor(t, "still here")
	p.Leave(t, "›")
}

// On a terminal, what the model wrote is Markdown wherever it is shown
// again: the history on resume, /history, and /search prints what loom
// search prints (short ids, titles, highlighted matches, no ** markers).
func TestChatMarkdownOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "## Plan\n\nUse a **fake clock** in the loop.\n\n| step | time |\n|------|-----:|\n| one | 1s |\n"})
	r := fx.MustLoom(t, "plan the retry fix\n", "chat", "--new")
	id := clitest.SessionOf(t, r.Stderr)
	if !strings.Contains(r.Stdout, "**fake clock**") {
		t.Fatalf("piped reply is not the plain Markdown:\n%s", r.Stdout)
	}

	fx.ExtraEnv = fx.Env
	p := fx.StartPTY(t, "chat")
	p.WaitFor(t, "›")
	p.Send("/history 1\r")
	p.WaitFor(t, "/history 1")
	p.WaitPrompt(t, "›")
	p.Send("/search loop\r")
	p.WaitFor(t, "#2 assistant")
	p.Leave(t, "›")
	out := p.Output()
	if n := strings.Count(out, "Use a fake clock in the loop."); n != 2 {
		t.Fatalf("rendered text shown %d times, want 2 (resume and /history):\n%s", n, out)
	}
	if n := strings.Count(out, "step │ time"); n != 2 {
		t.Fatalf("table not rendered in the history (%d times):\n%s", n, out)
	}
	if !strings.Contains(p.Raw(), "\x1b[1mfake clock\x1b[m") {
		t.Fatalf("bold not rendered:\n%q", p.Raw())
	}
	hit := regexp.MustCompile(`(?m)^.*#2 assistant · just now\r?$`).FindString(out)
	if !strings.HasPrefix(hit, id[:8]+"  plan the retry fix  #2 assistant") {
		t.Fatalf("/search does not print like loom search (short id, title):\n%s", out)
	}
	if !strings.Contains(p.Raw(), "\x1b[1;33mloop\x1b[m") {
		t.Fatalf("/search does not highlight the match:\n%q", p.Raw())
	}
}

// Ctrl+C during `loom run` on a terminal stops it as chat stops a turn:
// chat's words, exit 130, and no "^C" echoed into the reply.
func TestRunInterruptOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: strings.Repeat("slow words ", 200), Delay: 50 * time.Millisecond})
	fx.ExtraEnv = fx.Env
	p := fx.StartPTY(t, "run", "tell me slowly")
	p.WaitFor(t, "slow words slow words")
	p.Send("\x03")
	if code := p.Wait(t); code != 130 {
		t.Fatalf("exit %d, want 130:\n%s", code, p.Output())
	}
	out := p.Output()
	if !strings.Contains(out, "(interrupted: the reply was not kept; your message was)") {
		t.Fatalf("run does not say what chat says:\n%s", out)
	}
	if strings.Contains(out, "^C") || strings.Contains(out, "loom: interrupted") {
		t.Fatalf("stray ^C or the old message:\n%s", out)
	}
}

// The resume header wraps to the terminal at word boundaries, with the
// title quoted.
func TestResumeHeaderWrapsOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "noted"})
	const title = "retry budget for the flaky integration tests of the payment service"
	fx.MustLoom(t, "", "run", "--name", title, "hello")
	fx.ExtraEnv = fx.Env
	p := fx.StartPTYSize(t, 60, 30, "chat")
	clitest.WaitScreen(t, p, "resuming session", "gpt-4o-mini)", "›")
	screen := p.Screen()
	p.Send("\x04")
	p.Wait(t)
	header := screen[strings.Index(screen, "resuming session"):]
	header = header[:max(strings.Index(header, "gpt-4o-mini)"), 0)]
	if got := strings.Join(strings.Fields(header), " "); !strings.Contains(got, `"`+title+`"`) {
		t.Fatalf("the header does not hold the quoted title in whole words:\n%s", screen)
	}
}

// With --show-thinking on a terminal, reasoning is rendered Markdown as
// the reply is, behind a gutter, not raw ** and backticks.
func TestShowThinkingRendersMarkdownOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Reasoning: "First **check** the `clock` setup.", Text: "All **good**."})
	fx.ExtraEnv = fx.Env
	p := fx.StartPTY(t, "chat", "--new", "--show-thinking")
	p.WaitFor(t, "›")
	p.Send("is the clock fake?\r")
	clitest.WaitScreen(t, p, "│ First check the clock setup.", "All good.")
	if s := p.Screen(); strings.Contains(s, "**") || strings.Contains(s, "`") {
		t.Fatalf("reasoning or reply left raw on the screen:\n%s", s)
	}
	if !strings.Contains(p.Raw(), "\x1b[1mcheck\x1b[m") {
		t.Fatalf("reasoning not rendered:\n%q", p.Raw())
	}
	p.Leave(t, "›")
}

// The first screen of a new session on a terminal says which model
// answers, in which project, and where the commands are.
func TestChatWelcomeOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.ExtraEnv = fx.Env
	p := fx.StartPTY(t, "chat")
	clitest.WaitScreen(t, p, "gpt-4o-mini via openai", "project api", "new session", "/help", "›")
	p.Send("\x04")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Output())
	}
}

// On an 80×24 terminal a reply that fits on the screen is rendered as
// Markdown; so is one whose code fence alone is taller than the screen,
// which is in the scrollback once, never raw and then again rendered
// below it.
func TestReplyRenderedOnceOnSmallTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	var tall strings.Builder
	tall.WriteString("Here is the **tall plan**:\n\n```go\n")
	for i := range 30 {
		fmt.Fprintf(&tall, "step%02d := %d\n", i, i)
	}
	tall.WriteString("```\n\nDone with the **tall plan**.")
	fx.Srv.Enqueue(
		openaitest.Reply{Text: "A **short answer** in\n\n- two\n- items"},
		openaitest.Reply{Text: tall.String()},
	)
	fx.ExtraEnv = fx.Env
	p := fx.StartPTYSize(t, 80, 24, "chat")
	p.WaitFor(t, "›")
	p.Send("short?\r")
	p.WaitFor(t, "items")
	p.WaitPrompt(t, "›")
	if screen := p.Screen(); strings.Contains(screen, "**short answer**") || !strings.Contains(screen, "short answer") {
		t.Fatalf("a short reply is not rendered on the screen:\n%s", screen)
	}
	p.Send("tall?\r")
	p.WaitFor(t, "Done with the")
	p.WaitPrompt(t, "›")
	p.Leave(t, "›")
	history := p.History()
	if n := strings.Count(history, "step17 := 17"); n != 1 || strings.Contains(history, "**") || strings.Contains(history, "```") {
		t.Fatalf("a reply taller than the screen is in the scrollback %d times, or raw:\n%s", n, history)
	}
}

// At 80 columns /help breaks no word: a description too long for the
// line goes on under the descriptions, and the hint printed on leaving
// keeps the session id whole, on a line of its own.
func TestHelpAndExitHintAt80Columns(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "noted"})
	fx.ExtraEnv = fx.Env
	p := fx.StartPTYSize(t, 80, 24, "chat", "--new")
	p.WaitFor(t, "›")
	p.Send("/help\r")
	clitest.WaitScreen(t, p, "/exit", "Ctrl+D too")
	screen := p.Screen()
	for _, want := range []string{
		"/fork [TURN]     fork this session at TURN (default: all) and continue in the\n                 fork",
	} {
		if !strings.Contains(screen, want) {
			t.Fatalf("/help at 80 columns lacks %q:\n%s", want, screen)
		}
	}
	p.Send("hello\r")
	p.WaitFor(t, "noted")
	p.WaitPrompt(t, "›")
	p.Send("\x04")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Output())
	}
	out := p.Output()
	i := strings.Index(out, "resume this session with:")
	if i < 0 {
		t.Fatalf("no resume hint:\n%s", out)
	}
	hint := strings.ReplaceAll(out[i:], "\r", "")
	if !regexp.MustCompile(`resume this session with:\n  loom chat --resume [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\n`).MatchString(hint) {
		t.Fatalf("the hint at 80 columns:\n%q", hint)
	}
}
