package aider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const sample = "testdata/history.md"

func readFile(t *testing.T, path string) *importer.Result {
	t.Helper()
	return importertest.ReadFile(t, Format{}, path)
}

// readString reads a history held in a string, from a file of its own.
func readString(t *testing.T, text string) *importer.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), HistoryFile)
	importertest.WriteFile(t, path, []byte(text), 0o644)
	return readFile(t, path)
}

func TestReadHistory(t *testing.T) {
	res := readFile(t, sample)
	if len(res.Sessions) != 2 {
		t.Fatalf("%d sessions, want 2 (the third run has no prompt)", len(res.Sessions))
	}
	if res.Skipped["blank-prompt"] != 1 || res.Skipped["empty-session"] != 1 || len(res.Problems) != 0 {
		t.Errorf("skipped %v, problems %v", res.Skipped, res.Problems)
	}
	a, b := res.Sessions[0], res.Sessions[1]
	if got, want := importertest.Roles(a), "system system system user assistant system"; got != want {
		t.Errorf("first run: roles %q, want %q", got, want)
	}
	if a.Version != "0.31.1" || a.Model != "gpt-4-1106-preview" {
		t.Errorf("first run: version %q, model %q", a.Version, a.Model)
	}
	want := time.Date(2024, 5, 2, 9, 15, 7, 0, time.Local)
	if !a.CreatedAt.Equal(want) || !a.Messages[3].CreatedAt.Equal(want) {
		t.Errorf("first run started %v, its prompt %v; want %v", a.CreatedAt, a.Messages[3].CreatedAt, want)
	}
	abs, _ := filepath.Abs("testdata")
	if a.Cwd != abs {
		t.Errorf("cwd %q, want %q", a.Cwd, abs)
	}
	if got := a.Messages[3].Text(); got != "make greet() take a name\nand say hello to it" {
		t.Errorf("prompt %q", got)
	}
	if got := a.Messages[1].Text(); got != "/add greet.py" {
		t.Errorf("command %q", got)
	}
	reply := a.Messages[4]
	for _, s := range []string{"Here is the change.", "#### Why", "+def greet(name):", "> a quote in the reply"} {
		if !strings.Contains(reply.Text(), s) {
			t.Errorf("reply lacks %q:\n%s", s, reply.Text())
		}
	}
	if strings.HasSuffix(reply.Text(), "\n") || reply.Model != "gpt-4-1106-preview" || reply.Provider != "openai" {
		t.Errorf("reply %q model %q provider %q", reply.Text(), reply.Model, reply.Provider)
	}
	if got := a.Messages[5].Text(); got != "Applied edit to greet.py\nCommit 1a2b3c4 feat: greet takes a name" {
		t.Errorf("output %q", got)
	}

	if got, want := importertest.Roles(b), "system user assistant system user assistant system"; got != want {
		t.Errorf("second run: roles %q, want %q", got, want)
	}
	if b.Version != "0.76.2" || b.Model != "anthropic/claude-3-7-sonnet-20250219" {
		t.Errorf("second run: version %q, model %q", b.Version, b.Model)
	}
	u := b.Messages[2].Usage
	if (u != loom.Usage{InputTokens: 1300, CacheWriteTokens: 1200, CacheReadTokens: 2000, OutputTokens: 250, CostUSD: 0.0123}) {
		t.Errorf("usage %+v", u)
	}
	if b.Messages[2].Provider != "anthropic" || !strings.Contains(b.Messages[2].Text(), "<<<<<<< SEARCH") {
		t.Errorf("edit reply %+v", b.Messages[2])
	}
	if b.Messages[4].Role != loom.RoleUser || b.Messages[4].Text() != "/ask what does welcome do?" {
		t.Errorf("/ask: %+v", b.Messages[4])
	}
	if u := b.Messages[5].Usage; u.InputTokens != 12000 || u.OutputTokens != 31 || u.CostUSD != 0.04 {
		t.Errorf("usage %+v", u)
	}
	if importer.Title(b) != "rename greet to welcome in greet.py" {
		t.Errorf("title %q", importer.Title(b))
	}

	again := readFile(t, sample)
	for i, s := range again.Sessions {
		if s.SourceID != res.Sessions[i].SourceID {
			t.Errorf("source id %s, then %s", res.Sessions[i].SourceID, s.SourceID)
		}
	}
}

