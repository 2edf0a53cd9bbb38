package server_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/server"
)

// importSamples imports every real session file of testdata for alice,
// priced as loom import prices them.
func importSamples(t *testing.T, e *env) {
	t.Helper()
	const samples = "../testdata/agent-sessions"
	im := &importer.Importer{Store: e.st, UserID: "alice", Price: pricing.Cost}
	if _, err := im.Run(context.Background(), []importer.Target{
		{Format: claudecode.New(), Roots: []string{filepath.Join(samples, "claude-code")}, Explicit: true},
		{Format: codex.Format{}, Roots: []string{filepath.Join(samples, "codex")}, Explicit: true},
		{Format: gemini.Format{}, Roots: []string{filepath.Join(samples, "gemini")}, Explicit: true},
	}); err != nil {
		t.Fatal(err)
	}
}

// pageFits fails unless the page now shown fits the screen: nothing
// wider than it, no table cell, box or bar outside it or cut by its
// box, no two labels of a chart on each other.
func pageFits(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if d := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); d > 0 {
		t.Errorf("%s: the page is %dpx wider than the screen", name, d)
	}
	// Cells, boxes and messages that reach past the screen's edge, or
	// past the edge of a box that hides or scrolls what overflows it.
	out := eval[[]string](t, ctx, `(() => {
		const w = document.documentElement.clientWidth, out = [];
		const clip = el => { for (let a = el.parentElement; a; a = a.parentElement) { const o = getComputedStyle(a).overflowX; if (o !== 'visible') return a; } return null; };
		for (const el of document.querySelectorAll('main td, main th, main .flash, main pre, main .card, main .msg, main h1, main dd')) {
			const r = el.getBoundingClientRect();
			if (r.width === 0 || getComputedStyle(el).visibility === 'hidden') continue;
			const text = (el.innerText || '').trim().slice(0, 40);
			if (r.right > w + 1 || r.left < -1) { out.push(el.tagName.toLowerCase() + '.' + el.className + ' "' + text + '" spans ' + Math.round(r.left) + '-' + Math.round(r.right) + ' of ' + w + 'px'); continue; }
			const c = clip(el);
			if (c) { const cr = c.getBoundingClientRect(); if (r.right > cr.right + 1) out.push(el.tagName.toLowerCase() + '.' + el.className + ' "' + text + '" is cut by its box at ' + Math.round(cr.right) + 'px (it ends at ' + Math.round(r.right) + ')'); }
			if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'hidden' && getComputedStyle(el).textOverflow !== 'ellipsis') out.push(el.tagName.toLowerCase() + '.' + el.className + ' "' + text + '" hides ' + (el.scrollWidth - el.clientWidth) + 'px');
		}
		return out;
	})()`)
	for _, o := range out {
		t.Errorf("%s: %s", name, o)
	}
	// Labels of a chart (months of the calendar, axis labels) stay apart.
	if clash := eval[[]string](t, ctx, `(() => {
		const out = [];
		for (const sel of ['.cal-months span', '.cal-months text', 'svg text']) {
			const ls = [...document.querySelectorAll(sel)].filter(l => l.getBoundingClientRect().width > 0);
			for (let i = 1; i < ls.length; i++) {
				const a = ls[i-1].getBoundingClientRect(), b = ls[i].getBoundingClientRect();
				if (Math.abs(a.top - b.top) < 2 && a.right > b.left + 0.5 && a.left < b.right) out.push(ls[i-1].textContent + '|' + ls[i].textContent);
			}
		}
		return out;
	})()`); len(clash) > 0 {
		t.Errorf("%s: labels on each other: %v", name, clash)
	}
}

