package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/insights"
	"github.com/loomhq/loom/internal/human"
)

// The insights page shows the figures of the API's insights, which are
// insights.Build's (what `loom usage insights --json` prints): the
// totals, a calendar cell a day shaded where prompts were written, the
// tools with their failure rates, the share bars, the longest and
// costliest sessions linked to their pages; it leaves out another
// user's sessions and fits screens 390 and 1400 pixels wide.
func TestBrowserInsightsPage(t *testing.T) {
	e := newEnv(t)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	at := func(days int, h time.Duration) time.Time {
		t := today.AddDate(0, 0, -days).Add(h)
		return t
	}
	prompt := func(when time.Time, text string) *loom.Message {
		m := userMsg(text)
		m.CreatedAt = when
		return m
	}
	reply := func(when time.Time, model string, u loom.Usage, calls ...loom.Part) *loom.Message {
		return &loom.Message{Role: loom.RoleAssistant, Provider: "anthropic", Model: model, Usage: u, CreatedAt: when,
			Parts: append([]loom.Part{{Type: loom.PartText, Text: "done"}}, calls...)}
	}
	call := func(id, name, status string) loom.Part {
		return loom.Part{Type: loom.PartTool, CallID: id, Name: name, Status: status, Input: json.RawMessage(`{}`)}
	}
	opus := loom.Usage{InputTokens: 20000, OutputTokens: 3000, APICalls: 1}
	long := e.seed(&loom.Session{UserID: "alice", Key: "cli:api", Title: "Refactor the store", Surface: "cli",
		Project: loom.Project{ID: "0123456789abcdef", Name: "api", Root: "/src/api"}},
		prompt(at(20, 9*time.Hour), "start"), reply(at(20, 9*time.Hour+time.Minute), "claude-opus-4-6", opus,
			call("a", "Bash", loom.ToolCompleted), call("b", "Bash", loom.ToolError), call("c", "Read", loom.ToolCompleted)),
		prompt(at(19, 10*time.Hour), "go on"), reply(at(19, 12*time.Hour), "claude-opus-4-6", opus, call("d", "Edit", loom.ToolCompleted)))
	e.seed(&loom.Session{UserID: "alice", Key: "claude-code:x", Title: "Quick fix", Surface: "claude-code",
		Project: loom.Project{ID: "fedcba9876543210", Name: "web", Root: "/src/web"}},
		prompt(at(3, 8*time.Hour), "fix"), reply(at(3, 8*time.Hour+40*time.Second), "claude-haiku-4-5", loom.Usage{InputTokens: 900, OutputTokens: 80, APICalls: 1},
			call("e", "Edit", loom.ToolError)),
		prompt(at(0, 0), "and this"), reply(at(0, time.Second), "local-model", loom.Usage{InputTokens: 50, OutputTokens: 5, APICalls: 1}))
	e.seed(&loom.Session{UserID: "bob", Key: "cli:bob", Title: "Bob's secret plan", Surface: "cli"},
		prompt(at(2, time.Hour), "bob"), reply(at(2, 2*time.Hour), "claude-opus-4-6", loom.Usage{InputTokens: 987654, APICalls: 1}, call("f", "WebFetch", loom.ToolError)))

	since := today.AddDate(0, 0, -89).Format(time.DateOnly)
	var rep insights.Report
	e.getJSON("/api/v1/usage/insights?tz=UTC&since="+since, e.alice, &rep)
	// The API's report is insights.Build's, as the command line prints it.
	built, err := insights.Build(context.Background(), e.st, insights.Options{UserID: "alice", Since: today.AddDate(0, 0, -89),
		Until: today.AddDate(0, 0, 1), Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(built)
	gotJSON, _ := json.Marshal(rep)
	if string(wantJSON) != string(gotJSON) {
		t.Fatalf("the API's insights differ from insights.Build's:\n%s\n%s", gotJSON, wantJSON)
	}
	if len(rep.Days) != 90 || rep.Totals.Sessions != 2 || rep.Totals.Prompts != 4 || rep.Totals.ToolCalls != 5 || rep.Totals.ToolErrors != 2 ||
		len(rep.Longest) != 2 || len(rep.Costliest) != 2 || rep.Costliest[0].ID != long.ID {
		t.Fatalf("the API: totals %+v, longest %+v, costliest %+v", rep.Totals, rep.Longest, rep.Costliest)
	}
	var active []string
	for _, d := range rep.Days {
		if d.Prompts > 0 {
			active = append(active, d.Date)
		}
	}

	ctx := browser(t)
	do(t, ctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	do(t, ctx, "nav", chromedp.Click(chromedp.CSS(`.top nav a[href="/insights"]`)), chromedp.WaitVisible(chromedp.CSS("#calendar")))
	page := e.ts.URL + "/insights?tz=UTC&days=90"
	do(t, ctx, "page", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#calendar")))
	text := func(sel string) string {
		return eval[string](t, ctx, `document.querySelector('`+sel+`').textContent.trim()`)
	}
	for sel, want := range map[string]string{
		"#total-sessions": human.Count(rep.Totals.Sessions), "#total-prompts": human.Count(rep.Totals.Prompts),
		"#total-replies": human.Count(rep.Totals.Replies), "#total-tokens": human.Count(rep.Totals.Tokens),
		"#total-cost": human.Cost(*rep.Totals.CostUSD), "#active-days": fmt.Sprintf("%d of 90", rep.Totals.ActiveDays),
		"#total-tools": fmt.Sprintf("%d (%d failed)", rep.Totals.ToolCalls, rep.Totals.ToolErrors),
	} {
		if got := strings.Join(strings.Fields(text(sel)), " "); got != want {
			t.Errorf("%s reads %q, the API %q", sel, got, want)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#calendar rect.cal').length`); n != len(rep.Days) {
		t.Errorf("the calendar has %d days, want %d", n, len(rep.Days))
	}
	if got := eval[[]string](t, ctx, `[...document.querySelectorAll('#calendar rect.cal:not(.l0)')].map(r => r.dataset.date)`); !slices.Equal(got, active) {
		t.Errorf("the calendar shades %v, the days with prompts are %v", got, active)
	}
	type row struct {
		Name          string
		Calls, Errors string
	}
	var wantTools []row
	for _, x := range rep.Tools {
		wantTools = append(wantTools, row{x.Name, human.Count(x.Calls), human.Count(x.Errors)})
	}
	gotTools := eval[[]row](t, ctx, `[...document.querySelectorAll('#tools tbody tr')].map(tr => ({Name: tr.cells[0].textContent, Calls: tr.cells[1].textContent, Errors: tr.cells[2].textContent}))`)
	if !reflect.DeepEqual(gotTools, wantTools) {
		t.Errorf("the tools table %v, the API %v", gotTools, wantTools)
	}
	for id, want := range map[string][]string{"mix-models": {"claude-opus-4-6", "claude-haiku-4-5", "local-model"}, "mix-agents": {"cli", "claude-code"}, "mix-projects": {"api", "web"}} {
		if legend := text("#" + id + " .legend"); !containsAll(legend, want) {
			t.Errorf("%s's legend %q lacks one of %v", id, legend, want)
		}
	}
	for _, list := range []struct {
		id   string
		want []insights.Session
	}{{"longest", rep.Longest}, {"costliest", rep.Costliest}} {
		var ids []string
		for _, s := range list.want {
			ids = append(ids, "/s/"+s.ID)
		}
		if got := eval[[]string](t, ctx, `[...document.querySelectorAll('#`+list.id+` tbody a')].map(a => a.getAttribute('href'))`); !slices.Equal(got, ids) {
			t.Errorf("%s links %v, want %v", list.id, got, ids)
		}
	}
	if body := eval[string](t, ctx, `document.body.textContent`); strings.Contains(body, "WebFetch") || strings.Contains(body, "Bob's") || strings.Contains(body, "987,654") {
		t.Errorf("the page shows bob's activity")
	}

	dir := outDir(t)
	for _, w := range []int64{390, 1400} {
		do(t, ctx, fmt.Sprintf("%dpx", w), chromedp.EmulateViewport(w, 900), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#calendar")))
		if d := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); d > 0 {
			t.Errorf("%dpx: the insights page is %dpx wider than the screen", w, d)
		}
		// Twice its cells' size, or as wide as the screen allows.
		if cw := eval[float64](t, ctx, `document.querySelector('#calendar svg').getBoundingClientRect().width`); cw < min(400, 0.75*float64(w)) {
			t.Errorf("%dpx: the calendar is only %.0fpx wide", w, cw)
		}
		screenshot(t, ctx, dir, fmt.Sprintf("insights-%d.png", w))
	}
	// LOOM_DOCS_SCREENSHOT=path writes the wide one for the docs.
	if p := os.Getenv("LOOM_DOCS_SCREENSHOT"); p != "" {
		b, err := os.ReadFile(filepath.Join(dir, "insights-1400.png"))
		if err == nil {
			err = os.WriteFile(p, b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// On a phone the insights calendar, wider than the screen for a year,
// opens on the latest day with prompts, its weekday names in sight:
// never on empty months with the names scrolled away.
func TestBrowserInsightsCalendarOnAPhone(t *testing.T) {
	e := newEnv(t)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	active := today.AddDate(0, 0, -150)
	m := userMsg("start")
	m.CreatedAt = active.Add(9 * time.Hour)
	e.seed(&loom.Session{UserID: "alice", Key: "cli:api", Title: "Old work", Surface: "cli"}, m)

	ctx := browser(t)
	dir := outDir(t)
	do(t, ctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	// A window of 85 to 91 days starts on each weekday once: 13 or 14
	// weeks, whatever today is. Each is at least three quarters of the
	// screen wide (the 90 days' calendar was 276 px of 390 when they
	// started on a Monday).
	for days := 85; days <= 91; days++ {
		page := fmt.Sprintf("%s/insights?tz=UTC&days=%d", e.ts.URL, days)
		do(t, ctx, "390px", chromedp.EmulateViewport(390, 900), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#calendar")))
		if cw := eval[float64](t, ctx, `document.querySelector('#calendar svg').getBoundingClientRect().width`); cw < 0.75*390 {
			t.Errorf("%d days at 390px: the calendar is only %.0fpx wide", days, cw)
		}
	}
	for _, days := range []int{90, 365} {
		page := fmt.Sprintf("%s/insights?tz=UTC&days=%d", e.ts.URL, days)
		do(t, ctx, "390px", chromedp.EmulateViewport(390, 900), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#calendar")))
		// seen says whether an element lies within the scroller's box.
		const seen = `(el => { const b = el.getBoundingClientRect(), s = document.querySelector('.cal-scroll').getBoundingClientRect();
			return b.left >= s.left - 0.5 && b.right <= s.right + 0.5 })`
		t.Logf("%d days: scrollLeft %v of %v, client %v", days,
			eval[float64](t, ctx, `document.querySelector('.cal-scroll').scrollLeft`),
			eval[float64](t, ctx, `document.querySelector('.cal-scroll').scrollWidth`),
			eval[float64](t, ctx, `document.querySelector('.cal-scroll').clientWidth`))
		if !eval[bool](t, ctx, seen+`([...document.querySelectorAll('#calendar text.cal-label')].find(l => l.textContent == 'Mon'))`) {
			t.Errorf("%d days at 390px: the weekday names are scrolled out of sight", days)
		}
		screenshot(t, ctx, dir, fmt.Sprintf("insights-%d-days-390.png", days))
		want := active.Format(time.DateOnly)
		if days < 150 {
			want = today.Format(time.DateOnly)
		}
		if !eval[bool](t, ctx, seen+`(document.querySelector('#calendar rect[data-date="`+want+`"]'))`) {
			t.Errorf("%d days at 390px: the day %s is scrolled out of sight", days, want)
		}
	}
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
