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
