package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// The usage panel of an open session page follows the session: when
// another process stores an assistant message with usage, the panel's
// messages, turns, tokens, cost and calls change without a reload.
func TestBrowserLiveUsage(t *testing.T) {
	e := newEnv(t)
	x := e.seed(&loom.Session{UserID: "alice", Key: "http:usage", Title: "Costs"},
		userMsg("how much is this?"),
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-4o-mini", Usage: loom.Usage{InputTokens: 1000, OutputTokens: 200, CostUSD: 0.01, APICalls: 1},
			Parts: []loom.Part{{Type: loom.PartText, Text: "Not much."}}})
	ctx := browser(t)

	panel := func() map[string]string {
		t.Helper()
		return eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('.usage-table dt')].map(dt => [dt.textContent, dt.nextElementSibling.textContent]))`)
	}
	do(t, ctx, "open the session",
		chromedp.Navigate(e.ts.URL+"/?token="+e.alice),
		confirmLink(),
		chromedp.WaitVisible(chromedp.CSS("#sessions")),
		chromedp.Navigate(e.ts.URL+"/s/"+x.ID),
		chromedp.WaitVisible(chromedp.CSS("#m-2")),
	)
	before := map[string]string{"Messages": "2", "Turns": "1", "Input": "1,000", "Output": "200", "Cost": "$0.01", "API calls": "1"}
	got := panel()
	for k, v := range before {
		if got[k] != v {
			t.Fatalf("usage panel at load: %s = %q, want %q (%v)", k, got[k], v, got)
		}
	}
	eval[bool](t, ctx, "window.__noReload = true")
	do(t, ctx, "connect the event stream", chromedp.WaitVisible(chromedp.CSS("#messages[data-connected]")))

	other, err := sqlite.Open(context.Background(), e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s, _ := other.Session(context.Background(), x.ID)
	if err := other.Append(context.Background(), s, userMsg("and now?"),
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-4o-mini", Usage: loom.Usage{InputTokens: 2500, OutputTokens: 300, CacheReadTokens: 800, CostUSD: 0.02, APICalls: 2},
			Parts: []loom.Part{{Type: loom.PartText, Text: "A little more."}}}); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "see the new messages", chromedp.WaitVisible(chromedp.CSS("#m-4")))
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[bool](`document.querySelector('.usage-table').innerText.includes('3,500')`, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("the usage panel did not follow the new message: %v; it shows %v", err, panel())
	}
	after := map[string]string{"Messages": "4", "Turns": "2", "Input": "3,500", "Output": "500", "Cache read": "800", "Cost": "$0.03", "API calls": "3"}
	got = panel()
	for k, v := range after {
		if got[k] != v {
			t.Errorf("usage panel after a live message: %s = %q, want %q (%v)", k, got[k], v, got)
		}
	}
	if !eval[bool](t, ctx, "window.__noReload === true") {
		t.Error("the page reloaded to update the usage")
	}
	if n := eval[int](t, ctx, "document.querySelectorAll('.usage-table').length"); n != 1 {
		t.Errorf("%d usage panels on the page, want 1", n)
	}
	if txt := eval[string](t, ctx, "document.querySelector('.usage-table time') ? document.querySelector('.usage-table time').textContent : ''"); strings.Contains(txt, "UTC") {
		t.Errorf("the refreshed panel shows times in UTC, not local time: %q", txt)
	}
}

// The sessions list follows the store: a session another process makes,
// and a message it stores in an older session, show without a reload.
func TestBrowserLiveSessionList(t *testing.T) {
	e := newEnv(t)
	old := e.seed(&loom.Session{UserID: "alice", Key: "http:old", Title: "An older session"}, userMsg("hello"))
	e.seed(&loom.Session{UserID: "alice", Key: "http:newer", Title: "A newer session"}, userMsg("hello"))
	ctx := browser(t)
	do(t, ctx, "open the list",
		chromedp.Navigate(e.ts.URL+"/?token="+e.alice),
		confirmLink(),
		chromedp.WaitVisible(chromedp.CSS("#sessions")),
	)
	eval[bool](t, ctx, "window.__noReload = true")
	do(t, ctx, "connect the event stream", chromedp.WaitVisible(chromedp.CSS("#session-list[data-connected]")))
	firstRow := func() string {
		return eval[string](t, ctx, "document.querySelector('#sessions tbody tr .title a').textContent")
	}
	if got := firstRow(); got != "A newer session" {
		t.Fatalf("first row at load: %q", got)
	}

	other, err := sqlite.Open(context.Background(), e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Append(context.Background(), &loom.Session{UserID: "alice", Key: "http:brand-new", Title: "Made elsewhere"}, userMsg("hi")); err != nil {
		t.Fatal(err)
	}
	wait := func(what, js string) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := chromedp.Run(c, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			t.Fatalf("%s: %v; the first row is %q", what, err, firstRow())
		}
	}
	wait("a new session shows", `document.querySelector('#sessions tbody tr .title a').textContent === 'Made elsewhere'`)
	s, _ := other.Session(context.Background(), old.ID)
	if err := other.Append(context.Background(), s, assistantMsg("a late reply")); err != nil {
		t.Fatal(err)
	}
	wait("an older session with a new message moves up", `document.querySelector('#sessions tbody tr .title a').textContent === 'An older session'`)
	if !eval[bool](t, ctx, "window.__noReload === true") {
		t.Error("the page reloaded to update the list")
	}
}
