package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/report"
)

// The usage page draws a bar for each day with usage in both charts,
// with JavaScript off too; the totals it shows are the API's report's to
// the token and the cent; the active block and the costliest sessions are
// there; and the page fits screens from a phone to a wide desktop.
func TestBrowserUsagePage(t *testing.T) {
	e := newEnv(t)
	now := time.Now().UTC()
	reply := func(at time.Time, provider, model string, u loom.Usage) *loom.Message {
		return &loom.Message{Role: loom.RoleAssistant, Provider: provider, Model: model, Usage: u, CreatedAt: at,
			Parts: []loom.Part{{Type: loom.PartText, Text: "done"}}}
	}
	day := func(n int) time.Time { return now.AddDate(0, 0, -n) }
	// Ten minutes ago, unless that was yesterday (a run just after
	// midnight UTC): then the day's first instant, so today has its own bar.
	recent := now.Add(-10 * time.Minute)
	if today := now.Truncate(24 * time.Hour); recent.Before(today) {
		recent = today
	}
	cli := e.seed(&loom.Session{UserID: "alice", Key: "cli:usage", Title: "Costly work", Surface: "cli"},
		reply(day(6), "openai", "gpt-4o-mini", loom.Usage{InputTokens: 120000, OutputTokens: 9000, CostUSD: 0.0234}),
		reply(day(3), "openai", "gpt-4o-mini", loom.Usage{InputTokens: 5000, OutputTokens: 700, CacheReadTokens: 2000}),
		reply(recent, "anthropic", "claude-sonnet-4-5", loom.Usage{InputTokens: 300, OutputTokens: 4000, CacheReadTokens: 50000, CacheWriteTokens: 8000}),
	)
	e.seed(&loom.Session{UserID: "alice", Key: "codex:usage", Title: "Imported", Surface: "codex"},
		reply(day(3), "anthropic", "claude-sonnet-4-5", loom.Usage{InputTokens: 900, OutputTokens: 3000, CacheWriteTokens: 12000}),
		reply(day(1), "local", "no-price-model", loom.Usage{InputTokens: 7000, OutputTokens: 100}),
	)
	// Another user's usage is not on alice's page.
	e.seed(&loom.Session{UserID: "bob", Key: "cli:bob", Surface: "cli"},
		reply(day(2), "openai", "gpt-4o-mini", loom.Usage{InputTokens: 999999, OutputTokens: 1}))

	since := now.AddDate(0, 0, -29).Format("2006-01-02")
	var rep report.Report
	e.getJSON("/api/v1/usage?by=day&tz=UTC&since="+since, e.alice, &rep)
	if len(rep.Rows) != 4 {
		t.Fatalf("the API reports %d days, want 4: %+v", len(rep.Rows), rep.Rows)
	}
	var costDays, tokenDays []string
	for _, r := range rep.Rows {
		tokenDays = append(tokenDays, r.Period)
		if r.Cost() > 0 {
			costDays = append(costDays, r.Period)
		}
	}

	ctx := browser(t)
	do(t, ctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	do(t, ctx, "nav", chromedp.Click(chromedp.CSS(`.top nav a[href="/usage"]`)), chromedp.WaitVisible(chromedp.CSS("#block")))
	page := e.ts.URL + "/usage?tz=UTC&days=30"
	check := func(what string) {
		t.Helper()
		bars := func(chart string) []string {
			return eval[[]string](t, ctx, `[...document.querySelectorAll('#chart-`+chart+` g.day')].filter(g => g.querySelectorAll('rect').length > 0).map(g => g.dataset.day)`)
		}
		if got := bars("cost"); !slices.Equal(got, costDays) {
			t.Errorf("%s: cost bars on %v, want %v", what, got, costDays)
		}
		if got := bars("tokens"); !slices.Equal(got, tokenDays) {
			t.Errorf("%s: token bars on %v, want %v", what, got, tokenDays)
		}
		text := func(sel string) string {
			return eval[string](t, ctx, `document.querySelector('`+sel+`').textContent.trim()`)
		}
		if got, want := text("#total-tokens"), human.Count(rep.Total.TotalTokens); got != want {
			t.Errorf("%s: the page's total is %s tokens, the API's %s", what, got, want)
		}
		if got, want := text("#total-cost"), human.Cost(rep.Total.Cost()); got != want {
			t.Errorf("%s: the page's total cost is %s, the API's %s", what, got, want)
		}
		if got := eval[[]string](t, ctx, `[...document.querySelectorAll('#usage-days tbody td:first-child')].map(td => td.textContent)`); !slices.Equal(got, tokenDays) {
			t.Errorf("%s: the table's days are %v, want %v", what, got, tokenDays)
		}
	}
	for _, by := range []string{"agent", "model"} {
		do(t, ctx, by, chromedp.Navigate(page+"&by="+by), chromedp.WaitVisible(chromedp.CSS("#chart-cost")))
		check("by " + by)
		legend := eval[string](t, ctx, `document.querySelector('.legend').textContent`)
		for _, want := range map[string][]string{"agent": {"cli", "codex"}, "model": {"gpt-4o-mini", "claude-sonnet-4-5", "no-price-model"}}[by] {
			if !strings.Contains(legend, want) {
				t.Errorf("by %s: the legend %q lacks %s", by, legend, want)
			}
		}
	}
	if got := eval[string](t, ctx, `document.querySelector('#block-tokens').textContent`); got != human.Count(300+4000+50000+8000) {
		t.Errorf("the active block has %s tokens, want %s", got, human.Count(62300))
	}
	if got := eval[string](t, ctx, `document.querySelector('#costliest a').getAttribute('href')`); got != "/s/"+cli.ID {
		t.Errorf("the costliest session links to %s, want /s/%s", got, cli.ID)
	}
	if body := eval[string](t, ctx, `document.body.textContent`); !strings.Contains(body, "1 model unpriced: no-price-model") || strings.Contains(body, "999,999") {
		t.Errorf("the page does not name the unpriced model, or shows bob's usage")
	}

	dir := outDir(t)
	for _, w := range []int64{390, 1400, 1920} {
		do(t, ctx, fmt.Sprintf("%dpx", w), chromedp.EmulateViewport(w, 900), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#chart-cost")))
		if d := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); d > 0 {
			t.Errorf("%dpx: the usage page is %dpx wider than the screen", w, d)
		}
		if bw := eval[float64](t, ctx, `document.querySelector('#chart-cost svg').getBoundingClientRect().width`); bw < float64(w)/2 {
			t.Errorf("%dpx: the chart is only %.0fpx wide", w, bw)
		}
		screenshot(t, ctx, dir, fmt.Sprintf("usage-%d.png", w))
	}
	// Dark mode: the bars take the dark palette, as the rest of the page.
	do(t, ctx, "dark", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	}), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#chart-cost")))
	if fill := eval[string](t, ctx, `getComputedStyle(document.querySelector('#chart-cost rect.s0')).fill`); fill != "rgb(116, 143, 252)" {
		t.Errorf("in dark mode the first series is drawn in %s", fill)
	}
	screenshot(t, ctx, dir, "usage-dark.png")

	noScript := func(off bool) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
			return err
		})
	}
	do(t, ctx, "no script", noScript(true), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#chart-cost")))
	check("without JavaScript")
	do(t, ctx, "script back", noScript(false))
}
