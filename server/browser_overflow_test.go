package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
)

// Long words and URLs, a wide table and a long title stay inside their
// message on every screen, from a phone to a wide desktop; single
// newlines in a message are kept as line breaks.
func TestBrowserNoOverflow(t *testing.T) {
	e := newEnv(t)
	url := "https://example.com/" + strings.Repeat("very-long-path-segment/", 10) + "?q=" + strings.Repeat("x", 40)
	word := strings.Repeat("Supercalifragilistic", 12)
	table := "| " + strings.Repeat("column header | ", 14) + "\n|" + strings.Repeat("---|", 14) + "\n| " + strings.Repeat("a cell value | ", 14)
	s := e.seed(&loom.Session{UserID: "alice", Key: "cli:wide", Title: "A title " + word},
		userMsg("first line\nsecond line\nthird line"),
		assistantMsg("See "+url+" and "+word+".\n\n"+table+"\n\n`"+word+"`"),
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c1", Name: "shell", Status: loom.ToolCompleted,
			Input: []byte(`{"command":"curl ` + url + `"}`), Output: []byte(`"` + word + `"`)}}},
	)
	ctx := browser(t)
	do(t, ctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	for _, w := range []int64{390, 1400, 1920} {
		do(t, ctx, fmt.Sprintf("%dpx", w),
			chromedp.EmulateViewport(w, 900),
			chromedp.Navigate(e.ts.URL+"/s/"+s.ID),
			chromedp.WaitVisible(chromedp.CSS("#messages")),
		)
		if d := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); d > 0 {
			t.Errorf("%dpx: the session page is %dpx wider than the screen", w, d)
		}
		// Nothing runs out of a message, whatever the page does.
		if out := eval[[]string](t, ctx, `[...document.querySelectorAll('.msg')].filter(m => m.scrollWidth > m.clientWidth + 1).map(m => m.id + ': ' + (m.scrollWidth - m.clientWidth) + 'px')`); len(out) > 0 {
			t.Errorf("%dpx: content runs out of messages: %v", w, out)
		}
		for _, page := range []string{"/", "/search?q=Supercalifragilistic"} {
			do(t, ctx, fmt.Sprintf("%dpx %s", w, page), chromedp.Navigate(e.ts.URL+page), chromedp.WaitReady(chromedp.CSS("main")))
			if d := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); d > 0 {
				t.Errorf("%dpx: %s is %dpx wider than the screen", w, page, d)
			}
		}
	}
	do(t, ctx, "session", chromedp.Navigate(e.ts.URL+"/s/"+s.ID), chromedp.WaitVisible(chromedp.CSS("#messages")))
	if text := eval[string](t, ctx, `document.querySelector('.msg.role-user .md').innerText`); !strings.Contains(text, "first line\nsecond line\nthird line") {
		t.Errorf("single newlines in a message are lost: %q", text)
	}
}
