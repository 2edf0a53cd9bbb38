package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
)

// A tool's input stored as Go's encoder writes it (2\u003e/dev/null
// \u0026\u0026 make) reads as typed in the dashboard's Input box once
// the call is opened.
func TestBrowserToolInputReadsAsTyped(t *testing.T) {
	e := newEnv(t)
	s := e.seed(&loom.Session{UserID: "alice", Key: "cli:escapes", Title: "Build quietly"},
		userMsg("build it"),
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c1", Name: "Bash", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"command":"ls 2\u003e/dev/null \u0026\u0026 make \u003cin"}`), Output: json.RawMessage(`"built"`)}}},
	)
	ctx := browser(t)
	do(t, ctx, "open the tool call",
		chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")),
		chromedp.Navigate(e.ts.URL+"/s/"+s.ID), chromedp.WaitVisible(chromedp.CSS("#messages")),
		chromedp.Click(chromedp.CSS("details.tool summary")), chromedp.WaitVisible(chromedp.CSS("details.tool .io pre")),
	)
	got := eval[string](t, ctx, `document.querySelector('details.tool .io pre').innerText`)
	if want := `"command": "ls 2>/dev/null && make <in"`; !strings.Contains(got, want) {
		t.Fatalf("the Input box shows %q, want %s", got, want)
	}
}

// A short question-and-answer session is dense: more than eight of its
// messages fit on a 900 px high screen, on a desktop and on a phone.
func TestBrowserShortMessagesAreDense(t *testing.T) {
	e := newEnv(t)
	var msgs []*loom.Message
	for i := range 12 {
		msgs = append(msgs, userMsg(fmt.Sprintf("question %d?", i)), assistantMsg(fmt.Sprintf("Answer %d.", i)))
	}
	s := e.seed(&loom.Session{UserID: "alice", Key: "cli:short", Title: "Quick questions"}, msgs...)
	ctx := browser(t)
	do(t, ctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	for _, w := range []int64{390, 1400} {
		do(t, ctx, fmt.Sprintf("%dpx", w),
			chromedp.EmulateViewport(w, 900),
			chromedp.Navigate(e.ts.URL+"/s/"+s.ID),
			chromedp.WaitVisible(chromedp.CSS("#messages")),
		)
		// From the first message down, as a reader scrolled to it sees.
		n := eval[int](t, ctx, `(() => {
			const ms = [...document.querySelectorAll('#messages .msg')];
			const top = ms[0].getBoundingClientRect().top;
			return ms.filter(m => m.getBoundingClientRect().bottom - top <= 900).length;
		})()`)
		if n <= 8 {
			t.Errorf("%dpx: %d short messages fit in 900 px, want more than 8", w, n)
		}
	}
}

// A one-prompt session whose agent was given long instructions (an
// instructions file, the environment: system messages) fits one 900 px
// screen: on a desktop the whole page, on a phone the conversation. The
// instructions are kept but folded to a line, and open on a click.
func TestBrowserOnePromptSessionFitsOneScreen(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	b.WriteString("# AGENTS.md\n\n")
	for i := range 300 {
		fmt.Fprintf(&b, "- Rule %d: run the tests of a package you change before you commit it, and say which.\n", i)
	}
	s := e.seed(&loom.Session{UserID: "alice", Key: "cli:onep", Title: "Rename the flag"},
		&loom.Message{Role: loom.RoleSystem, Parts: []loom.Part{{Type: loom.PartText, Text: b.String()}}},
		&loom.Message{Role: loom.RoleSystem, Parts: []loom.Part{{Type: loom.PartText, Text: "<environment_context>\n  <cwd>/src/api</cwd>\n  <shell>bash</shell>\n</environment_context>"}}},
		userMsg("rename --verbose to --debug in the CLI"),
		assistantMsg("Renamed the flag in cmd/root.go and its help; the tests pass."),
	)
	ctx := browser(t)
	do(t, ctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	for _, w := range []int64{390, 1400} {
		do(t, ctx, fmt.Sprintf("%dpx", w),
			chromedp.EmulateViewport(w, 900),
			chromedp.Navigate(e.ts.URL+"/s/"+s.ID),
			chromedp.WaitVisible(chromedp.CSS("#messages")),
		)
		// The conversation ends on the first screen; on a desktop the
		// whole page fits it (on a phone the session's usage and actions
		// follow the conversation, below it).
		if b := eval[int](t, ctx, `Math.ceil([...document.querySelectorAll('#messages .msg')].pop().getBoundingClientRect().bottom + window.scrollY)`); b > 900 {
			t.Errorf("%dpx: the one-prompt session's conversation ends %d px down the page, want within one 900 px screen", w, b)
		}
		if h := eval[int](t, ctx, `document.scrollingElement.scrollHeight`); w >= 1400 && h > 900 {
			t.Errorf("%dpx: the one-prompt session's page is %d px tall, want one 900 px screen", w, h)
		}
		if !eval[bool](t, ctx, `document.body.innerText.includes('rename --verbose to --debug')`) {
			t.Errorf("%dpx: the prompt is not on the page", w)
		}
	}
	// The instructions are kept: a click opens them.
	do(t, ctx, "open the instructions", chromedp.Click(chromedp.CSS("#messages details summary")))
	if !eval[bool](t, ctx, `document.body.innerText.includes('Rule 299')`) {
		t.Error("the instructions do not open on a click")
	}
}
