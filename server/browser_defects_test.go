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
