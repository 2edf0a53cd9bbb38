package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
)

// A message that a fork and a rewind inherited is one hit of the
// dashboard's search page, saying it is also in two other sessions.
func TestBrowserSearchFindsInheritedMessageOnce(t *testing.T) {
	e := newEnv(t)
	s := e.seed(&loom.Session{UserID: "alice", Key: "cli:once", Title: "Zanzibar trip"},
		userMsg("plan the zanzibar trip"), assistantMsg("Day one: Stone Town."),
		userMsg("and day two?"), assistantMsg("Day two: the beach."),
		userMsg("and day three?"), assistantMsg("Day three: home."),
	)
	ctx := context.Background()
	if _, err := e.st.Fork(ctx, s.ID, loom.ForkOptions{Turn: 1, Title: "Zanzibar, other plan"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Rewind(ctx, s.ID, loom.RewindOptions{Turn: 2}); err != nil {
		t.Fatal(err)
	}
	bctx := browser(t)
	do(t, bctx, "search",
		chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")),
		chromedp.Navigate(e.ts.URL+"/search?q=zanzibar+trip"), chromedp.WaitVisible(chromedp.CSS("#hits")),
	)
	hits := eval[string](t, bctx, `document.getElementById('hits').innerText`)
	n := eval[int](t, bctx, `[...document.querySelectorAll('#hits li.hit .snippet')].filter(p => p.innerText.includes('plan the')).length`)
	if n != 1 || !strings.Contains(hits, "also in 2 other sessions") {
		t.Fatalf("the inherited message is %d hits, want one also in 2 other sessions:\n%s", n, hits)
	}
}
