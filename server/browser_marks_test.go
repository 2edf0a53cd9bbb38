package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
)

// What a session page marks, in a real browser: an interrupted turn, one
// usage line for a reply of one model call, a disclosure marker on tool
// calls, no badge for a plain session; a rewind asks first and then says
// where the later turns went, and the fork it made was not created after
// its last activity; the sessions table fits a phone.
func TestBrowserSessionMarks(t *testing.T) {
	e := newEnv(t)
	t0 := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	bash := storetest.CompletedTool("call_1", "Bash", `{"command":"go test ./..."}`, `"ok  example.com/release 0.2s"`, t0, t0.Add(50*time.Millisecond))
	use := loom.Usage{InputTokens: 1520, OutputTokens: 312, CostUSD: 0.0021, APICalls: 1}
	s := e.seed(&loom.Session{UserID: "alice", Key: "cli:release", Project: loom.Project{ID: "00000000000000aa", Name: "release", Root: "/src/release"},
		Title: "Ship the release", Model: "gpt-4o-mini", Provider: "openai"},
		userMsg("tag v1.2 and push it"), // interrupted: no reply
		userMsg("run the tests first"),
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-4o-mini", Usage: use, Parts: []loom.Part{
			{Type: loom.PartStepStart}, {Type: loom.PartText, Text: "The tests pass."}, bash,
			{Type: loom.PartStepFinish, Usage: &use},
		}},
		userMsg("now tag it"), assistantMsg("Tagged v1.2."),
	)
	e.seed(&loom.Session{UserID: "alice", Key: "telegram:5551234", Title: "Groceries and a rather long title that wraps on a phone"},
		userMsg("remind me to buy oat milk"), assistantMsg("Noted."))
	ctx := browser(t)
	dir := outDir(t)

	do(t, ctx, "open the session",
		chromedp.Navigate(e.ts.URL+"/s/"+s.ID+"?token="+e.alice),
		confirmLink(),
		chromedp.WaitVisible(chromedp.CSS("#messages .msg")),
	)
	if badges := eval[string](t, ctx, "[...document.querySelectorAll('.session-head .badge')].map(b => b.innerText).join('|')"); strings.Contains(badges, "main") {
		t.Errorf("a plain session has a %q badge, which reads like a branch", badges)
	}
	after := func(seq int) string {
		return eval[string](t, ctx, fmt.Sprintf("getComputedStyle(document.getElementById('m-%d'), '::after').content", seq))
	}
	if got := after(1); !strings.Contains(got, "interrupted") {
		t.Errorf("the user message with no reply is not marked: ::after is %s", got)
	}
	if got := after(2); strings.Contains(got, "interrupted") {
		t.Errorf("an answered user message is marked interrupted")
	}
	reply := eval[string](t, ctx, "document.getElementById('m-3').innerText")
	if n := strings.Count(reply, "1,520 in"); n != 1 {
		t.Errorf("a reply of one model call shows its usage %d times:\n%s", n, reply)
	}
	if got := eval[string](t, ctx, "getComputedStyle(document.querySelector('details.tool > summary'), '::before').content"); got != `"▶"` {
		t.Errorf("a tool call has no disclosure marker: ::before is %s", got)
	}
	screenshot(t, ctx, dir, "session-1280.png")

	// Rewind from the page: it asks first, then says where the later
	// turns are.
	eval[bool](t, ctx, `window.confirm = m => { sessionStorage.setItem('asked', m); return true; }; true`)
	do(t, ctx, "rewind to turn 1",
		chromedp.Click(chromedp.Search(`//details[summary[.="Rewind"]]/summary`)),
		chromedp.SetValue(chromedp.CSS(`form[action$="/rewind"] input[name="turn"]`), "1"),
		chromedp.Click(chromedp.CSS(`form[action$="/rewind"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#rewound")),
	)
	if asked := eval[string](t, ctx, "sessionStorage.getItem('asked') || ''"); !strings.Contains(asked, "later turns move to a fork") {
		t.Errorf("the rewind did not ask first (asked %q)", asked)
	}
	flash := eval[string](t, ctx, "document.getElementById('rewound').innerText")
	if !strings.Contains(flash, "Rewound to the end of turn 1") || !strings.Contains(flash, "Ship the release (rewound)") {
		t.Errorf("after a rewind the page says %q", flash)
	}
	screenshot(t, ctx, dir, "rewound-1280.png")
	do(t, ctx, "open the fork",
		chromedp.Click(chromedp.CSS("#rewound a")),
		chromedp.WaitVisible(chromedp.CSS("#usage")),
	)
	if tree := eval[string](t, ctx, "document.querySelector('.lineage').innerText"); !strings.Contains(tree, "Ship the release\nrewound @ turn 1") && !strings.Contains(tree, "Ship the release rewound @ turn 1") || strings.Contains(tree, "(rewound)") {
		t.Errorf("the lineage says fork twice:\n%s", tree)
	}
	if bad := eval[bool](t, ctx, `(() => { const t = [...document.querySelectorAll('#usage time')].map(x => Date.parse(x.getAttribute('datetime'))); return t.length != 2 || t[1] < t[0]; })()`); bad {
		t.Errorf("the rewound fork shows Updated before Created: %s", eval[string](t, ctx, "document.getElementById('usage').innerText"))
	}

	// A phone: the sessions table fits the screen, no sideways scrolling.
	do(t, ctx, "phone sessions",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#sessions")),
	)
	if w := eval[int](t, ctx, "(f => f.scrollWidth - f.clientWidth)(document.querySelector('.table-wrap'))"); w > 0 {
		t.Errorf("the sessions table is %dpx wider than a phone screen", w)
	}
	if !eval[bool](t, ctx, "[...document.querySelectorAll('#sessions td.title a')].every(a => a.getBoundingClientRect().width > 0)") {
		t.Error("titles are hidden on a phone")
	}
	screenshot(t, ctx, dir, "sessions-390.png")
	do(t, ctx, "phone session", chromedp.Navigate(e.ts.URL+"/s/"+s.ID), chromedp.WaitVisible(chromedp.CSS("#messages")))
	screenshot(t, ctx, dir, "session-390.png")
}
