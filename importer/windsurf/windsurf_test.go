package windsurf

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	login       = "testdata/Fix the login redirect.md"
	older       = "testdata/Cascade Chat Conversation.md"
	antigravity = "testdata/Antigravity plan.md"
)

func readFile(t *testing.T, path string) *importer.Result {
	t.Helper()
	res := importertest.ReadFile(t, Format{}, path)
	importertest.CheckComplete(t, res)
	return res
}

// only is the one session of res.
func only(t *testing.T, res *importer.Result) *importer.Session {
	t.Helper()
	if len(res.Sessions) != 1 || len(res.Problems) != 0 {
		t.Fatalf("%d sessions, problems %v", len(res.Sessions), res.Problems)
	}
	return res.Sessions[0]
}

// tools is the names of m's tool parts, in order.
func tools(m *loom.Message) string {
	var out []string
	for _, p := range m.Parts {
		if p.Type == loom.PartTool {
			out = append(out, p.Name)
		}
	}
	return strings.Join(out, " ")
}

// input is tool part p's input key k.
func input(t *testing.T, p loom.Part, k string) string {
	t.Helper()
	var in map[string]string
	if len(p.Input) > 0 {
		if err := json.Unmarshal(p.Input, &in); err != nil {
			t.Fatal(err)
		}
	}
	return in[k]
}

// write writes text to name in a new directory and returns its path.
func write(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	importertest.WriteFile(t, path, []byte(text), 0o644)
	return path
}

