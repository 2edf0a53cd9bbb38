package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/internal/testkit/gittest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/server"
)

// gitRepo is a real git work tree in a temporary directory (its path
// with symbolic links resolved), whose commits are made at a clock the
// test moves.
type gitRepo struct {
	t     *testing.T
	dir   string
	clock time.Time
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	return &gitRepo{t: t, dir: gittest.Init(t), clock: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	return gittest.Git(r.t, r.dir, r.clock, args...)
}

func (r *gitRepo) write(rel, content string) {
	r.t.Helper()
	gittest.Write(r.t, r.dir, rel, content)
}

func (r *gitRepo) commit(msg string) {
	r.t.Helper()
	r.clock = r.clock.Add(time.Minute)
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
}

// edit stores a turn of s whose reply calls Claude Code's Edit on rel
// (old by new), then changes the file as the tool did.
func (r *gitRepo) edit(e *env, s *loom.Session, prompt, rel, old, new string) {
	r.t.Helper()
	r.clock = r.clock.Add(time.Minute)
	p := filepath.Join(r.dir, rel)
	cur, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(cur), old) {
		r.t.Fatalf("%s does not hold %q (%v)", rel, old, err)
	}
	in, _ := json.Marshal(map[string]string{"file_path": p, "old_string": old, "new_string": new})
	ask := &loom.Message{Role: loom.RoleUser, CreatedAt: r.clock.Add(-time.Second), Parts: []loom.Part{{Type: loom.PartText, Text: prompt}}}
	reply := &loom.Message{Role: loom.RoleAssistant, Model: s.Model, Provider: "anthropic", CreatedAt: r.clock, Parts: []loom.Part{
		{Type: loom.PartText, Text: "Changing " + rel + "."},
		{Type: loom.PartTool, CallID: loom.NewID(), Name: "Edit", Status: loom.ToolCompleted, Input: in, Output: json.RawMessage(`"done"`)}}}
	if err := e.st.Append(context.Background(), s, ask, reply); err != nil {
		r.t.Fatal(err)
	}
	r.write(rel, strings.Replace(string(cur), old, new, 1))
}

// blameWorld is a repository whose file calc.go two of alice's
// sessions edited between a human's commits, served with the blame
// page offered to alice.
type blameWorld struct {
	e      *env
	repo   *gitRepo
	file   string
	a, b   *loom.Session
	secret string
	// cache is the server's line-age cache directory.
	cache string
}

func newBlameWorld(t *testing.T) *blameWorld {
	t.Helper()
	cache := t.TempDir()
	e := newEnv(t, func(c *server.Config) { c.Blame = &server.BlameConfig{Owner: "alice", Cache: cache} })
	r := newGitRepo(t)
	w := &blameWorld{e: e, repo: r, file: filepath.Join(r.dir, "calc.go"), secret: secretstest.New(60).Secret("github-token").Value, cache: cache}
	r.write("calc.go", "package calc\n\n// Header names the package for the logs.\nfunc Header() string { return \"calculator package header\" }\n")
	r.commit("start")
	p, err := paths.DetectProject(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.a = &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "claude-code:tok", Title: "Add the tokenizer", Surface: "claude-code",
		Project: p, Cwd: r.dir, Model: "claude-sonnet-4-5", Source: &loom.Source{Tool: "claude-code"}}
	header := "func Header() string { return \"calculator package header\" }\n"
	r.edit(e, w.a, "Add a Tokens function that splits a line into words (the CI token is "+w.secret+")", "calc.go", header,
		header+"\n// Tokens splits a line into its words.\nfunc Tokens(line string) []string {\n\treturn strings.Fields(line)\n}\n")
	r.commit("tokens")
	w.b = &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:count", Title: "Count the words", Surface: "cli",
		Project: p, Cwd: r.dir, Model: "claude-opus-4-6"}
	e.seed(w.b, userMsg("hello"), assistantMsg("Hello."))
	tokens := "\treturn strings.Fields(line)\n}\n"
	r.edit(e, w.b, "Now add a Count function beside Tokens", "calc.go", tokens,
		tokens+"\n// Count counts the words of a line.\nfunc Count(line string) int {\n\treturn len(Tokens(line))\n}\n")
	r.commit("count")
	cur, err := os.ReadFile(w.file)
	if err != nil {
		t.Fatal(err)
	}
	r.write("calc.go", string(cur)+"\n// Human wrote this note about the package.\n")
	r.commit("note")
	return w
}