// A file read while Aider writes it, and read again once it grew, gives
// the messages it had the same ids.
func TestGrownFileKeepsIDs(t *testing.T) {
	whole := importertest.ReadBytes(t, sample)
	dir := t.TempDir()
	path := filepath.Join(dir, HistoryFile)
	cut := strings.Index(string(whole), "> Applied edit to greet.py  \n> Commit")
	os.WriteFile(path, whole[:cut], 0o644)
	before := readFile(t, path)
	os.WriteFile(path, whole, 0o644)
	after := readFile(t, path)
	if len(before.Sessions) != 1 || len(after.Sessions) != 2 {
		t.Fatalf("%d then %d sessions", len(before.Sessions), len(after.Sessions))
	}
	b, a := before.Sessions[0], after.Sessions[0]
	if b.SourceID != a.SourceID || len(b.Messages) != 5 {
		t.Fatalf("%s (%d messages) then %s", b.SourceID, len(b.Messages), a.SourceID)
	}
	for i, m := range b.Messages {
		if a.Messages[i].ID != m.ID || a.Messages[i].Text() != m.Text() {
			t.Errorf("message %d: %s %q, then %s %q", i, m.ID, m.Text(), a.Messages[i].ID, a.Messages[i].Text())
		}
	}
}

// A history whose trailing spaces an editor removed still reads: the
// prompts are the #### lines outside replies.
func TestUnmarkedLines(t *testing.T) {
	res := readString(t, "# aider chat started at 2025-01-01 10:00:00\n\n> Aider v0.50.0\n> Model: gpt-4o with diff edit format\n\n#### hello there\n\nHi! What can I do?\n\n> Tokens: 900 sent, 12 received.\n\n#### bye\n")
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	s := res.Sessions[0]
	if got, want := importertest.Roles(s), "system user assistant system user"; got != want {
		t.Errorf("roles %q, want %q", got, want)
	}
	// The rest of a multi-line output is Aider's, not a reply.
	res = readString(t, "# aider chat started at 2025-01-01 10:00:00\n\n> /usr/bin/aider --message fix the tests\nand the linter  \n> Aider v0.80.0  \n\n#### hi  \n\nhello\n\n")
	if got, want := importertest.Roles(res.Sessions[0]), "system user assistant"; got != want || !strings.Contains(res.Sessions[0].Messages[0].Text(), "and the linter\nAider v0.80.0") {
		t.Errorf("roles %q, want %q; %q", got, want, res.Sessions[0].Messages[0].Text())
	}
	// Aider logs the answer a group of questions got as if typed.
	res = readString(t, "# aider chat started at 2025-01-01 10:00:00\n\n> Aider v0.50.0  \n\n#### Create new file? (Y)es/(N)o/(A)ll/(S)kip all [Yes]: a  \n")
	if len(res.Sessions) != 0 || res.Skipped["empty-session"] != 1 {
		t.Errorf("an answer to Aider's question taken for a prompt: %d sessions", len(res.Sessions))
	}
}

// A reasoning model's thinking, which Aider wraps in its tag, is a
// reasoning part; a reply cut short inside it is reasoning alone.
func TestReasoning(t *testing.T) {
	res := readString(t, "# aider chat started at 2025-01-01 10:00:00\n\n> Aider v0.80.0  \n\n#### why?  \n\n<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\nOkay\n\n> litellm.APIConnectionError: stream ended  \n> Retrying in 0.2 seconds...  \n\n<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\nLet me think.\n\n</thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\nBecause.\n\n")
	s := res.Sessions[0]
	if got := importertest.Roles(s); got != "system user assistant system assistant" {
		t.Fatalf("roles %q", got)
	}
	cut, whole := s.Messages[2], s.Messages[4]
	if len(cut.Parts) != 1 || cut.Parts[0].Type != loom.PartReasoning || cut.Parts[0].Text != "Okay" {
		t.Errorf("cut short: %+v", cut.Parts)
	}
	if len(whole.Parts) != 2 || whole.Parts[0].Text != "Let me think." || whole.Parts[1].Type != loom.PartText || whole.Text() != "Because." {
		t.Errorf("whole: %+v", whole.Parts)
	}
}

