package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

// dashboardFixture stores what the dashboard shows: a session with every
// part type, its sub-agent's session and a fork, and sessions of other
// surfaces and of another user.
type dashboardFixture struct {
	main, sub, fork, tg *loom.Session
}

func seedDashboard(t *testing.T, e *env) dashboardFixture {
	t.Helper()
	var fx dashboardFixture
	api := loom.Project{ID: "0123456789abcdef", Name: "api", Root: "/src/api"}
	t0 := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	t1, t2 := t0.Add(1200*time.Millisecond), t0.Add(2*time.Second)
	childID := loom.NewID()
	fx.main = &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:api", Project: api, Cwd: "/src/api", Title: "Fix the flaky deploy test", Model: "gpt-4o-mini", Provider: "openai"}
	readFile := storetest.CompletedTool("call_1", "read_file", `{"path":"deploy/deploy_test.go"}`,
		`"func TestDeploy(t *testing.T) {\n\tport := os.Getenv(\"KUBELET_PORT\")\n}"`, t1, t2)
	readFile.Title = "deploy_test.go"
	e.seed(fx.main,
		userMsg("Why does `TestDeploy` fail on **CI** only? <script>window.__xss = 1</script>"),
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-4o-mini", Provider: "openai",
			Usage: loom.Usage{InputTokens: 1520, OutputTokens: 312, ReasoningTokens: 120, CostUSD: 0.0021, APICalls: 1},
			Parts: []loom.Part{
				{Type: loom.PartStepStart},
				{Type: loom.PartReasoning, Text: "The test reads the kubelet port from the environment; CI sets it differently."},
				{Type: loom.PartText, Text: "Let me look at the test file first."},
				readFile,
				storetest.CompletedTool("call_2", "agent", `{"name":"ci-log-reader","prompt":"read the CI log"}`, `"the kubelet port is 10255 on CI"`, t2, t2),
				{Type: loom.PartAgent, Name: "ci-log-reader", SessionID: childID},
				{Type: loom.PartStepFinish, Usage: &loom.Usage{InputTokens: 1520, OutputTokens: 312, CostUSD: 0.0021}},
			}},
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-4o-mini", Parts: []loom.Part{{Type: loom.PartText, Text: "The test hard-codes the port:\n\n```go\nport := \"10250\"\n```\n\n- CI uses **10255**\n- locally it is 10250\n\n[kubelet docs](https://kubernetes.io/docs/) and [a trap](javascript:alert(1))"}}},
	)
	fx.sub = e.seed(&loom.Session{ID: childID, UserID: "alice", Kind: loom.KindSubagent, ParentID: fx.main.ID, Project: api, Title: "ci-log-reader: read the CI log"},
		userMsg("read the CI log"), assistantMsg("the kubelet port is 10255 on CI"))
	var err error
	fx.fork, err = e.st.Fork(context.Background(), fx.main.ID, loom.ForkOptions{Turn: 1, Title: "Try pinning the port"})
	if err != nil {
		t.Fatal(err)
	}
	fx.tg = e.seed(&loom.Session{UserID: "alice", Key: "telegram:5551234", Title: "Groceries"}, userMsg("remind me to buy oat milk"), assistantMsg("Noted: oat milk."))
	e.seed(&loom.Session{UserID: "alice", Key: "http:standup"}, userMsg("summarise yesterday's standup about the kubelet upgrade"), assistantMsg("Yesterday: the kubelet upgrade slipped a day."))
	e.seed(&loom.Session{UserID: "bob", Key: "http:bob", Title: "Bob's secret session"}, userMsg("bob's kubelet notes"))
	return fx
}