func TestReadTrajectory(t *testing.T) {
	s := only(t, readFile(t, login))
	if got, want := importertest.Roles(s), "user assistant assistant system user assistant assistant"; got != want {
		t.Fatalf("roles %q, want %q", got, want)
	}
	m := s.Messages
	if !strings.HasPrefix(m[0].Text(), "After login the app") || !strings.Contains(m[0].Text(), "@[web/src/auth/login.ts]") {
		t.Errorf("prompt %q", m[0].Text())
	}
	if len(m[0].Parts) != 2 || m[0].Parts[1].Type != loom.PartFile || m[0].Parts[1].Filename != "login.ts" || m[0].Parts[1].Source.Path != "web/src/auth/login.ts" {
		t.Errorf("the file the prompt attaches: %+v", m[0].Parts)
	}
	if got, want := tools(m[1]), "view list_dir grep_search codebase_search find_by_name analyze view_code_item"; got != want {
		t.Errorf("first reply's steps %q, want %q", got, want)
	}
	if m[1].Parts[0].Type != loom.PartText || m[1].Parts[0].Text != "I'll look at the login flow and the router first." {
		t.Errorf("first reply's text %+v", m[1].Parts[0])
	}
	if got := input(t, m[1].Parts[1], "path"); got != "/home/ana/shop/web/src/auth/login.ts" {
		t.Errorf("view input %q", got)
	}
	if m[1].Parts[1].Title != "Viewed login.ts" || m[1].Parts[1].Status != loom.ToolCompleted {
		t.Errorf("view part %+v", m[1].Parts[1])
	}
	if got := input(t, m[1].Parts[2], "path"); got != "/home/ana/shop/web/src/auth" {
		t.Errorf("list_dir input %q", got)
	}

	// The second reply: text with its own heading and code-index links
	// made paths, steps in order, a fence that quotes a trajectory, a
	// rejected command.
	r := m[2]
	if got, want := tools(r), "edit run_command command_status read_terminal run_command"; got != want {
		t.Errorf("second reply's steps %q, want %q", got, want)
	}
	var kinds []string
	for _, p := range r.Parts {
		kinds = append(kinds, p.Type)
	}
	if got := strings.Join(kinds, " "); got != "text tool tool tool tool text tool" {
		t.Errorf("second reply's parts %q", got)
	}
	text := r.Parts[0].Text
	for _, want := range []string{"[handleLogin](/home/ana/shop/web/src/auth/login.ts)", "[login.ts](/home/ana/shop/web/src/auth/login.ts) I will", "### Plan", "2. *Only* allow"} {
		if !strings.Contains(text, want) {
			t.Errorf("reply text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "cci:") {
		t.Errorf("a code-index link is left: %s", text)
	}
	if got := input(t, r.Parts[2], "command"); got != "npm test -- auth" {
		t.Errorf("command %q", got)
	}
	if got := input(t, r.Parts[4], "name"); got != "npm run dev" {
		t.Errorf("terminal %q", got)
	}
	quoted := r.Parts[5].Text
	if !strings.Contains(quoted, "### User Input\n\nthis is quoted, not a turn") || !strings.Contains(quoted, "*Viewed [x.ts](file:///nowhere/x.ts) *") {
		t.Errorf("the fenced quote is not the reply's text:\n%s", quoted)
	}
	if p := r.Parts[6]; p.Status != loom.ToolError || p.Error == "" || input(t, p, "command") != "git push --force" {
		t.Errorf("rejected command %+v", p)
	}

	if !strings.HasPrefix(m[3].Text(), "This is a system-generated message") {
		t.Errorf("review policy's message %q", m[3].Text())
	}
	if m[4].Text() != "also check the docs online" {
		t.Errorf("second prompt %q", m[4].Text())
	}
	steps := m[5]
	if got, want := tools(steps), "search_web read_url_content read_resource list_resources mcp_tool todo_list browser_preview open_browser_url list_browser_pages read_browser_page view_content_chunk generate_image propose_code"; got != want {
		t.Errorf("steps before a response %q, want %q", got, want)
	}
	if steps.Text() != "" || len(steps.Parts) != 13 {
		t.Errorf("steps message %+v", steps.Parts)
	}
	for i, want := range map[int][2]string{0: {"query", "open redirect prevention same-origin check"}, 1: {"url", "/docs/web/api/url"}, 2: {"uri", "file:///home/ana/shop/web/README.md"}, 3: {"server", "github"}, 7: {"url", "http://localhost:5173/login?next=/cart"}} {
		if got := input(t, steps.Parts[i], want[0]); got != want[1] {
			t.Errorf("%s: %s %q, want %q", steps.Parts[i].Name, want[0], got, want[1])
		}
	}
	if !strings.HasPrefix(m[6].Text(), "Done: the login keeps") {
		t.Errorf("last reply %q", m[6].Text())
	}

	// The session: its working directory the deepest one holding every
	// path, its title the first prompt, the file's time.
	if s.Cwd != filepath.FromSlash("/home/ana/shop/web/src") {
		t.Errorf("cwd %q", s.Cwd)
	}
	if !strings.HasPrefix(importer.Title(s), "After login the app") {
		t.Errorf("title %q", importer.Title(s))
	}
	fi, _ := os.Stat(login)
	if !s.CreatedAt.Equal(fi.ModTime()) || !m[6].CreatedAt.Equal(fi.ModTime()) {
		t.Errorf("times %v %v, want the file's %v", s.CreatedAt, m[6].CreatedAt, fi.ModTime())
	}
	if len(s.SourceID) != 16 || m[0].ID != s.SourceID+"-1" || m[6].Parts[0].ID != s.SourceID+"-7/0" {
		t.Errorf("ids %s %s %s", s.SourceID, m[0].ID, m[6].Parts[0].ID)
	}
}

// The older header, its indented note, a Windows workspace.
func TestReadOlderTrajectory(t *testing.T) {
	s := only(t, readFile(t, older))
	if got := importertest.Roles(s); got != "user assistant assistant" {
		t.Fatalf("roles %q", got)
	}
	if got := input(t, s.Messages[1].Parts[1], "path"); got != "c:/work/tool/.github/workflows/ci.yml" {
		t.Errorf("path %q", got)
	}
	if got := s.Messages[2].Text(); !strings.Contains(got, "[ci.yml](c:/work/tool/.github/workflows/ci.yml) uses") {
		t.Errorf("text %q", got)
	}
	if s.Cwd != filepath.FromSlash("c:/work/tool/.github/workflows") {
		t.Errorf("cwd %q", s.Cwd)
	}
}

// What Antigravity exports: front matter above the header, steps right
// after a prompt, its review policy's message, its artifacts' paths
// left out of the workspace.
func TestReadAntigravityExport(t *testing.T) {
	s := only(t, readFile(t, antigravity))
	if got := importertest.Roles(s); got != "user assistant system assistant assistant" {
		t.Fatalf("roles %q", got)
	}
	if s.Title != "Add dark mode" || s.Cwd != filepath.FromSlash("/Users/kim/apps/notes") {
		t.Errorf("title %q, cwd %q", s.Title, s.Cwd)
	}
	if got := tools(s.Messages[1]); got != "list_dir view edit" {
		t.Errorf("steps %q", got)
	}
	// Without the front matter, the workspace is still the project's,
	// not Antigravity's data directory.
	data, _ := os.ReadFile(antigravity)
	text := string(data)
	text = text[strings.Index(text, "# Chat Conversation"):]
	s = only(t, readFile(t, write(t, "plan.md", text)))
	if s.Cwd != filepath.FromSlash("/Users/kim/apps/notes") || s.Title != "" {
		t.Errorf("cwd %q, title %q", s.Cwd, s.Title)
	}
}

// CRLF line endings and a byte-order mark read as the same trajectory.
func TestCRLFAndBOM(t *testing.T) {
	data := importertest.ReadBytes(t, login)
	want := only(t, readFile(t, login))
	crlf := "\uFEFF" + strings.ReplaceAll(string(data), "\n", "\r\n")
	got := only(t, readFile(t, write(t, filepath.Base(login), crlf)))
	if got.SourceID != want.SourceID || len(got.Messages) != len(want.Messages) {
		t.Fatalf("%s with %d messages, want %s with %d", got.SourceID, len(got.Messages), want.SourceID, len(want.Messages))
	}
	for i, m := range want.Messages {
		g := got.Messages[i]
		if g.ID != m.ID || g.Text() != m.Text() || tools(g) != tools(m) {
			t.Errorf("message %d: %s %q [%s], want %s %q [%s]", i, g.ID, g.Text(), tools(g), m.ID, m.Text(), tools(m))
		}
	}
}

// The session's id is the file's name and its first turn: the same
// conversation downloaded again, elsewhere, is the same session;
// another file name or another conversation is another.
func TestSourceID(t *testing.T) {
	data, _ := os.ReadFile(login)
	a := only(t, readFile(t, login)).SourceID
	moved := only(t, readFile(t, write(t, filepath.Base(login), string(data)))).SourceID
	renamed := only(t, readFile(t, write(t, "Fix the login redirect (1).md", string(data)))).SourceID
	other := only(t, readFile(t, write(t, filepath.Base(login), strings.Replace(string(data), "After login", "Before login", 1)))).SourceID
	if a != moved || a == renamed || a == other {
		t.Errorf("ids %s, moved %s, renamed %s, other conversation %s", a, moved, renamed, other)
	}
}

// What is not a trajectory is passed over, counted, and garbage (bytes
// that are not text) is one line; what a trajectory holds that this
// reader does not know is counted, never a crash.
func TestNotATrajectory(t *testing.T) {
	for _, text := range []string{
		"# Notes\n\n### User Input\n\nhi\n",
		"",
		"---\ntitle: a post\n---\n\n# Chat Conversations of 2025\n",
		"\uFEFF\r\n---\r\n" + strings.Repeat("k: v\r\n", maxFront+5),
	} {
		res := readFile(t, write(t, "x.md", text))
		if len(res.Sessions) != 0 || res.Skipped["not-a-trajectory"] != 1 {
			t.Errorf("%q: %d sessions, skipped %v", text, len(res.Sessions), res.Skipped)
		}
	}
	// Bytes that are not text are no Markdown file: garbage, one line.
	res := readFile(t, write(t, "x.md", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\n"))
	if len(res.Sessions) != 0 || len(res.Problems) != 1 || len(res.Skipped) != 0 {
		t.Errorf("not text: %d sessions, problems %v, skipped %v", len(res.Sessions), res.Problems, res.Skipped)
	}
	res = readFile(t, write(t, "x.md", "# Chat Conversation\n\nNote: _This is purely the output of the chat conversation_\n"))
	if len(res.Sessions) != 0 || res.Skipped["empty-trajectory"] != 1 {
		t.Errorf("header only: %d sessions, skipped %v", len(res.Sessions), res.Skipped)
	}
	res = readFile(t, write(t, "x.md", "# Chat Conversation\nstray line\n### Memory Update\nremembered\n### User Input\n\n### User Input\nhi\n### Planner Response\n\n### Planner Response\nhello\n### Summary\nof the reply\n"))
	s := only(t, res)
	if got := importertest.Roles(s); got != "user assistant" {
		t.Errorf("roles %q", got)
	}
	if got := s.Messages[1].Text(); got != "hello\n### Summary\nof the reply" {
		t.Errorf("reply %q", got)
	}
	want := map[string]int{"before-first-turn": 1, "unknown:Memory Update": 1, "empty-input": 1, "empty-response": 1}
	for k, n := range want {
		if res.Skipped[k] != n {
			t.Errorf("skipped %v, want %v", res.Skipped, want)
		}
	}
}

// A code fence left open at the end of the file (a reply cut short in
// its code) does not swallow the turns after it; a closed one keeps the
// headings it quotes.
func TestUnclosedFence(t *testing.T) {
	res := readFile(t, write(t, "x.md", "# Chat Conversation\n\n### User Input\n\nshow me\n\n### Planner Response\n\n```go\nfunc main() {\n\n### User Input\n\nnext\n\n### Planner Response\n\n~~~\n### User Input\n~~~\n\n*Viewed [a.go](file:///src/a.go) *\n"))
	s := only(t, res)
	if got := importertest.Roles(s); got != "user assistant user assistant" {
		t.Fatalf("roles %q", got)
	}
	if got := s.Messages[1].Text(); got != "```go\nfunc main() {" {
		t.Errorf("cut reply %q", got)
	}
	if got := s.Messages[3]; got.Text() != "~~~\n### User Input\n~~~" || tools(got) != "view" {
		t.Errorf("last reply %q [%s]", got.Text(), tools(got))
	}
	// Many fences that never close, nested so that each hides the next:
	// read in bounded passes.
	var b strings.Builder
	b.WriteString("# Chat Conversation\n\n")
	for i := range 40 {
		b.WriteString("### Planner Response\n\n" + strings.Repeat("`", 100-i) + "\nx\n\n")
	}
	s = only(t, readFile(t, write(t, "x.md", b.String())))
	if len(s.Messages) != 40 {
		t.Errorf("%d messages, want 40", len(s.Messages))
	}
}

// A file over the limit is refused before it is read.
func TestTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.md")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(importer.MaxDocument + 1); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()
	_, err = Format{}.Read(context.Background(), importer.Bundle{Files: []string{path}})
	if err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("read a file over the limit: %v", err)
	}
}

func TestBundlesAndRoots(t *testing.T) {
	if got := importertest.BundleNames(t, Format{}, "a.md", "kept/B.MD", "node_modules/x/c.md", ".git/d.md", "e.txt", "kept/.hidden.md"); got != "a.md,kept/B.MD" {
		t.Errorf("bundles %v", got)
	}
	// One file named is read whatever its name when it starts as a
	// trajectory, and refused (no bundle) when it does not.
	one := write(t, "saved.txt", "\uFEFF\n---\ntitle: x\n---\n# Chat Conversation\n")
	if bs, _ := (Format{}).Bundles(context.Background(), one); len(bs) != 1 || bs[0].Name() != one {
		t.Errorf("one trajectory named: %v", bs)
	}
	for _, text := range []string{"x", "", "# Notes\n# Chat Conversation\n"} {
		if bs, err := (Format{}).Bundles(context.Background(), write(t, "n.md", text)); len(bs) != 0 || err != nil {
			t.Errorf("one file named that is no trajectory, %q: %v, %v", text, bs, err)
		}
	}
	long := write(t, "long.md", "---\n"+strings.Repeat("k: "+strings.Repeat("v", 1000)+"\n", 70)+"---\n# Chat Conversation\n")
	if bs, _ := (Format{}).Bundles(context.Background(), long); len(bs) != 1 {
		t.Errorf("front matter longer than a look: %v", bs)
	}
	if r := (Format{}).Roots(func(string) string { return "" }, "/home/me"); r != nil {
		t.Errorf("roots without %s: %v", DirEnv, r)
	}
	env := importertest.Getenv(DirEnv, "/a"+string(filepath.ListSeparator)+" "+string(filepath.ListSeparator)+"/b")
	if r := (Format{}).Roots(env, "/home/me"); strings.Join(r, ",") != "/a,/b" {
		t.Errorf("roots %v", r)
	}
}

// Importing a folder of trajectories, again, and once one was
// downloaded again with a turn more: the turn alone is added.
func TestImportGrows(t *testing.T) {
	st := importertest.Store(t)
	dir := t.TempDir()
	for _, p := range []string{login, older, antigravity, "testdata/notes.md"} {
		data, _ := os.ReadFile(p)
		os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o644)
	}
	tr := importertest.Import(t, st, Format{}, dir)
	if tr.SessionsNew != 3 || tr.MessagesAdded != 7+3+5 || tr.ProblemCount != 0 || tr.Skipped["not-a-trajectory"] != 1 {
		t.Fatalf("first import: %+v", tr)
	}
	importertest.NothingNew(t, st, Format{}, dir)
	path := filepath.Join(dir, filepath.Base(older))
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append(data, "\n### User Input\n\nand locally?\n\n### Planner Response\n\nRun `make lint-ci`.\n\n*User accepted the command `make lint-ci`*\n"...), 0o644)
	importertest.GrowsBy(t, st, Format{}, 2, dir)
}