func blamePath(path string) string { return "/api/v1/blame?path=" + url.QueryEscape(path) }

// The blame page shows each line of a file of a real git repository
// with who wrote it — the agent's lines of a session's Edit call
// attributed to that session and turn, the human's lines as theirs —
// grouped in ranges that link to the session's page at the message of
// the edit, with the turn's prompt through the secrets gate, and the
// share of the lines by kind and agent; GET /api/v1/blame gives the
// same lines as loom blame --json; the page fits screens 390 and 1400
// pixels wide.
func TestBrowserBlamePage(t *testing.T) {
	w := newBlameWorld(t)
	e := w.e

	// The API answers what package blame answers, as loom blame --json
	// prints it.
	var got blame.Result
	e.getJSON(blamePath(w.file), e.alice, &got)
	want, err := (&blame.Blamer{Store: e.st, Roots: e.st, Versions: e.st, UserID: "alice"}).File(context.Background(), w.file, "")
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("the API's blame differs from package blame's:\n%s\n%s", gotJSON, wantJSON)
	}
	who := map[string]string{}
	line := map[string]blame.Line{}
	for _, l := range got.Lines {
		line[l.Text] = l
		who[l.Text] = l.Kind
		if l.SessionID != "" {
			who[l.Text] += fmt.Sprintf(" %s t%d", l.SessionID, l.Turn)
		}
	}
	for text, w := range map[string]string{
		"// Header names the package for the logs.":   "human",
		"func Tokens(line string) []string {":         "agent " + w.a.ID + " t1",
		"// Tokens splits a line into its words.":     "agent " + w.a.ID + " t1",
		"func Count(line string) int {":               "agent " + w.b.ID + " t2",
		"\treturn len(Tokens(line))":                  "agent " + w.b.ID + " t2",
		"// Human wrote this note about the package.": "human",
	} {
		if who[text] != w {
			t.Errorf("line %q: %q, want %q", text, who[text], w)
		}
	}
	if l := line["func Tokens(line string) []string {"]; l.Agent != "claude-code" || l.Model != "claude-sonnet-4-5" || l.Seq != 2 {
		t.Errorf("the tokenizer's line: %+v", l)
	}
	var part blame.Result
	e.getJSON(blamePath(w.file)+"&lines=3-4", e.alice, &part)
	if len(part.Lines) != 2 || part.Lines[0].N != 3 || part.Lines[1].Text != want.Lines[3].Text {
		t.Errorf("lines=3-4 answers %+v", part.Lines)
	}
	var old blame.Result
	e.getJSON(blamePath(w.file)+"&rev=HEAD~1", e.alice, &old)
	if old.Revision != "HEAD~1" || len(old.Lines) != len(want.Lines)-2 || old.Lines[len(old.Lines)-1].SessionID != w.b.ID {
		t.Errorf("rev=HEAD~1 answers revision %q, %d lines, the last %+v", old.Revision, len(old.Lines), old.Lines[len(old.Lines)-1])
	}

	ctx := browser(t)
	do(t, ctx, "log in", chromedp.Navigate(e.ts.URL+"/?token="+e.alice), confirmLink(), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	do(t, ctx, "nav", chromedp.Click(chromedp.CSS(`.top nav a[href="/blame"]`)), chromedp.WaitVisible(chromedp.CSS(".blame-form")))
	if roots := eval[string](t, ctx, `document.querySelector('.blame-roots').textContent`); !strings.Contains(roots, w.repo.dir) {
		t.Errorf("the form lists the roots %q, not the repository's %s", roots, w.repo.dir)
	}
	do(t, ctx, "blame", chromedp.SendKeys(chromedp.CSS(`input[name="path"]`), w.file), chromedp.Submit(chromedp.CSS(`input[name="path"]`)),
		chromedp.WaitVisible(chromedp.CSS("#blame")))
	page := e.ts.URL + "/blame?path=" + url.QueryEscape(w.file)

	// Every line of the API is on the page, in a range of its kind and
	// session; each range of a session links to it at the edit.
	type pageLine struct {
		N                     int
		Text, Kind, Session   string
		Turn                  string
		Href, Prompt, Section string
	}
	lines := eval[[]pageLine](t, ctx, `[...document.querySelectorAll('#blame tr')].map(tr => {
		const s = tr.closest('section.brange'), a = s.querySelector('a.session'), p = s.querySelector('.prompt');
		return {N: +tr.id.slice(1), Text: tr.querySelector('td.src').textContent, Kind: s.dataset.kind, Session: s.dataset.session || '',
			Turn: s.dataset.turn || '', Href: a ? a.getAttribute('href') : '', Prompt: p ? p.textContent : '', Section: s.dataset.from + '-' + s.dataset.to};
	})`)
	if len(lines) != len(got.Lines) {
		t.Fatalf("the page shows %d lines, the API %d", len(lines), len(got.Lines))
	}
	sections := map[string]bool{}
	for i, pl := range lines {
		l := got.Lines[i]
		turn := ""
		if l.SessionID != "" {
			turn = fmt.Sprint(l.Turn)
		}
		if pl.N != l.N || pl.Text != l.Text || pl.Kind != l.Kind || pl.Session != l.SessionID || pl.Turn != turn {
			t.Errorf("line %d on the page: %+v; the API: %+v", i+1, pl, l)
		}
		if l.SessionID != "" {
			if want := fmt.Sprintf("/s/%s#m-%d", l.SessionID, l.Seq); pl.Href != want {
				t.Errorf("line %d links to %q, want %q", l.N, pl.Href, want)
			}
		}
		sections[pl.Section] = true
	}
	if len(sections) < 4 || len(sections) > 6 {
		t.Errorf("the page groups the %d lines in %d ranges: %v", len(lines), len(sections), sections)
	}
	tok := lines[line["func Tokens(line string) []string {"].N-1]
	if !strings.Contains(tok.Prompt, "Add a Tokens function") || !strings.Contains(tok.Prompt, "[REDACTED:") {
		t.Errorf("the tokenizer's range shows the prompt %q, not the turn's, redacted", tok.Prompt)
	}
	body := eval[string](t, ctx, `document.body.textContent`)
	if strings.Contains(body, w.secret) {
		t.Errorf("the page shows the secret of the prompt")
	}
	tally := want.Tally()
	for sel, n := range map[string]int{"#blame-lines": tally.Total, "#blame-agent": tally.Agent, "#blame-human": tally.Human} {
		if got := strings.TrimSpace(eval[string](t, ctx, `document.querySelector('`+sel+`').textContent`)); got != fmt.Sprint(n) {
			t.Errorf("%s reads %q, want %d", sel, got, n)
		}
	}
	if legend := eval[string](t, ctx, `document.querySelector('#blame-agents .legend').textContent`); !containsAll(legend, []string{"claude-code", "loom"}) {
		t.Errorf("the agents' legend %q lacks claude-code or loom", legend)
	}
	if got := eval[[]string](t, ctx, `[...document.querySelectorAll('#blame-sessions tbody tr')].map(tr => tr.dataset.id)`); !slices.Contains(got, w.a.ID) || !slices.Contains(got, w.b.ID) {
		t.Errorf("the sessions table lists %v", got)
	}

	// The range's link opens the session at the message of the edit.
	do(t, ctx, "follow", chromedp.Click(chromedp.CSS(`section.brange[data-session="`+w.b.ID+`"] a.session`)), chromedp.WaitVisible(chromedp.CSS("#m-4")))
	if at := eval[string](t, ctx, `location.pathname + location.hash`); at != "/s/"+w.b.ID+"#m-4" {
		t.Errorf("the link led to %s", at)
	}
	if text := eval[string](t, ctx, `document.querySelector('#m-4').textContent`); !strings.Contains(text, "Edit") {
		t.Errorf("message 4 of the session is not the edit: %q", text)
	}

	// The session page links the files its turns' edits wrote to their
	// blame.
	dir := outDir(t)
	screenshot(t, ctx, dir, "session-edited.png")
	type edited struct{ Turn, Name, Href string }
	if got := eval[[]edited](t, ctx, `[...document.querySelectorAll('#edited li')].map(li => ({Turn: li.querySelector('.muted').textContent, Name: li.querySelector('a').textContent, Href: li.querySelector('a').getAttribute('href')}))`); len(got) != 1 ||
		got[0] != (edited{"turn 2", "calc.go", "/blame?path=" + url.QueryEscape(w.file)}) {
		t.Errorf("the session page links the edited files %+v", got)
	}
	do(t, ctx, "back to blame", chromedp.Click(chromedp.CSS(`#edited a`)), chromedp.WaitVisible(chromedp.CSS("#blame")))

	// A path outside every project of alice's sessions is refused with
	// one clear line, beside the form.
	other := newGitRepo(t)
	other.write("secret.go", "package secret\n")
	other.commit("x")
	do(t, ctx, "outside", chromedp.Navigate(e.ts.URL+"/blame?path="+url.QueryEscape(filepath.Join(other.dir, "secret.go"))), chromedp.WaitVisible(chromedp.CSS("#blame-error")))
	if msg := eval[string](t, ctx, `document.querySelector('#blame-error').textContent`); !strings.Contains(msg, "not under the root of a project your sessions worked in") {
		t.Errorf("the page says %q of a file outside the projects", msg)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#blame').length`); n != 0 {
		t.Errorf("the page blames a file outside the projects")
	}

	for _, wd := range []int64{390, 1400} {
		do(t, ctx, fmt.Sprintf("%dpx", wd), chromedp.EmulateViewport(wd, 900), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#blame")))
		if d := eval[int](t, ctx, "document.documentElement.scrollWidth - document.documentElement.clientWidth"); d > 0 {
			t.Errorf("%dpx: the blame page is %dpx wider than the screen", wd, d)
		}
		if out := eval[[]string](t, ctx, `[...document.querySelectorAll('#blame, .brange, .card, .table-wrap')].filter(x => x.scrollWidth > x.clientWidth + 1).map(x => x.className + ': ' + (x.scrollWidth - x.clientWidth) + 'px')`); len(out) > 0 {
			t.Errorf("%dpx: content runs out of its box: %v", wd, out)
		}
		screenshot(t, ctx, dir, fmt.Sprintf("blame-%d.png", wd))
	}
}

// The server keeps the ages git blame gave a file's lines in the cache
// directory it is given, as loom blame does, and a file viewed again
// is answered from there the same.
func TestBlameCache(t *testing.T) {
	w := newBlameWorld(t)
	var first, again blame.Result
	w.e.getJSON(blamePath(w.file), w.e.alice, &first)
	entries, err := filepath.Glob(filepath.Join(w.cache, "*.ages"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("the cache holds %v (%v), want calc.go's entry", entries, err)
	}
	w.e.getJSON(blamePath(w.file), w.e.alice, &again)
	a, _ := json.Marshal(first)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Errorf("blamed again through the cache:\n%s\nfirst:\n%s", b, a)
	}
}

// GET /api/v1/blame and the page refuse what they must: another user's
// token, a path outside every project of the owner's sessions (another
// repository, a way out by .., a symbolic link out of the project, a
// file that does not exist there), a relative path, a revision that is
// an option; and a server not told to offer blame has neither.
func TestBlameRefuses(t *testing.T) {
	w := newBlameWorld(t)
	e := w.e
	other := newGitRepo(t)
	other.write("secret.go", "package secret\n")
	other.commit("x")
	outside := filepath.Join(other.dir, "secret.go")
	if err := os.Mkdir(filepath.Join(w.repo.dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.repo.dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other.dir, filepath.Join(w.repo.dir, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(w.repo.dir, outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what, path, token string
		status            int
		code              string
	}{
		{"bob's token", blamePath(w.file), e.bob, 403, "forbidden"},
		{"another repository", blamePath(outside), e.alice, 403, "forbidden"},
		{"a way out by ..", blamePath(filepath.Join(w.repo.dir, rel)), e.alice, 403, "forbidden"},
		{"a way out by .. unclean", blamePath(w.repo.dir + "/" + rel), e.alice, 403, "forbidden"},
		{"a symbolic link out", blamePath(filepath.Join(w.repo.dir, "link.go")), e.alice, 403, "forbidden"},
		{"a directory linked out", blamePath(filepath.Join(w.repo.dir, "elsewhere", "secret.go")), e.alice, 403, "forbidden"},
		{"no such file outside", blamePath("/nonexistent/dir/x.go"), e.alice, 403, "forbidden"},
		{"/etc/passwd", blamePath("/etc/passwd"), e.alice, 403, "forbidden"},
		{"no such file inside", blamePath(filepath.Join(w.repo.dir, "nope.go")), e.alice, 404, "not_found"},
		{"no such file in a directory inside", blamePath(filepath.Join(w.repo.dir, "pkg", "nope.go")), e.alice, 404, "not_found"},
		{"no such file in no such directory inside", blamePath(filepath.Join(w.repo.dir, "gone", "deeper", "nope.go")), e.alice, 404, "not_found"},
		{"no such file in no such directory outside", blamePath(filepath.Join(other.dir, "gone", "nope.go")), e.alice, 403, "forbidden"},
		{"a directory", blamePath(filepath.Join(w.repo.dir, "pkg")), e.alice, 400, "invalid"},
		{"a relative path", blamePath("calc.go"), e.alice, 400, "invalid"},
		{"no path", "/api/v1/blame", e.alice, 400, "invalid"},
		{"a revision that is an option", blamePath(w.file) + "&rev=" + url.QueryEscape("--output=/tmp/x"), e.alice, 400, "invalid"},
		{"a range", blamePath(w.file) + "&rev=HEAD~1..HEAD", e.alice, 400, "invalid"},
		{"a revision with a path", blamePath(w.file) + "&rev=" + url.QueryEscape("HEAD:calc.go"), e.alice, 400, "invalid"},
		{"no such revision", blamePath(w.file) + "&rev=nope", e.alice, 404, "not_found"},
		{"bad lines", blamePath(w.file) + "&lines=9-2", e.alice, 400, "invalid"},
		{"no token", blamePath(w.file), "", 401, "unauthorized"},
	} {
		resp, body := e.request("GET", c.path, c.token, nil)
		wantError(t, c.what, resp, body, c.status, c.code)
		if strings.Contains(string(body), "package secret") {
			t.Errorf("%s: the answer holds the outside file: %s", c.what, body)
		}
		if c.code == "not_found" && strings.HasPrefix(c.what, "no such file") && !strings.Contains(string(body), "no such file") {
			t.Errorf("%s: %s, want it to say no such file", c.what, body)
		}
	}
	// The page refuses the same with the same status.
	for _, c := range []struct {
		path   string
		token  string
		status int
	}{{"/blame?path=" + url.QueryEscape(outside), e.alice, 403}, {"/blame", e.bob, 403}, {"/blame?path=" + url.QueryEscape(w.file), e.alice, 200}} {
		resp := e.send("GET", c.path, "", nil, map[string][]string{"Cookie": {"loom_token=" + c.token}})
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("GET %s as %s: %d, want %d", c.path, c.token[:8], resp.StatusCode, c.status)
		}
	}

	// The owner's session page links the files its edits wrote to their
	// blame.
	page := func(token string) string {
		resp := e.send("GET", "/s/"+w.b.ID, "", nil, map[string][]string{"Cookie": {"loom_token=" + token}})
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if p := page(e.alice); !strings.Contains(p, `id="edited"`) || !strings.Contains(p, `href="/blame?path=`+url.QueryEscape(w.file)+`"`) {
		t.Errorf("alice's session page does not link the file its edit wrote to its blame")
	}

	plain := newEnv(t)
	resp, body := plain.request("GET", blamePath(w.file), plain.alice, nil)
	wantError(t, "a server without blame", resp, body, 404, "not_found")
	resp = plain.send("GET", "/blame", "", nil, map[string][]string{"Cookie": {"loom_token=" + plain.alice}})
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("a server without blame answers /blame with %d", resp.StatusCode)
	}
}

// TestBlameClone: a clone of the repository at a path no session
// recorded is blamed by the dashboard as by loom blame (its sessions
// are the repository's), and a repository of no session stays refused.
func TestBlameClone(t *testing.T) {
	w := newBlameWorld(t)
	clone := filepath.Join(t.TempDir(), "calc-clone")
	gittest.Git(t, filepath.Dir(clone), time.Time{}, "clone", "-q", w.repo.dir, clone)
	file := filepath.Join(clone, "calc.go")
	if real, err := filepath.EvalSymlinks(file); err == nil {
		file = real
	}
	var got blame.Result
	w.e.getJSON(blamePath(file), w.e.alice, &got)
	agents := 0
	for _, l := range got.Lines {
		if l.Kind == blame.Agent && l.SessionID == w.a.ID {
			agents++
		}
	}
	if agents == 0 {
		t.Errorf("the clone's calc.go has no line of the session that wrote it: %+v", got.Lines)
	}
}
