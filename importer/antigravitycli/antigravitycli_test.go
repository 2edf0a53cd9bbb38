package antigravitycli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	idA = "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
	idB = "9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b"
)

var (
	root  = filepath.Join("testdata", "brain")
	logsA = filepath.Join(root, idA, ".system_generated", "logs")
	logsB = filepath.Join(root, idB, ".system_generated", "logs")
)

// The conversation with both transcripts is read from the whole one:
// the prompt unwrapped, the model its settings change chose on the
// replies after it, the reminder a system message, the reply's
// reasoning, text and call completed by the tool's step naming it, the
// failed command a call of its own, the answer, the plain prompt, a
// reply of reasoning alone.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, root, 2, idA, "user system assistant assistant assistant user assistant")
	if s.Model != "Gemini 3.1 Pro (High)" || s.Path != filepath.Join(logsA, fullName) {
		t.Fatalf("session model %q path %q", s.Model, s.Path)
	}
	importertest.CheckTexts(t, s, loom.RoleUser, "Why does the cart total drift by a cent?", "Then do it, and add a test.")
	importertest.CheckTexts(t, s, loom.RoleSystem, "Remember to keep the task list up to date.")
	if s.CreatedAt.Format("15:04:05") != "20:14:42" || s.UpdatedAt.Format("15:04:05") != "20:16:14" {
		t.Errorf("times %v %v", s.CreatedAt, s.UpdatedAt)
	}
	m := s.Messages[2]
	if m.ID != "step-3" || m.Model != "Gemini 3.1 Pro (High)" || len(m.Parts) != 3 || m.Parts[0].Type != loom.PartReasoning ||
		m.Parts[1].Text != "Reading the cart's total first." {
		t.Fatalf("reply %s %+v", m.ID, m.Parts)
	}
	if c := m.Parts[2]; c.Name != "view_file" || c.CallID != "call-view-1" || c.Status != loom.ToolCompleted ||
		!bytes.Contains(c.Output, []byte("func Total")) || !bytes.Contains(c.Input, []byte("cart.go")) {
		t.Errorf("call %+v", c)
	}
	if c := s.Messages[3].Parts[0]; c.Name != "run_command" || c.Status != loom.ToolError ||
		!bytes.Contains([]byte(c.Error), []byte("exit status 1")) || !bytes.Contains(c.Input, []byte("go test")) {
		t.Errorf("failed command %+v", c)
	}
	if p := s.Messages[6].Parts; len(p) != 1 || p[0].Type != loom.PartReasoning {
		t.Errorf("last reply %+v", p)
	}
	if res.Skipped["CHECKPOINT"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	b := importertest.Session(t, res, idB)
	if importertest.Roles(b) != "user assistant assistant" || b.Model != "" {
		t.Fatalf("short transcript %s %q", importertest.Roles(b), b.Model)
	}
	importertest.CheckTexts(t, b, loom.RoleUser, "List the TODOs in this repository.")
	if c := b.Messages[1].Parts[0]; c.Name != "grep_search" || c.Status != loom.ToolCompleted || !bytes.Contains(c.Output, []byte("ship.go:40")) {
		t.Errorf("tool's step %+v", c)
	}
}

// Of a conversation, the whole transcript is the one bundle; the short
// one alone is read when it is alone, and a transcript.jsonl outside a
// .system_generated/logs is not agy's.
func TestBundles(t *testing.T) {
	got := importertest.BundlesUnder(t, Format{}, root)
	if len(got) != 2 || filepath.Base(got[0]) != fullName || filepath.Base(got[1]) != shortName {
		t.Fatalf("bundles %v", got)
	}
	dir := importertest.CopyDir(t, root)
	importertest.MkdirAll(t, filepath.Join(dir, "elsewhere"))
	importertest.WriteFile(t, filepath.Join(dir, "elsewhere", shortName), []byte("{}\n"), 0o644)
	if err := os.Remove(filepath.Join(dir, idA, ".system_generated", "logs", fullName)); err != nil {
		t.Fatal(err)
	}
	res := importertest.ReadSessions(t, Format{}, dir, 2)
	if s := importertest.Session(t, res, idA); importertest.Roles(s) != "user assistant assistant" {
		t.Errorf("short transcript read: %s", importertest.Roles(s))
	}
}

// A line made non-JSON in the middle is one problem line; the steps
// after it are read, a tool's step whose reply was lost a call of its
// own.
func TestDamagedLine(t *testing.T) {
	dir := importertest.CopyDir(t, root)
	path := filepath.Join(dir, idA, ".system_generated", "logs", fullName)
	lines := bytes.Split(bytes.TrimRight(importertest.ReadBytes(t, path), "\n"), []byte("\n"))
	lines[3] = []byte(`{"step_index":3,"source":"MODEL", not json`)
	importertest.WriteFile(t, path, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644)
	res := importertest.ReadAll(t, Format{}, dir)
	if len(res.Problems) != 1 || res.Problems[0].Line != 4 {
		t.Fatalf("problems %v", res.Problems)
	}
	s := importertest.Session(t, res, idA)
	if importertest.Roles(s) != "user system assistant assistant assistant user assistant" {
		t.Fatalf("roles %s", importertest.Roles(s))
	}
	if c := s.Messages[2].Parts[0]; c.Name != "view_file" || c.Status != loom.ToolCompleted {
		t.Errorf("tool's step %+v", c)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, root, 2, 10)
	importertest.ImportsAndFollows(t, Format{}, root, 2, 10, filepath.Join(idB, ".system_generated", "logs", shortName),
		`{"step_index":4,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","created_at":"2026-06-12T08:02:00Z","content":"<USER_REQUEST>\nFix the first.\n</USER_REQUEST>"}`)
}

// Its places: agy's brain/ and the IDE's; $LOOM_ANTIGRAVITY_CLI_DIR
// replaces them.
func TestRoots(t *testing.T) {
	want := []string{"/home/u/.gemini/antigravity-cli/brain", "/home/u/.gemini/antigravity/brain", "/home/u/.gemini/antigravity-ide/brain"}
	if got := (Format{}).Roots(nil, "/home/u"); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("roots %v", got)
	}
	if got := (Format{}).Roots(importertest.Getenv("LOOM_ANTIGRAVITY_CLI_DIR", "/x/agy"), "/home/u"); len(got) != 1 || got[0] != "/x/agy" {
		t.Errorf("with $LOOM_ANTIGRAVITY_CLI_DIR: %v", got)
	}
}

func TestModelOf(t *testing.T) {
	for in, want := range map[string]string{
		"The user changed setting `Model Selection` from None to Gemini 3.1 Pro (High). No need to comment on this change.": "Gemini 3.1 Pro (High)",
		"changed from Gemini 3 Flash to None. done": "",
		"no change named":              "",
		"from A to Claude Sonnet 4.6.": "Claude Sonnet 4.6",
	} {
		if got := modelOf([]string{in}); got != want {
			t.Errorf("modelOf(%q) = %q, want %q", in, got, want)
		}
	}
	if got := blocks("<A>one</A> x <A>two</A><A>open", "A"); len(got) != 2 || got[1] != "two" {
		t.Errorf("blocks %q", got)
	}
}