// The dashboard in a real browser: log in with the link loom serve
// prints, see the sessions across surfaces, open a session with every
// part type, search and follow a hit, watch a message written by another
// store handle appear without a reload, log out and in again, and read it
// all on a phone-sized screen.
func TestBrowserDashboard(t *testing.T) {
	e := newEnv(t)
	fx := seedDashboard(t, e)
	ctx := browser(t)
	dir := outDir(t)

	// Log in with the token link: the login page says whom it logs in
	// as and logs in on a click; then the cookie is set, the token
	// leaves the address bar, and no script can read the cookie.
	do(t, ctx, "open the token link",
		chromedp.Navigate(e.ts.URL+"/?token="+e.alice),
		chromedp.WaitVisible(chromedp.CSS("#link-login")),
	)
	if who := eval[string](t, ctx, "document.querySelector('.link-user').innerText"); who != "alice" {
		t.Errorf("the link's login page names %q, want alice", who)
	}
	if loc := eval[string](t, ctx, "location.href"); strings.Contains(loc, "token") {
		t.Errorf("the token stays in the address bar of the login page: %s", loc)
	}
	do(t, ctx, "log in by link", confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	if loc := eval[string](t, ctx, "location.href"); strings.Contains(loc, "token") {
		t.Errorf("the token stays in the address bar: %s", loc)
	}
	if c := eval[string](t, ctx, "document.cookie"); c != "" {
		t.Errorf("script can read the cookie: %q", c)
	}
	list := eval[string](t, ctx, "document.getElementById('sessions').innerText")
	for _, want := range []string{"Fix the flaky deploy test", "Groceries", "telegram", "http:standup", "Try pinning the port", "fork", "subagent"} {
		if !strings.Contains(list, want) {
			t.Errorf("sessions page lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "Bob") {
		t.Error("alice's sessions page shows bob's session")
	}
	screenshot(t, ctx, dir, "sessions.png")

	// Filters: one surface, then words.
	do(t, ctx, "filter by surface",
		chromedp.SetValue(chromedp.CSS(`select[name="surface"]`), "telegram"),
		chromedp.Submit(chromedp.CSS("form.filters")),
		chromedp.WaitVisible(chromedp.CSS(`#sessions`)),
	)
	if n := eval[int](t, ctx, "document.querySelectorAll('#sessions tbody tr').length"); n != 1 {
		t.Errorf("surface filter shows %d sessions, want 1", n)
	}

	// A session with reasoning, tool calls, a sub-agent and lineage.
	do(t, ctx, "open a session",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#sessions")),
		chromedp.Click(chromedp.Search(`//a[contains(., "Fix the flaky deploy test")]`)),
		chromedp.WaitVisible(chromedp.CSS("#messages .msg")),
	)
	if open := eval[bool](t, ctx, "document.querySelector('details.reasoning').open"); open {
		t.Error("reasoning is expanded before a click")
	}
	do(t, ctx, "expand reasoning and a tool call",
		chromedp.Click(chromedp.CSS("details.reasoning summary")),
		chromedp.Click(chromedp.CSS("details.tool summary")),
		chromedp.WaitVisible(chromedp.CSS("details.tool .io pre")),
	)
	page := eval[string](t, ctx, "document.querySelector('main').innerText")
	for _, want := range []string{"The test reads the kubelet port", "read_file", "completed", "800 ms", `"path": "deploy/deploy_test.go"`, "KUBELET_PORT", "ci-log-reader", "Lineage", "Try pinning the port", "1,520", "$0.0021"} {
		if !strings.Contains(page, want) {
			t.Errorf("session page lacks %q", want)
		}
	}
	if eval[bool](t, ctx, "window.__xss === 1 || !!document.querySelector('.msg script')") {
		t.Error("a script in a message ran or was inserted")
	}
	if !eval[bool](t, ctx, "!!document.querySelector('.md pre code') && !!document.querySelector('.md strong') && !!document.querySelector('.md li')") {
		t.Error("Markdown was not rendered")
	}
	if eval[bool](t, ctx, "[...document.querySelectorAll('.md a')].some(a => a.getAttribute('href') && a.getAttribute('href').startsWith('javascript'))") {
		t.Error("a javascript: link survived")
	}
	if href := eval[string](t, ctx, "document.querySelector('.part.agent a').getAttribute('href')"); href != "/s/"+fx.sub.ID {
		t.Errorf("agent part links to %q", href)
	}
	screenshot(t, ctx, dir, "session.png")

	// The sub-agent's page links back and shows the same tree.
	do(t, ctx, "follow the sub-agent link",
		chromedp.Click(chromedp.CSS(".part.agent a")),
		chromedp.WaitVisible(chromedp.CSS(".lineage")),
	)
	if txt := eval[string](t, ctx, "document.querySelector('.parent').innerText"); !strings.Contains(txt, "Sub-agent of") {
		t.Errorf("sub-agent page: %q", txt)
	}

	// Search from the header box, and follow a hit to its message.
	do(t, ctx, "search",
		chromedp.SetValue(chromedp.CSS(`header .quick input`), "kubelet port"),
		chromedp.Submit(chromedp.CSS("header form.quick")),
		chromedp.WaitVisible(chromedp.CSS("#hits")),
	)
	marks := eval[int](t, ctx, "document.querySelectorAll('#hits mark').length")
	hits := eval[string](t, ctx, "document.getElementById('hits').innerText")
	if marks == 0 || strings.Contains(hits, "\uE000") || strings.Contains(hits, "Bob") {
		t.Errorf("search: %d marks, hits:\n%s", marks, hits)
	}
	screenshot(t, ctx, dir, "search.png")
	do(t, ctx, "follow a hit",
		chromedp.Click(chromedp.CSS("#hits li a.title")),
		chromedp.WaitVisible(chromedp.CSS("#messages")),
	)
	if target := eval[bool](t, ctx, "!!document.querySelector('.msg:target')"); !target {
		t.Errorf("following a hit lands on no message: %s", eval[string](t, ctx, "location.href"))
	}

	// Live: another handle (as another process would) appends to the
	// Telegram session while its page is open.
	do(t, ctx, "open the live session",
		chromedp.Navigate(e.ts.URL+"/s/"+fx.tg.ID),
		chromedp.WaitVisible(chromedp.CSS("#m-2")),
	)
	eval[bool](t, ctx, "window.__noReload = true")
	do(t, ctx, "connect the event stream", chromedp.WaitVisible(chromedp.CSS("#messages[data-connected]")))
	other, err := sqlite.Open(context.Background(), e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s, _ := other.Session(context.Background(), fx.tg.ID)
	if err := other.Append(context.Background(), s, userMsg("and **bread**, please"), assistantMsg("Added bread to the list.")); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "see the new messages", chromedp.WaitVisible(chromedp.CSS("#m-4")))
	if !eval[bool](t, ctx, "window.__noReload === true") {
		t.Error("the page reloaded to show the new message")
	}
	if txt := eval[string](t, ctx, "document.getElementById('m-3').innerText"); !strings.Contains(txt, "bread") {
		t.Errorf("new message reads %q", txt)
	}
	if n := eval[int](t, ctx, "document.querySelectorAll('#messages .msg').length"); n != 4 {
		t.Errorf("%d messages on the page, want 4 (none twice)", n)
	}
	screenshot(t, ctx, dir, "live.png")

	// A phone-sized screen: one column, nothing wider than the screen.
	do(t, ctx, "phone viewport",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(e.ts.URL+"/s/"+fx.main.ID),
		chromedp.WaitVisible(chromedp.CSS("#messages")),
	)
	if w := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); w > 0 {
		t.Errorf("session page is %dpx wider than a phone screen", w)
	}
	screenshot(t, ctx, dir, "phone-session.png")
	do(t, ctx, "phone sessions", chromedp.Navigate(e.ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	if w := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); w > 0 {
		t.Errorf("sessions page is %dpx wider than a phone screen", w)
	}
	screenshot(t, ctx, dir, "phone-sessions.png")
	do(t, ctx, "desktop viewport", chromedp.EmulateViewport(1280, 900))

	// Log out, then log in with the form.
	do(t, ctx, "log out",
		chromedp.Click(chromedp.CSS("form.who button")),
		chromedp.WaitVisible(chromedp.CSS("#token")),
	)
	do(t, ctx, "protected page after logout",
		chromedp.Navigate(e.ts.URL+"/s/"+fx.main.ID),
		chromedp.WaitVisible(chromedp.CSS("#token")),
	)
	screenshot(t, ctx, dir, "login.png")
	do(t, ctx, "log in with the form",
		chromedp.SendKeys(chromedp.CSS("#token"), e.alice),
		chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS("#messages")),
	)
	if loc := eval[string](t, ctx, "location.pathname"); loc != "/s/"+fx.main.ID {
		t.Errorf("after login the browser is at %s, want the page it asked for", loc)
	}
}
