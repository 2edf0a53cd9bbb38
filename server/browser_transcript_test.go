package server_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/export"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/share"
)

// toolHeavy is a real Claude Code session (testdata/agent-sessions,
// spotter's tool_heavy.jsonl) with six tool calls, and what a terminal
// shows of each: what it was given and the first line of its result, as
// read from the file by hand.
var toolHeavy = struct {
	file  string
	calls [][2]string
}{
	file: "../testdata/agent-sessions/claude-code/spotter/tool_heavy.jsonl",
	calls: [][2]string{
		{"$ mix phx.server", "Command running in background with ID: bae407b."},
		{"$ tail -5 /tmp/claude-1000/-home-marco-projects-spotter/tasks/bae407b.output", "Serializer: Phoenix.Socket.V2.JSONSerializer"},
		{"xterm.js scroll not working embedded page captures scroll events", `Web search results for query: "xterm.js scroll not working`},
		{"assets/js/**/*.js", "/home/marco/projects/spotter/assets/js/app.js"},
		{"/home/marco/projects/spotter/assets/js/app.js", `import "phoenix_html"`},
		{"https://github.com/xtermjs/xterm.js/issues/1343", "# Scroll Issues in xterm.js"},
	},
}

// importToolHeavy imports toolHeavy's file for alice and returns the
// session with its messages.
func importToolHeavy(t *testing.T, e *env) (*loom.Session, []*loom.Message) {
	t.Helper()
	ctx := context.Background()
	im := &importer.Importer{Store: e.st, UserID: "alice"}
	if _, err := im.Run(ctx, []importer.Target{{Format: claudecode.New(), Roots: []string{toolHeavy.file}, Explicit: true}}); err != nil {
		t.Fatal(err)
	}
	ss, err := e.st.Sessions(ctx, loom.SessionFilter{UserID: "alice"})
	if err != nil || len(ss) != 1 {
		t.Fatalf("imported sessions: %d, %v", len(ss), err)
	}
	msgs, err := e.st.Messages(ctx, ss[0].ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return ss[0], msgs
}

// checkToolCallsInline fails unless every tool call of toolHeavy shows,
// folded, what it was given and the start of its result, and a click
// shows the whole result in place of the start.
func checkToolCallsInline(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	folded := eval[[]string](t, ctx, `[...document.querySelectorAll('details.tool')].filter(d => !d.open).map(d => d.innerText)`)
	if len(folded) != len(toolHeavy.calls) {
		t.Fatalf("%s: %d folded tool calls, want %d", page, len(folded), len(toolHeavy.calls))
	}
	for _, c := range toolHeavy.calls {
		found := false
		for _, f := range folded {
			found = found || strings.Contains(f, c[0]) && strings.Contains(f, c[1])
		}
		if !found {
			t.Errorf("%s: no tool call shows %q and %q without a click; they show:\n%s", page, c[0], c[1], strings.Join(folded, "\n---\n"))
		}
	}
	if n := eval[int](t, ctx, `[...document.querySelectorAll('details.tool .tool-peek')].filter(p => p.offsetHeight > 0).length`); n != len(toolHeavy.calls) {
		t.Errorf("%s: %d of %d results' starts are visible", page, n, len(toolHeavy.calls))
	}
	// The Read of app.js: its start inline, "more lines" said, and the
	// whole file one click away.
	read := `[...document.querySelectorAll('details.tool')].find(d => d.querySelector('.tool-input') && d.querySelector('.tool-input').innerText.endsWith('assets/js/app.js'))`
	if more := eval[string](t, ctx, read+`.querySelector('.tool-peek .more').innerText`); !strings.Contains(more, "more lines") {
		t.Errorf("%s: the start of a long result does not say more lines follow: %q", page, more)
	}
	eval[bool](t, ctx, "("+read+").querySelector('summary').click(), true")
	if whole := eval[string](t, ctx, read+`.innerText`); !strings.Contains(whole, "liveSocket.connect()") {
		t.Errorf("%s: a click does not show the whole result:\n%s", page, whole)
	}
	if eval[bool](t, ctx, read+`.querySelector('.tool-peek').offsetHeight > 0`) {
		t.Errorf("%s: the start of the result stays above the whole of it once opened", page)
	}
	if d := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); d > 0 {
		t.Errorf("%s: the page is %dpx wider than the screen", page, d)
	}
}

// A transcript reads like the terminal did: on the session page, in the
// HTML export and on a share link's page, each tool call of a real
// Claude Code session shows without a click its command, file, pattern,
// query or address and the first lines of its result, and one click
// shows the whole; on a phone and on a desktop (screenshots in the
// test's output directory).
func TestBrowserToolCallsInline(t *testing.T) {
	e := newEnv(t)
	s, msgs := importToolHeavy(t, e)
	ctx := context.Background()

	data, err := export.Family(ctx, e.st, "alice", s)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := export.Write(&b, export.HTML, data); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tool heavy.html")
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _, err := share.Build(s, msgs, share.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blob, key, err := share.Seal(p)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := (&share.Client{URL: e.ts.URL, Token: e.alice}).Create(ctx, blob, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}

	bctx := browser(t)
	dir := outDir(t)
	do(t, bctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	for _, w := range []int64{390, 1400} {
		for _, pg := range []struct{ name, url, ready string }{
			{"session page", e.ts.URL + "/s/" + s.ID, "#messages"},
			{"html export", "file://" + filepath.ToSlash(file), ".messages"},
			{"share page", share.Link(e.ts.URL, sh.ID, key), "#messages article"},
		} {
			name := fmt.Sprintf("%s at %dpx", pg.name, w)
			do(t, bctx, name, chromedp.EmulateViewport(w, 900), chromedp.Navigate(pg.url), chromedp.WaitVisible(chromedp.CSS(pg.ready)))
			screenshot(t, bctx, dir, fmt.Sprintf("%s-%d.png", strings.ReplaceAll(pg.name, " ", "-"), w))
			checkToolCallsInline(t, bctx, name)
		}
	}
}
