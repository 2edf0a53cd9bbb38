package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// exportAll exports every session of the fixture's store as jsonl.
func exportAll(t *testing.T, fx *clitest.Fixture) string {
	t.Helper()
	return fx.MustRun(t, "session", "export", "--all")
}

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	src := clitest.NewFixture(t)
	// An archived session is hidden from lists, not from a backup.
	yes := true
	if _, err := src.OpenStore(t).UpdateSession(context.Background(), src.Web.ID, loom.SessionUpdate{Archived: &yes}); err != nil {
		t.Fatal(err)
	}
	first := exportAll(t, src)
	if !strings.Contains(first, `"id":"`+src.Web.ID+`"`) || !strings.Contains(first, `"archived_at":"`) {
		t.Fatal("export --all leaves out an archived session")
	}

	// Every part type, the fork and the sub-agent session are in it.
	for _, want := range []string{`"type":"reasoning"`, `"type":"tool"`, `"type":"file"`, `"type":"agent"`, `"type":"step-start"`,
		`"type":"step-finish"`, `"kind":"fork"`, `"kind":"subagent"`, `"role":"summary"`, `"role":"system"`, `"error":{"message":"rate limited"`} {
		if !strings.Contains(first, want) {
			t.Fatalf("export lacks %s", want)
		}
	}
	if strings.Contains(first, "Bob") {
		t.Fatal("export --all includes another user's session")
	}
	// A parent always comes before its sub-agent session.
	if strings.Index(first, `"id":"`+src.Sub.ID+`"`) < strings.Index(first, `"id":"`+src.Main.ID+`"`) {
		t.Fatal("sub-agent session exported before its parent")
	}

	file := filepath.Join(t.TempDir(), "all.jsonl")
	if err := os.WriteFile(file, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := clitest.NewEmptyFixture(t)
	if out := dst.MustRun(t, "session", "import", file); len(clitest.Lines(out)) != 7 {
		t.Fatalf("import printed %q, want the 7 imported ids", out)
	}
	second := exportAll(t, dst)
	if first != second {
		t.Fatalf("export → import → export differs:\n--- first\n%s\n--- second\n%s", first, second)
	}

	// The json format round-trips to the same jsonl.
	doc := src.MustRun(t, "session", "export", "--all", "--format", "json")
	if !strings.HasPrefix(doc, "{\n  \"version\": 1,\n  \"sessions\": [") {
		t.Fatalf("json export starts %q", doc[:min(60, len(doc))])
	}
	viaJSON := clitest.NewEmptyFixture(t)
	r := viaJSON.RunWith(t, clitest.RunOpts{Stdin: doc}, "session", "import", "-")
	if r.Code != 0 {
		t.Fatalf("import json from stdin: %s", r.Stderr)
	}
	if third := exportAll(t, viaJSON); third != first {
		t.Fatalf("json round trip differs:\n%s\n---\n%s", first, third)
	}

	// Importing the same sessions again leaves them out, says so, and
	// changes nothing.
	before, msgs := dst.SessionCount(t)
	r = dst.Run(t, "session", "import", file)
	if r.Code != 0 || !strings.Contains(r.Stderr, "sessions this store holds already left out") {
		t.Fatalf("second import: %+v", r)
	}
	if after, amsgs := dst.SessionCount(t); after != before || amsgs != msgs {
		t.Fatal("an import of what the store holds changed it")
	}
}

// An export that overlaps what the store holds (a machine's export
// after sync, or after an earlier import) imports what is new: a session
// held with every message of the export's is left out, one that went on
// differently on the two sides comes in beside it as "T (imported)",
// its sub-agent sessions with it; never an error.
func TestImportOverlappingExport(t *testing.T) {
	t.Parallel()
	a := clitest.NewEmptyFixture(t)
	clitest.Say(t, a, "shared", 1)
	clitest.Say(t, a, "plan", 1)
	b := clitest.NewEmptyFixture(t)
	b.MustExec(t, "session", "import", writeFile(t, a.MustExec(t, "session", "export", "--all")))
	clitest.Say(t, a, "plan", 1) // the two go on differently
	clitest.Say(t, b, "plan", 2)
	clitest.Say(t, a, "only on a", 1)
	r := b.Exec(t, "", "session", "import", "--json", writeFile(t, a.MustExec(t, "session", "export", "--all")))
	if r.Code != 0 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 ||
		!strings.Contains(r.Stderr, "1 session this store holds already left out") || !strings.Contains(r.Stderr, `1 session this store holds with other messages imported beside them as "T (imported)"`) {
		t.Fatalf("import of an overlapping export: exit %d, %q", r.Code, r.Stderr)
	}
	sum := clitest.DecodeJSON[struct {
		Sessions []string
		Messages int
		Held     int
		Copies   int
	}](t, r.Stdout)
	if len(sum.Sessions) != 2 || sum.Held != 1 || sum.Copies != 1 {
		t.Fatalf("the import's summary: %+v", sum)
	}
	got := clitest.Titles(t, b)
	if strings.Join(got, "|") != "only on a|plan|plan (imported)|shared" {
		t.Fatalf("the store holds %q", got)
	}
	// And again: nothing more.
	r = b.Exec(t, "", "session", "import", writeFile(t, a.MustExec(t, "session", "export", "--all")))
	if r.Code != 0 || !strings.Contains(r.Stderr, "3 sessions this store holds already left out") || strings.Join(clitest.Titles(t, b), "|") != strings.Join(got, "|") {
		t.Fatalf("the same import again: exit %d, %q, %q", r.Code, r.Stderr, clitest.Titles(t, b))
	}
}

