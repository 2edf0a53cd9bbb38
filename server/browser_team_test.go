package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/report"
	"github.com/loomhq/loom/server"
)

// The dashboard over a team's store (loom serve --team): the team page
// lists the members with their sessions, messages, tokens and cost, the
// API's report by member to the cent; a member's link lists their
// sessions alone; the usage page stacks by member; an aggregates-only
// session shows its numbers and no text; the page fits a phone.
func TestBrowserTeamPages(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.Team = &server.TeamConfig{Name: "core", ID: "88bd88b8d9d314e38ad7f580baa94185", Me: "alice"}
	})
	now := time.Now().UTC().Add(-time.Hour)
	reply := func(at time.Time, model string, u loom.Usage, text string) *loom.Message {
		return &loom.Message{Role: loom.RoleAssistant, Provider: "openai", Model: model, Usage: u, CreatedAt: at,
			Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	}
	e.seed(&loom.Session{UserID: "alice", Key: "cli:api:1", Team: "88bd88b8d9d314e38ad7f580baa94185", Member: "alice", Title: "flaky deploy", Surface: "cli"},
		userMsg("why is the deploy flaky"), reply(now, "gpt-4o-mini", loom.Usage{InputTokens: 120000, OutputTokens: 9000}, "pinned the cache key"))
	bob1 := e.seed(&loom.Session{UserID: "alice", Key: "claude-code:abc", Team: "88bd88b8d9d314e38ad7f580baa94185", Member: "bob", Title: "numbat rollout", Surface: "claude-code"},
		userMsg("plan the numbat rollout"), reply(now.Add(-48*time.Hour), "gpt-4o", loom.Usage{InputTokens: 5000, OutputTokens: 700}, "behind a flag"))
	// bob's aggregates-only project: numbers, and a title that says so.
	bob2 := e.seed(&loom.Session{UserID: "alice", Key: "codex:def", Team: "88bd88b8d9d314e38ad7f580baa94185", Member: "bob", Title: "codex session of 2026-03-01 (aggregates only)", Surface: "codex"},
		reply(now.Add(-24*time.Hour), "gpt-4o", loom.Usage{InputTokens: 900, OutputTokens: 3000}, ""))

	var rep report.Report
	e.getJSON("/api/v1/usage?by=month&breakdown=member&tz=UTC", e.alice, &rep)
	want := map[string]float64{}
	for _, row := range rep.Rows {
		for _, p := range row.Breakdown {
			want[p.Key] += p.Cost()
		}
	}
	if len(want) != 2 || want["alice"] == 0 || want["bob"] == 0 {
		t.Fatalf("the API's usage by member: %v", want)
	}

	ctx := browser(t)
	do(t, ctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	do(t, ctx, "nav", chromedp.Click(chromedp.CSS(`.top nav a[href="/team"]`)), chromedp.WaitVisible(chromedp.CSS("#members")))
	type row struct {
		Member, Sessions, Cost string
	}
	rows := eval[[]row](t, ctx, `[...document.querySelectorAll('#members tbody tr')].map(tr => ({Member: tr.dataset.member, Sessions: tr.children[1].textContent, Cost: tr.querySelector('.member-cost').textContent}))`)
	wantRows := []row{{"alice", "1", human.Cost(want["alice"])}, {"bob", "2", human.Cost(want["bob"])}}
	slices.SortFunc(wantRows, func(a, b row) int {
		if want[a.Member] > want[b.Member] {
			return -1
		}
		return 1
	})
	if !slices.Equal(rows, wantRows) {
		t.Errorf("the members: %+v, want %+v", rows, wantRows)
	}
	if got := eval[string](t, ctx, `document.querySelector('#team-cost').textContent`); got != human.Cost(rep.Total.Cost()) {
		t.Errorf("the team's cost %s, the API's %s", got, human.Cost(rep.Total.Cost()))
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#team-sessions tbody tr').length`); got != 3 {
		t.Errorf("the team's sessions: %d rows, want 3", got)
	}

	do(t, ctx, "bob", chromedp.Click(chromedp.CSS(`#members tr[data-member="bob"] a`)), chromedp.WaitVisible(chromedp.CSS(`#members tr[aria-current]`)))
	got := eval[[]string](t, ctx, `[...document.querySelectorAll('#team-sessions tbody tr')].map(tr => tr.dataset.member + ' ' + tr.dataset.id)`)
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values([]string{"bob " + bob1.ID, "bob " + bob2.ID}))) {
		t.Errorf("bob's sessions: %v", got)
	}
	// The aggregates-only session: its numbers, its title, no text.
	do(t, ctx, "aggregates", chromedp.Click(chromedp.CSS(`#team-sessions tr[data-id="`+bob2.ID+`"] a`)), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if body := eval[string](t, ctx, `document.body.textContent`); !strings.Contains(body, "aggregates only") {
		t.Errorf("the aggregates-only session's page: %.300s", body)
	}

	do(t, ctx, "usage", chromedp.Navigate(e.ts.URL+"/usage?tz=UTC"), chromedp.WaitVisible(chromedp.CSS("#chart-cost")))
	legend := eval[string](t, ctx, `document.querySelector('.legend').textContent`)
	if !strings.Contains(legend, "alice") || !strings.Contains(legend, "bob") {
		t.Errorf("the team's usage is not stacked by member: %q", legend)
	}
	if cur := eval[string](t, ctx, `document.querySelector('.usage-toggles a[aria-current]:last-child').textContent`); cur != "by member" {
		t.Errorf("the current split is %q", cur)
	}

	dir := outDir(t)
	for _, w := range []int64{390, 1400} {
		do(t, ctx, fmt.Sprintf("%dpx", w), chromedp.EmulateViewport(w, 900), chromedp.Navigate(e.ts.URL+"/team"), chromedp.WaitVisible(chromedp.CSS("#members")))
		if d := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); d > 0 {
			t.Errorf("%dpx: the team page is %dpx wider than the screen", w, d)
		}
		screenshot(t, ctx, dir, fmt.Sprintf("team-%d.png", w))
	}
}

// Without --team, the dashboard has no team page.
func TestTeamPageOnlyForATeam(t *testing.T) {
	e := newEnv(t)
	if resp, _ := e.request("GET", "/team", e.alice, nil); resp.StatusCode != 404 {
		t.Fatalf("/team of one's own store: %d", resp.StatusCode)
	}
}