// --watch on a folder follows a trajectory downloaded again over its
// file with one more turn: exactly its two messages are added.
func TestWatchFollows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.Base(older))
	data := importertest.ReadBytes(t, older)
	os.WriteFile(path, data, 0o644)
	importertest.Follows(t, Format{}, dir, func() {
		grown := append(append([]byte{}, data...), "\n### User Input\n\nthanks\n\n### Planner Response\n\nYou're welcome.\n"...)
		tmp := path + ".part"
		if err := os.WriteFile(tmp, grown, 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Error(err)
		}
	}, 2)
}

// A download read while it was written, then whole: the messages it had
// keep their ids and the reply that was cut grows in place.
func TestCutDownloadKeepsIDs(t *testing.T) {
	data, _ := os.ReadFile(login)
	cut := strings.Index(string(data), "Tests pass.")
	before := only(t, readFile(t, write(t, filepath.Base(login), string(data[:cut]))))
	after := only(t, readFile(t, login))
	if before.SourceID != after.SourceID || len(before.Messages) != 3 {
		t.Fatalf("%s (%d messages) then %s", before.SourceID, len(before.Messages), after.SourceID)
	}
	for i, m := range before.Messages {
		a := after.Messages[i]
		if a.ID != m.ID || a.Role != m.Role {
			t.Errorf("message %d: %s %s, then %s %s", i, m.ID, m.Role, a.ID, a.Role)
		}
		for j, p := range m.Parts {
			if a.Parts[j].ID != p.ID || a.Parts[j].Name != p.Name {
				t.Errorf("part %s %s, then %s %s", p.ID, p.Name, a.Parts[j].ID, a.Parts[j].Name)
			}
		}
	}
}