// A long usage report puts the cost on a line of its own.
func TestCostOnItsOwnLine(t *testing.T) {
	res := readString(t, "# aider chat started at 2025-01-01 10:00:00\n\n> Aider v0.80.0  \n\n#### hi  \n\nhello\n\n> Tokens: 15k sent, 9.8k cache write, 1.0k received.  \n> Cost: $0.07 message, $0.07 session.  \n")
	u := res.Sessions[0].Messages[2].Usage
	if u.InputTokens != 5200 || u.CacheWriteTokens != 9800 || u.OutputTokens != 1000 || u.CostUSD != 0.07 {
		t.Errorf("usage %+v", u)
	}
	// Written as one output with a line break, only its first line is
	// quoted.
	res = readString(t, "# aider chat started at 2025-01-01 10:00:00\n\n> Aider v0.80.0  \n\n#### hi  \n\nhello\n\n> Tokens: 2k sent, 10 received.\nCost: $0.01 message, $0.01 session.  \n")
	s := res.Sessions[0]
	if got := importertest.Roles(s); got != "system user assistant system" || s.Messages[2].Usage.CostUSD != 0.01 {
		t.Errorf("roles %q, usage %+v", got, s.Messages[2].Usage)
	}
}

func TestNotAHistory(t *testing.T) {
	importertest.RefusesFile(t, Format{}, "notes.md", "# My notes\n\nnothing of aider\n", "")
	if res := readString(t, ""); len(res.Sessions) != 0 {
		t.Errorf("empty file: %d sessions", len(res.Sessions))
	}
	res := readString(t, "# aider chat started at yesterday\n\n#### hi  \n\nhello\n\n# aider chat started at 2025-01-01 10:00:00\n\n#### a  \n# aider chat started at 2025-01-01 10:00:00\n\n#### b  \n")
	if len(res.Sessions) != 3 || len(res.Problems) != 1 || res.Problems[0].Line != 1 {
		t.Fatalf("%d sessions, problems %v", len(res.Sessions), res.Problems)
	}
	if res.Sessions[1].SourceID == res.Sessions[2].SourceID {
		t.Error("two runs started in one second share an id")
	}
}

func TestBundles(t *testing.T) {
	got := importertest.BundleNames(t, Format{}, "api/"+HistoryFile, "web/sub/"+HistoryFile, "web/node_modules/x/"+HistoryFile, "api/.git/"+HistoryFile, "api/other.md")
	if got != "api/"+HistoryFile+",web/sub/"+HistoryFile {
		t.Errorf("bundles %v", got)
	}
	if (Format{}).Roots(os.Getenv, t.TempDir()) != nil {
		t.Error("Aider has no default location")
	}
}

// Importing a history, again, and once Aider appended a turn: the turn
// alone is added.
func TestImportGrows(t *testing.T) {
	st := importertest.Store(t)
	dir := t.TempDir()
	path := filepath.Join(dir, HistoryFile)
	whole, _ := os.ReadFile(sample)
	// Without the last run, which only quit.
	whole = whole[:strings.LastIndex(string(whole), "\n# aider chat started")]
	os.WriteFile(path, whole, 0o644)
	tr := importertest.Import(t, st, Format{}, dir)
	if tr.SessionsNew != 2 || tr.MessagesAdded != 13 || tr.ProblemCount != 0 {
		t.Fatalf("first import: %+v", tr)
	}
	if tr = importertest.Import(t, st, Format{}, dir); tr.MessagesAdded != 0 || tr.FilesUnchanged != 1 {
		t.Fatalf("second import: %+v", tr)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n#### and now a third question  \n\nA third answer.\n\n")
	f.Close()
	if tr = importertest.Import(t, st, Format{}, dir); tr.MessagesAdded != 2 || tr.SessionsGrown != 1 || tr.SessionsNew != 0 {
		t.Fatalf("grown import: %+v", tr)
	}
}