// pageShot is screenshot of the whole page, or of its top screen when it
// is too long to capture whole in good time (a session of hundreds of
// messages).
func pageShot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	if eval[int](t, ctx, "document.documentElement.scrollHeight") < 8000 {
		screenshot(t, ctx, dir, name)
		return
	}
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every page of the dashboard, on a phone (390 px) and a desktop (1400
// px), with the real sessions of testdata: each fits its screen, and a
// screenshot of each is in the test's output directory.
func TestBrowserEveryPageFits(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.Blame = &server.BlameConfig{Owner: "alice"} })
	importSamples(t, e)
	ss, err := e.st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice"})
	if err != nil || len(ss) < 5 {
		t.Fatalf("imported %d sessions: %v", len(ss), err)
	}
	// A heavy user's figures, as wide as a page's columns get: billions
	// of tokens and thousands of dollars a day, from 40 to 21 days ago.
	now := time.Now().UTC()
	var heavy []*loom.Message
	for d := 40; d >= 21; d-- {
		at := now.AddDate(0, 0, -d)
		heavy = append(heavy, &loom.Message{Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{Type: loom.PartText, Text: "refactor the ingest pipeline"}}},
			&loom.Message{Role: loom.RoleAssistant, Provider: "anthropic", Model: "claude-opus-4-1-20250805", CreatedAt: at.Add(time.Minute),
				Usage: loom.Usage{InputTokens: 1_234_567_890, OutputTokens: 98_765_432, CacheReadTokens: 2_345_678_901, CacheWriteTokens: 345_678_901, CostUSD: 12_345.67},
				Parts: []loom.Part{{Type: loom.PartText, Text: "done"}, {Type: loom.PartTool, CallID: fmt.Sprint("c", d), Name: "mcp__github__search_pull_requests_with_reviews", Status: loom.ToolCompleted, Input: []byte(`{"query":"ingest"}`), Output: []byte(`"ok"`)}}})
	}
	e.seed(&loom.Session{UserID: "alice", Key: "cli:heavy", Title: "Refactor the ingest pipeline of the analytics warehouse", Surface: "cli"}, heavy...)
	var main, sub *loom.Session
	for _, s := range ss {
		switch {
		case s.Kind == loom.KindSubagent && sub == nil:
			sub = s
		case s.Kind == loom.KindMain && (main == nil || s.MessageCount > main.MessageCount):
			main = s
		}
	}
	bctx := browser(t)
	dir := outDir(t)
	do(t, bctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	pages := []struct{ name, path string }{
		{"sessions", "/"},
		{"session", "/s/" + main.ID},
		{"subagent", "/s/" + sub.ID},
		{"search", "/search?q=" + url.QueryEscape("scroll xterm")},
		{"usage", "/usage"},
		{"usage-year", "/usage?days=365"},
		{"usage-week", "/usage?days=7"},
		{"insights", "/insights"},
		{"insights-year", "/insights?days=366"},
		{"blame", "/blame"},
		{"blame-error", "/blame?path=" + url.QueryEscape("/no/such/"+strings.Repeat("averyveryverylongdirectoryname", 5)+"/file.go")},
		{"not-found", "/s/" + loom.NewID()},
	}
	for _, w := range []int64{390, 1400} {
		for _, pg := range pages {
			name := fmt.Sprintf("%s at %dpx", pg.name, w)
			do(t, bctx, name, chromedp.EmulateViewport(w, 900), chromedp.Navigate(e.ts.URL+pg.path), chromedp.WaitReady(chromedp.CSS("main")))
			pageShot(t, bctx, dir, fmt.Sprintf("%s-%d.png", pg.name, w))
			pageFits(t, bctx, name)
			switch pg.name {
			case "sessions":
				sessionsNested(t, bctx, name)
			case "usage-week":
				// The range holds no usage: the page says where it is.
				// The latest usage is the last reply's, a minute after its
				// prompt: past midnight when the test starts just before.
				want := fmt.Sprintf("No usage in these 7 days: the latest is on %s; 30 days show it.", now.AddDate(0, 0, -21).Add(time.Minute).Format("2006-01-02"))
				if got := eval[string](t, bctx, "document.getElementById('no-usage').innerText"); got != want {
					t.Errorf("%s says %q, want %q", name, got, want)
				}
				do(t, bctx, name+": follow", chromedp.Click(chromedp.CSS("#no-usage a")), chromedp.WaitVisible(chromedp.CSS("#usage-days")))
			case "insights-year":
				calendarReadable(t, bctx, name)
			}
		}
	}
	do(t, bctx, "log out", chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`main form[action="/login"]`)))
	for _, w := range []int64{390, 1400} {
		name := fmt.Sprintf("login at %dpx", w)
		do(t, bctx, name, chromedp.EmulateViewport(w, 900), chromedp.Navigate(e.ts.URL+"/login"), chromedp.WaitVisible(chromedp.CSS(`main form[action="/login"]`)))
		pageShot(t, bctx, dir, fmt.Sprintf("login-%d.png", w))
		pageFits(t, bctx, name)
	}
}

// sessionsNested fails unless each sub-agent session listed with the
// session that ran it stands under it, after it and its other
// sub-agents, and every sub-agent of the page whose parent is on the page
// is nested.
func sessionsNested(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	bad := eval[[]string](t, ctx, `(() => {
		const rows = [...document.querySelectorAll('#sessions tr.session-row')], out = [];
		const ids = new Set(rows.map(r => r.dataset.id));
		let nested = 0;
		rows.forEach((r, i) => {
			const depth = +((r.className.match(/depth-(\d)/) || [0, 0])[1]);
			if (!depth) return;
			nested++;
			let j = i - 1;
			while (j >= 0 && +((rows[j].className.match(/depth-(\d)/) || [0, 0])[1]) >= depth) j--;
			if (j < 0 || rows[j].dataset.id !== r.dataset.parent) out.push(r.querySelector('td.title a').textContent + ' is not under its parent');
		});
		if (nested === 0) out.push('no session is nested');
		return out;
	})()`)
	for _, b := range bad {
		t.Errorf("%s: %s", name, b)
	}
}

// calendarReadable fails unless the calendar of a year shows its days
// and its labels at a size to read, its latest day on the screen.
func calendarReadable(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if cell := eval[float64](t, ctx, "document.querySelector('#calendar rect.cal').getBoundingClientRect().width"); cell < 10 {
		t.Errorf("%s: a day of the calendar is %.1fpx wide", name, cell)
	}
	if label := eval[float64](t, ctx, "document.querySelector('#calendar .cal-label').getBoundingClientRect().height"); label < 9 {
		t.Errorf("%s: the calendar's labels are %.1fpx high", name, label)
	}
	if !eval[bool](t, ctx, `(() => { const cs = document.querySelectorAll('#calendar rect.cal'), r = cs[cs.length-1].getBoundingClientRect(); return r.left >= 0 && r.right <= document.documentElement.clientWidth; })()`) {
		t.Errorf("%s: the calendar's latest day is off the screen", name)
	}
}