// The times of a trajectory are its file's: one downloaded later is
// later.
func TestTimesAreTheFiles(t *testing.T) {
	path := write(t, "t.md", "# Chat Conversation\n\n### User Input\n\nhi\n")
	at := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
	s := only(t, readFile(t, path))
	if !s.CreatedAt.Equal(at) || !s.UpdatedAt.Equal(at) || !s.Messages[0].CreatedAt.Equal(at) {
		t.Errorf("times %v %v %v, want %v", s.CreatedAt, s.UpdatedAt, s.Messages[0].CreatedAt, at)
	}
}

// Only the start of a long first prompt keys the session: the file read
// while it was written, cut in that prompt, is the same session.
func TestLongFirstPromptKey(t *testing.T) {
	prompt := strings.Repeat("é spec line\n", 400)
	whole := "# Chat Conversation\n\n### User Input\n\n" + prompt + "\n### Planner Response\n\nok\n"
	cut := whole[:len(whole)-len(prompt)/2-40]
	a := only(t, readFile(t, write(t, "spec.md", whole)))
	b := only(t, readFile(t, write(t, "spec.md", cut)))
	if a.SourceID != b.SourceID || len(a.Messages) != 2 || len(b.Messages) != 1 {
		t.Errorf("whole %s (%d messages), cut %s (%d)", a.SourceID, len(a.Messages), b.SourceID, len(b.Messages))
	}
	other := only(t, readFile(t, write(t, "spec.md", strings.Replace(whole, "é spec", "a spec", 1))))
	if other.SourceID == a.SourceID {
		t.Error("another first prompt keys the same session")
	}
}

// What a prompt attaches with @[…]: files (with the lines named), not
// terminals or workflows.
func TestMentions(t *testing.T) {
	got := mentions("see @[/Users/me/plan.md:L14-L78] and @[c:\\src\\a.go] @[x.py:L3], not @[TerminalName: go, ProcessId: 7] or @[/review]; @[docs]")
	var out []string
	for _, p := range got {
		out = append(out, fmt.Sprintf("%s %s %d-%d", p.Filename, p.Source.Path, p.Source.Start, p.Source.End))
	}
	want := "plan.md /Users/me/plan.md 14-78|a.go c:\\src\\a.go 0-0|x.py x.py 3-3"
	if strings.Join(out, "|") != want {
		t.Errorf("mentions %q, want %q", strings.Join(out, "|"), want)
	}
}