func TestExportOneSessionWithSubagents(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	// A live process holds the session: show says so, export leaves the
	// lock out because it belongs to the process, not the session.
	holder := fx.OpenStore(t)
	lease, err := holder.Lock(context.Background(), fx.Main.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())
	if s := clitest.DecodeJSON[*loom.Session](t, fx.MustRun(t, "session", "resume", fx.Main.ID, "--json")); s.Lock == nil || s.Lock.PID != os.Getpid() {
		t.Fatalf("held session shows lock %+v", s.Lock)
	}
	out := fx.MustRun(t, "session", "export", "Fix the flaky test")
	var types []string
	var ids []string
	for _, l := range clitest.Lines(out) {
		var rec struct {
			Type    string        `json:"type"`
			Session *loom.Session `json:"session"`
			Message *loom.Message `json:"message"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		types = append(types, rec.Type)
		if rec.Session != nil {
			ids = append(ids, rec.Session.ID)
			if rec.Session.Lock != nil {
				t.Fatal("a lock was exported")
			}
		}
	}
	if len(ids) != 2 || ids[0] != fx.Main.ID || ids[1] != fx.Sub.ID {
		t.Fatalf("exported sessions %v, want main then its sub-agent", ids)
	}
	want := "session " + strings.Repeat("message ", 9) + "session message message"
	if got := strings.Join(types, " "); got != strings.TrimSpace(want) {
		t.Fatalf("record order %q", got)
	}

	// Into a fresh store, byte for byte.
	dst := clitest.NewEmptyFixture(t)
	r := dst.RunWith(t, clitest.RunOpts{Stdin: out}, "session", "import", "-")
	if r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	if again := dst.MustRun(t, "session", "export", fx.Main.ID); again != out {
		t.Fatalf("round trip differs:\n%s\n---\n%s", out, again)
	}

	// To a file, with -o.
	file := filepath.Join(fx.Project, "flaky.md")
	r = fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "export", fx.Main.ID, "--format", "markdown", "-o", "flaky.md")
	if r.Code != 0 || !strings.Contains(r.Stderr, "Exported 2 sessions (11 messages) to flaky.md") {
		t.Fatalf("export -o: %+v", r)
	}
	md, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Fix the flaky test\n", "- **id:** `" + fx.Main.ID + "`", "## 1. user · 2025-05-01T10:00:00.000Z",
		"<details><summary>Thinking</summary>", "**Tool `read_file`** · completed · 120ms", "\"path\": \"retry_test.go\"",
		"**File** `retry_test.go` (text/x-go)", "**Sub-agent** `explore` → session `" + fx.Sub.ID + "`", "**Error:** rate limited",
		"# Sub-agent session: explore retry"} {
		if !strings.Contains(string(md), want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestImportRefusesBadInput(t *testing.T) {
	t.Parallel()
	src := clitest.NewFixture(t)
	good := clitest.Lines(src.MustRun(t, "session", "export", src.Web.ID))
	if len(good) != 3 {
		t.Fatalf("web export has %d lines", len(good))
	}
	dir := t.TempDir()
	tests := []struct {
		name  string
		line3 string
		want  string
	}{
		{"not JSON", `{"type":"message","message":{"id":}`, "invalid JSON"},
		{"cut short", good[2][:len(good[2])/2], "unexpected end of JSON"},
		{"unknown record", `{"type":"note","text":"hi"}`, "unknown field"},
		{"unknown type", `{"type":"note"}`, `unknown record type "note"`},
		{"seq gap", strings.Replace(good[2], `"seq":2`, `"seq":5`, 1), "seq 5, want 2"},
		{"bad role", strings.Replace(good[2], `"role":"assistant"`, `"role":"robot"`, 1), `unknown message role "robot"`},
		{"wrong type of field", strings.Replace(good[2], `"seq":2`, `"seq":"two"`, 1), "seq should be int64"},
		{"tool without call id", strings.Replace(good[2], `"parts":[{`, `"parts":[{"type":"tool","id":"p1","name":"x","status":"completed"},{`, 1), "tool part needs a call id"},
		{"other session's message", strings.Replace(good[2], `"session_id":"`+src.Web.ID, `"session_id":"`+src.Main.ID, 1), "belongs to session"},
	}
	dst := clitest.NewFixture(t)
	beforeS, beforeM := dst.SessionCount(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A good first file and a bad second one: nothing of either.
			okFile := filepath.Join(dir, "ok.jsonl")
			fresh := strings.ReplaceAll(strings.Join(good, "\n"), src.Web.ID, "01968b4b-0000-7000-8000-00000000abcd")
			fresh = strings.Replace(fresh, `"key":"cli:web"`, `"key":"cli:web:import"`, 1)
			os.WriteFile(okFile, []byte(fresh+"\n"), 0o600)
			bad := filepath.Join(dir, "bad.jsonl")
			os.WriteFile(bad, []byte(good[0]+"\n"+good[1]+"\n"+tc.line3+"\n"), 0o600)
			r := dst.Run(t, "session", "import", okFile, bad)
			if r.Code == 0 {
				t.Fatal("bad import succeeded")
			}
			if !strings.HasPrefix(r.Stderr, "loom: "+bad+":3: ") || !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("stderr %q does not name %s:3 and %q", r.Stderr, bad, tc.want)
			}
			if s, m := dst.SessionCount(t); s != beforeS || m != beforeM {
				t.Fatalf("store changed: %d/%d sessions, %d/%d messages", s, beforeS, m, beforeM)
			}
		})
	}

	// The json format names lines too.
	doc := src.MustRun(t, "session", "export", src.Web.ID, "--format", "json")
	docLines := strings.Split(doc, "\n")
	checked := false
	for i, l := range docLines {
		if strings.Contains(l, `"role": "assistant"`) {
			docLines[i] = strings.Replace(l, "assistant", "robot", 1)
			bad := filepath.Join(dir, "bad.json")
			os.WriteFile(bad, []byte(strings.Join(docLines, "\n")), 0o600)
			r := dst.Run(t, "session", "import", bad)
			// The message starts a few lines above its role.
			start := i + 1
			for !strings.HasSuffix(strings.TrimSpace(docLines[start-1]), "{") {
				start--
			}
			if want := bad + ":" + clitest.Itoa(start) + ": message 2: unknown message role"; !strings.Contains(r.Stderr, want) {
				t.Fatalf("json import error %q, want %q", r.Stderr, want)
			}
			checked = true
			break
		}
	}
	if !checked {
		t.Fatal("no assistant message in the json export")
	}
	for _, c := range []struct{ content, want string }{
		{"", "empty file"},
		{"hello", ":1: not a loom export"},
		{`{"version":2,"sessions":[]}`, "unsupported export version 2"},
		{"\n\n" + `{"type":"message","message":{}}`, ":3: message before any session record"},
		{good[0][:len(good[0])-30], ":1: unexpected end of JSON"},
		{doc[:len(doc)-40], ": unexpected end of JSON"},
	} {
		bad := filepath.Join(dir, "x.jsonl")
		os.WriteFile(bad, []byte(c.content), 0o600)
		if r := dst.Run(t, "session", "import", bad); r.Code == 0 || !strings.Contains(r.Stderr, c.want) {
			t.Fatalf("import of %q: %+v, want %q", c.content, r, c.want)
		}
	}
}

// The html export is one page that opens anywhere, offline: the
// stylesheet inline, no script, nothing to fetch; the session and its
// sub-agent session drawn as on the dashboard.
func TestExportHTML(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "export", fx.Main.ID, "--format", "html", "-o", "flaky.html")
	if r.Code != 0 || !strings.Contains(r.Stderr, "Exported 2 sessions (11 messages) to flaky.html") {
		t.Fatalf("export --format html -o: %+v", r)
	}
	entries, err := os.ReadDir(fx.Project)
	if err != nil {
		t.Fatal(err)
	}
	var written []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".html") || strings.Contains(e.Name(), "flaky") {
			written = append(written, e.Name())
		}
	}
	if len(written) != 1 {
		t.Fatalf("export wrote %v, want flaky.html alone", written)
	}
	b, err := os.ReadFile(filepath.Join(fx.Project, "flaky.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	checkHTMLExport(t, page)
	for _, want := range []string{"<title>Fix the flaky test · loom</title>", "Why does TestRetry flake?", "run_tests", "exit status 1: FAIL TestRetry",
		`id="session-` + fx.Sub.ID + `"`, "explore retry", "List the files of the retry package.", "<dt>Cost</dt>"} {
		if !strings.Contains(page, want) {
			t.Errorf("html export lacks %q", want)
		}
	}

	// To standard output, the same page.
	if out := fx.MustRun(t, "session", "export", fx.Main.ID, "--format", "html"); out != page {
		t.Errorf("html on standard output differs from the file")
	}
}

// checkHTMLExport checks that page stands alone: a style element, no
// script, and nothing that a browser would load.
func checkHTMLExport(t *testing.T, page string) {
	t.Helper()
	if !strings.HasPrefix(page, "<!doctype html>") || strings.Count(page, "<style>") != 1 {
		t.Fatalf("not one page with an inline stylesheet:\n%.300s", page)
	}
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("html export holds %q", bad)
		}
	}
	if m := regexp.MustCompile(`<[^>]*\s(src|srcset|poster|data)=`).FindString(page); m != "" {
		t.Errorf("html export loads something: %s", m)
	}
	if m := regexp.MustCompile(`(?i)<[^>]*=["']?https?://`).FindString(page); m != "" && !strings.HasPrefix(m, "<a ") {
		t.Errorf("html export refers to the network: %s", m)
	}
}

// writeFile writes content to a new file and returns its path.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
