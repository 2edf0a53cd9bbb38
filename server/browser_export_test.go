package server_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/export"
)

// The html export opened from disk, as whoever it was sent to would open
// it: with JavaScript off it reads in full (messages, a tool call with its
// status, reasoning folded away, the sub-agent's session, usage), and
// the HTML a message holds shows as text, without running or loading.
func TestBrowserHTMLExport(t *testing.T) {
	e := newEnv(t)
	fx := seedDashboard(t, e)
	ctx := context.Background()
	hostile := userMsg("Is this safe? <img src=x onerror=\"window.__xss = 2\"> and <script>window.__xss = 3</script>\n\n<img src=y onerror=\"window.__xss = 4\">")
	if err := e.st.Append(ctx, fx.main, hostile); err != nil {
		t.Fatal(err)
	}
	main, err := e.st.Session(ctx, fx.main.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, err := export.Family(ctx, e.st, "alice", main)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := export.Write(&b, export.HTML, data); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "flaky deploy.html")
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// The server goes away: the file needs nothing from it.
	e.ts.Close()

	bctx := browser(t)
	dir := outDir(t)
	do(t, bctx, "open the export with JavaScript off",
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}),
		chromedp.Navigate("file://"+filepath.ToSlash(file)),
		chromedp.WaitVisible(chromedp.CSS("main")),
	)
	if title := eval[string](t, bctx, "document.title"); title != "Fix the flaky deploy test · loom" {
		t.Errorf("title %q", title)
	}
	if n := eval[int](t, bctx, "document.querySelectorAll('details.reasoning[open]').length"); n != 0 {
		t.Errorf("%d reasoning parts open before a click", n)
	}
	do(t, bctx, "unfold reasoning and a tool call without script",
		chromedp.Click(chromedp.CSS("details.reasoning summary")),
		chromedp.Click(chromedp.CSS("details.tool summary")),
		chromedp.WaitVisible(chromedp.CSS("details.tool .io pre")),
	)
	text := eval[string](t, bctx, "document.body.innerText")
	for _, want := range []string{
		"Fix the flaky deploy test", "Why does TestDeploy fail on CI only?", "The test reads the kubelet port",
		"read_file", "completed", "800 ms", `"path": "deploy/deploy_test.go"`, // a tool call, its status and duration
		"Sub-agent ci-log-reader", "ci-log-reader: read the CI log", "the kubelet port is 10255 on CI", // the sub-agent's session
		"Usage", "1,520", "$0.0021", // usage
		`<img src=x onerror="window.__xss = 2">`, "<script>window.__xss = 3</script>", `<img src=y onerror="window.__xss = 4">`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the export does not show %q", want)
		}
	}
	if eval[string](t, bctx, "getComputedStyle(document.querySelector('.badge')).borderRadius") == "0px" {
		t.Error("the inline stylesheet does not apply")
	}
	// The sub-agent link leads inside the file.
	do(t, bctx, "follow the sub-agent link", chromedp.Click(chromedp.CSS(".part.agent a")))
	if h := eval[string](t, bctx, "location.hash"); h != "#session-"+fx.sub.ID {
		t.Errorf("the sub-agent link leads to %q", h)
	}
	screenshot(t, bctx, dir, "export.png")

	// With script on, nothing of a message runs or becomes an element.
	do(t, bctx, "open the export with JavaScript on",
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false})
			return err
		}),
		chromedp.Navigate("file://"+filepath.ToSlash(file)+"?again"),
		chromedp.WaitVisible(chromedp.CSS("main")),
	)
	time.Sleep(200 * time.Millisecond) // what an onerror would run, had an image been made
	if got := eval[string](t, bctx, "String(window.__xss) + ' ' + document.querySelectorAll('img, script, iframe, object').length"); got != "undefined 0" {
		t.Errorf("window.__xss and elements made from a message: %s", got)
	}
}

