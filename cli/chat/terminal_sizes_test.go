package chat_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// markdownReply is a reply of n lines or a little more on a screen of
// 80 columns or more: a heading, a paragraph, a list, a code fence and
// a table, with bold and code markers that show whether it was
// rendered; every line names mark.
func markdownReply(n int, mark string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## The %s plan\n\nHere is the **%s plan**, with `code` in it:\n\n", mark, mark)
	items := max(2, (n-19)/2)
	for i := range items {
		fmt.Fprintf(&b, "- %s step %02d is **bold**\n", mark, i)
	}
	b.WriteString("\n```go\n")
	for i := range max(2, n-20-items) {
		fmt.Fprintf(&b, "%sCode%02d := %d\n", mark, i, i)
	}
	// A tab-indented line that only a terminal's tab stops make wider
	// than 80 columns.
	line := mark + "Wide := " + strings.Repeat("x", 76)
	fmt.Fprintf(&b, "\t%s\n", line[:76])
	fmt.Fprintf(&b, "```\n\n| %s step | time |\n|------|-----:|\n| one | 1s |\n| two | 20s |\n\n", mark)
	fmt.Fprintf(&b, "End of the **%s plan**.", mark)
	return b.String()
}

// checkRenderedOnce fails unless all the terminal holds, scrollback
// and screen, has reply rendered exactly once, whole and in order, and
// none of its Markdown markers raw.
func checkRenderedOnce(t *testing.T, p *termtest.Term, reply, mark string, cols, rows int) {
	t.Helper()
	history := p.History()
	want := termtest.Shown(term.RenderMarkdown(reply, cols), cols)
	if n := strings.Count(history, want); n != 1 {
		t.Fatalf("a reply of %d lines on a %dx%d terminal is in the scrollback %d times, want once rendered:\n%s\n--- want:\n%s", strings.Count(want, "\n")+1, cols, rows, n, history, want)
	}
	for _, raw := range []string{"**", "```", "|------|", "- " + mark + " step"} {
		if strings.Contains(history, raw) {
			t.Fatalf("%q left raw in the scrollback on a %dx%d terminal:\n%s", raw, cols, rows, history)
		}
	}
}

// A reply is rendered as Markdown whatever its height: one taller than
// the screen is rendered block by block as it streams, so what scrolls
// off the top is already rendered, and it is in the scrollback once,
// whole and in order, with no raw markers; one that fits is rendered
// too.
func TestTallReplyRenderedOnce(t *testing.T) {
	t.Parallel()
	clitest.ForTermSizes(t, func(t *testing.T, cols, rows int) {
		replies := []struct {
			mark  string
			lines int
		}{{"short", 8}, {"fitting", rows - 8}, {"tall", 33}, {"taller", 80}}
		fx := clitest.NewAgentFixture(t)
		for _, r := range replies {
			fx.Srv.Enqueue(openaitest.Reply{Text: markdownReply(r.lines, r.mark)})
		}
		fx.ExtraEnv = fx.Env
		p := fx.StartPTYSize(t, cols, rows, "chat", "--new")
		p.WaitFor(t, "›")
		for _, r := range replies {
			p.Send(r.mark + "?\r")
			p.WaitFor(t, "End of the "+r.mark+" plan.")
			p.WaitPrompt(t, "›")
			checkRenderedOnce(t, p, markdownReply(r.lines, r.mark), r.mark, cols, rows)
		}
		p.Leave(t, "›")
		if screen := p.Screen(); !strings.Contains(screen, "End of the taller plan.") {
			t.Fatalf("the last reply's end is not on the screen:\n%s", screen)
		}
	})
}

