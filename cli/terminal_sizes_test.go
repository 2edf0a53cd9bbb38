package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/openai/openaitest"
)

// The terminal sizes every chat test of this file runs at: the smallest
// common one and a larger one, so that nothing holds for one height or
// width only.
var termSizes = []struct{ cols, rows int }{{80, 24}, {100, 40}}

func forTermSizes(t *testing.T, test func(t *testing.T, cols, rows int)) {
	for _, sz := range termSizes {
		t.Run(fmt.Sprintf("%dx%d", sz.cols, sz.rows), func(t *testing.T) {
			t.Parallel()
			test(t, sz.cols, sz.rows)
		})
	}
}

// markdownReply is a reply of about n lines on the screen: Markdown
// whose bold markers show whether it was rendered, and one line named
// mark to count how often it was printed.
func markdownReply(n int, mark string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The **%s plan**:\n\n", mark)
	for i := range n - 4 {
		fmt.Fprintf(&b, "- %s step %02d\n", mark, i)
	}
	fmt.Fprintf(&b, "\nEnd of the **%s plan**.", mark)
	return b.String()
}

// A reply that fits on the screen is redrawn as rendered Markdown
// whatever the terminal's height, and one taller than the screen is
// printed once, never raw and then again rendered below it: redrawing
// follows the terminal's real height, not a fixed one.
func TestReplyRedrawFollowsTerminalHeight(t *testing.T) {
	t.Parallel()
	forTermSizes(t, func(t *testing.T, cols, rows int) {
		fx := newAgentFixture(t)
		fx.srv.Enqueue(
			openaitest.Reply{Text: markdownReply(rows-8, "fitting")},
			openaitest.Reply{Text: markdownReply(rows+10, "tall")},
		)
		fx.extraEnv = fx.env
		p := fx.startPTYSize(t, cols, rows, "chat", "--new")
		p.WaitFor(t, "›")
		p.Send("fitting?\r")
		p.WaitFor(t, "End of the")
		p.WaitPrompt(t, "›")
		screen := p.Screen()
		if strings.Contains(screen, "**") || !strings.Contains(screen, "End of the fitting plan.") || !strings.Contains(screen, fmt.Sprintf("fitting step %02d", rows-13)) {
			t.Fatalf("a reply of %d lines on a %d-row terminal is not rendered on the screen:\n%s", rows-8, rows, screen)
		}
		p.Send("tall?\r")
		p.WaitFor(t, "End of the **tall")
		p.WaitPrompt(t, "›")
		p.Leave(t, "›")
		if n := strings.Count(p.Output(), "tall step 05"); n != 1 {
			t.Fatalf("a reply of %d lines on a %d-row terminal was printed %d times:\n%s", rows+10, rows, n, p.Output())
		}
	})
}

// Keys typed while a reply streams are not echoed into it; they wait
// for the next prompt, and Enter among them sends that message.
func TestTypeAheadWaitsForNextPrompt(t *testing.T) {
	t.Parallel()
	forTermSizes(t, func(t *testing.T, cols, rows int) {
		fx := newAgentFixture(t)
		fx.srv.Enqueue(
			openaitest.Reply{Text: strings.Repeat("streaming words ", 60) + "END-OF-FIRST", Delay: 20 * time.Millisecond},
			openaitest.Reply{Text: "second reply here"},
		)
		fx.extraEnv = fx.env
		p := fx.startPTYSize(t, cols, rows, "chat", "--new")
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
		if got := fx.srv.Requests(); len(got) != 2 || !strings.Contains(string(got[1].Raw), "typed ahead") {
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
	forTermSizes(t, func(t *testing.T, cols, rows int) {
		fx := newAgentFixture(t)
		fx.srv.Enqueue(openaitest.Reply{Text: "fresh ok"})
		fx.extraEnv = fx.env
		p := fx.startPTYSize(t, cols, rows, "chat", "--new")
		p.WaitPrompt(t, "›")
		long := strings.Repeat("stale words ", 2*cols/12+4) + "LAST-STALE"
		p.Send(long)
		waitScreen(t, p, "LAST-STALE")
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
		if got := fx.lastUserText(t); got != "fresh" {
			t.Fatalf("sent %q after Ctrl+U, want %q", got, "fresh")
		}
		p.Leave(t, "›")
	})
}