// The sessions page: a sortable table with the filters, archived
// sessions behind a toggle, imported ones marked; and the session page's
// archive button.
func TestBrowserSessionsTable(t *testing.T) {
	e := newEnv(t)
	fx := seedDashboard(t, e)
	ctx := context.Background()
	imported := e.seed(&loom.Session{UserID: "alice", Key: "cli:imported", Project: fx.main.Project, Title: "Imported from Claude", GitBranch: "fix/port", Model: "claude-x",
		Source: &loom.Source{Tool: "claude-code", Version: "2.1.0", Path: "/home/alice/.claude/projects/api/1.jsonl"}},
		userMsg("one"), assistantMsg("two"), userMsg("three"), assistantMsg("four"), userMsg("five"), assistantMsg("six"))
	bctx := browser(t)
	dir := outDir(t)
	do(t, bctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))

	heads := eval[[]string](t, bctx, "[...document.querySelectorAll('#sessions thead th')].map(th => th.innerText.replace(/[▲▼]/g, '').trim())")
	if got := strings.Join(heads, ","); got != "Title,Surface,Project,Branch,Model,Messages,Cost,Updated" {
		t.Errorf("columns %s", got)
	}
	if s := eval[string](t, bctx, "document.querySelector('#sessions th[aria-sort]').innerText"); !strings.HasPrefix(s, "Updated") {
		t.Errorf("sorted by %q before a click, want Updated", s)
	}
	rows := func() []string {
		return eval[[]string](t, bctx, "[...document.querySelectorAll('#sessions tbody tr')].map(tr => tr.querySelector('td.title a').innerText)")
	}
	if r := rows(); len(r) != 6 || r[0] != "Imported from Claude" {
		t.Errorf("rows newest first: %q", r)
	}
	row := eval[string](t, bctx, "document.querySelector('#sessions tr[data-id=\""+imported.ID+"\"]').className + ' | ' + document.querySelector('#sessions tr[data-id=\""+imported.ID+"\"]').innerText")
	for _, want := range []string{"imported", "imported · claude-code", "fix/port", "claude-x", "6"} {
		if !strings.Contains(row, want) {
			t.Errorf("the imported session's row %q lacks %q", row, want)
		}
	}
	if n := eval[int](t, bctx, "document.querySelectorAll('#sessions tr.imported').length"); n != 1 {
		t.Errorf("%d rows marked imported, want 1", n)
	}
	screenshot(t, bctx, dir, "table.png")

	// Sort by a column, then the other way round; the filters stay.
	do(t, bctx, "filter to the api project, by messages",
		chromedp.SetValue(chromedp.CSS(`select[name="project"]`), fx.main.Project.ID),
		chromedp.Submit(chromedp.CSS("form.filters")),
		chromedp.WaitVisible(chromedp.CSS("#sessions")),
		chromedp.Click(chromedp.Search(`//th/a[contains(., "Messages")]`)),
		chromedp.WaitVisible(chromedp.CSS(`th[aria-sort="descending"]`)),
	)
	counts := func() string {
		return strings.Join(eval[[]string](t, bctx, "[...document.querySelectorAll('#sessions tbody tr')].map(tr => tr.querySelector('td.num').innerText)"), " ")
	}
	if got := counts(); got != "6 3 3 2" {
		t.Errorf("by messages, most first: %s", got)
	}
	if loc := eval[string](t, bctx, "location.search"); !strings.Contains(loc, "project="+fx.main.Project.ID) || !strings.Contains(loc, "sort=-messages") {
		t.Errorf("sorting lost the filter: %s", loc)
	}
	do(t, bctx, "by messages, fewest first",
		chromedp.Click(chromedp.Search(`//th/a[contains(., "Messages")]`)),
		chromedp.WaitVisible(chromedp.CSS(`th[aria-sort="ascending"]`)),
	)
	if got := counts(); got != "2 3 3 6" {
		t.Errorf("by messages, fewest first: %s", got)
	}
	do(t, bctx, "by title",
		chromedp.Click(chromedp.Search(`//th/a[contains(., "Title")]`)),
		chromedp.WaitVisible(chromedp.CSS(`th[aria-sort="ascending"]`)),
	)
	if r := strings.Join(rows(), "|"); r != "ci-log-reader: read the CI log|Fix the flaky deploy test|Imported from Claude|Try pinning the port" {
		t.Errorf("by title: %s", r)
	}

	// Archive the Telegram session from its page: it leaves the table and
	// shows behind the archived toggle, marked; unarchive brings it back.
	do(t, bctx, "archive from the session page",
		chromedp.Navigate(e.ts.URL+"/s/"+fx.tg.ID),
		chromedp.WaitVisible(chromedp.CSS("#messages")),
		chromedp.Click(chromedp.Search(`//form[contains(@class, "archive")]/button[normalize-space(.)="Archive"]`)),
		chromedp.WaitVisible(chromedp.CSS(".session-head .badge.archived")),
	)
	if got, err := e.st.Session(ctx, fx.tg.ID); err != nil || got.ArchivedAt == nil {
		t.Fatalf("the archive button left %+v, %v", got, err)
	}
	if href := eval[string](t, bctx, "document.getElementById('download-html').getAttribute('href')"); href != "/s/"+fx.tg.ID+"/export.html" {
		t.Errorf("Download HTML links to %q", href)
	}
	do(t, bctx, "the table without it", chromedp.Navigate(e.ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	if r := rows(); len(r) != 5 || strings.Contains(strings.Join(r, "|"), "Groceries") {
		t.Errorf("archived session still listed: %q", r)
	}
	do(t, bctx, "the archived toggle",
		chromedp.Click(chromedp.CSS(`input[name="archived"]`)),
		chromedp.Submit(chromedp.CSS("form.filters")),
		chromedp.WaitVisible(chromedp.CSS("#sessions tr.archived")),
	)
	if r := rows(); len(r) != 1 || r[0] != "Groceries" {
		t.Errorf("archived sessions: %q", r)
	}
	if b := eval[string](t, bctx, "document.querySelector('#sessions tr.archived .badge.archived').innerText"); b != "archived" {
		t.Errorf("archived badge %q", b)
	}
	screenshot(t, bctx, dir, "archived.png")
	do(t, bctx, "unarchive",
		chromedp.Click(chromedp.Search(`//td[contains(@class, "title")]/a[.="Groceries"]`)),
		chromedp.WaitVisible(chromedp.CSS("#messages")),
		chromedp.Click(chromedp.Search(`//form[contains(@class, "archive")]/button[normalize-space(.)="Unarchive"]`)),
		chromedp.WaitVisible(chromedp.Search(`//form[contains(@class, "archive")]/button[normalize-space(.)="Archive"]`)),
	)
	if got, _ := e.st.Session(ctx, fx.tg.ID); got.ArchivedAt != nil {
		t.Error("the unarchive button left the session archived")
	}
}