// Reasoning shown with --show-thinking is rendered block by block as
// the reply is, behind its gutter: taller than the screen, it is in the
// scrollback once, rendered, and the reply after it too.
func TestTallThinkingRenderedOnce(t *testing.T) {
	t.Parallel()
	clitest.ForTermSizes(t, func(t *testing.T, cols, rows int) {
		reasoning, reply := markdownReply(40, "deep"), markdownReply(12, "answer")
		fx := clitest.NewAgentFixture(t)
		fx.Srv.Enqueue(openaitest.Reply{Reasoning: reasoning, Text: reply})
		fx.ExtraEnv = fx.Env
		p := fx.StartPTYSize(t, cols, rows, "chat", "--new", "--show-thinking")
		p.WaitFor(t, "›")
		p.Send("think?\r")
		p.WaitFor(t, "End of the answer plan.")
		p.WaitPrompt(t, "›")
		history := p.History()
		gutter := termtest.Shown(command.ThinkingBlock(term.NewColorScheme(true), reasoning, cols), cols)
		if n := strings.Count(history, gutter); n != 1 {
			t.Fatalf("reasoning of %d lines on a %dx%d terminal is in the scrollback %d times, want once rendered:\n%s", strings.Count(gutter, "\n")+1, cols, rows, n, history)
		}
		checkRenderedOnce(t, p, reply, "answer", cols, rows)
		p.Leave(t, "›")
	})
}

// Keys typed while a reply streams are not echoed into it; they wait
// for the next prompt, and Enter among them sends that message.
func TestTypeAheadWaitsForNextPrompt(t *testing.T) {
	t.Parallel()
	clitest.ForTermSizes(t, func(t *testing.T, cols, rows int) {
		fx := clitest.NewAgentFixture(t)
		fx.Srv.Enqueue(
			openaitest.Reply{Text: strings.Repeat("streaming words ", 60) + "END-OF-FIRST", Delay: 20 * time.Millisecond},
			openaitest.Reply{Text: "second reply here"},
		)
		fx.ExtraEnv = fx.Env
		p := fx.StartPTYSize(t, cols, rows, "chat", "--new")
		p.WaitFor(t, "›")
		p.Send("first\r")
		p.WaitFor(t, "streaming words streaming words")
		p.Send("typed ahead\r")
		p.WaitFor(t, "END-OF-FIRST")
		p.WaitFor(t, "second reply here")
		p.Leave(t, "›")
		out := p.Output()
		reply := out[strings.Index(out, "streaming words"):strings.Index(out, "END-OF-FIRST")]
		if strings.Contains(reply, "typed") {
			t.Fatalf("type-ahead was echoed into the reply:\n%s", out)
		}
		if got := fx.Srv.Requests(); len(got) != 2 || !strings.Contains(string(got[1].Raw), "typed ahead") {
			t.Fatalf("the typed-ahead message was not sent as the next turn (%d requests):\n%s", len(got), out)
		}
	})
}

// Ctrl+U on a prompt that wrapped over several rows clears all of them:
// no row of the old text stays on the screen above the empty prompt,
// and what is typed next is sent alone.
//
// The input's frame shrinks from three rows to one there, and the
// renderer (charmbracelet/ultraviolet, issue 155) draws a shrinking
// frame from its old last row instead of its first, leaving the old rows
// above the prompt; so the frame keeps its height until the message is
// sent, and the reply still follows the message with no empty row.
func TestCtrlUClearsWrappedPrompt(t *testing.T) {
	t.Parallel()
	clitest.ForTermSizes(t, func(t *testing.T, cols, rows int) {
		fx := clitest.NewAgentFixture(t)
		fx.Srv.Enqueue(openaitest.Reply{Text: "fresh ok"})
		fx.ExtraEnv = fx.Env
		p := fx.StartPTYSize(t, cols, rows, "chat", "--new")
		p.WaitPrompt(t, "›")
		long := strings.Repeat("stale words ", 2*cols/12+4) + "LAST-STALE"
		p.Send(long)
		clitest.WaitScreen(t, p, "LAST-STALE")
		p.Send("\x15")
		p.WaitPrompt(t, "›")
		if s := p.Screen(); strings.Contains(s, "stale") {
			t.Fatalf("Ctrl+U left the wrapped prompt's text on the screen:\n%s", s)
		}
		p.Send("fresh\r")
		p.WaitFor(t, "fresh ok")
		p.WaitPrompt(t, "›")
		if s := p.Screen(); !strings.Contains(s, "› fresh\nfresh ok") {
			t.Fatalf("the reply does not follow the message sent after Ctrl+U:\n%s", s)
		}
		if got := fx.LastUserText(t); got != "fresh" {
			t.Fatalf("sent %q after Ctrl+U, want %q", got, "fresh")
		}
		p.Leave(t, "›")
	})
}
