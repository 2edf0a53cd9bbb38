package copilot

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

func readID(t *testing.T, id string) (*importer.Result, *importer.Session) {
	t.Helper()
	res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{filepath.Join("testdata", "session-state", id, "events.jsonl")}})
	if err != nil {
		t.Fatal(err)
	}
	importertest.CheckComplete(t, res)
	return res, importertest.Session(t, res, id)
}

// Files Copilot CLI 1.0.102 wrote against a fake model, in the flows of
// TestImportRealCopilot (package cli): two turns, the second by
// --continue; a file viewed with reasoning; a sub-agent (the task tool)
// and a /compact; a compaction cancelled after its model call.
func TestReadReal(t *testing.T) {
	bundles, err := Format{}.Bundles(context.Background(), "testdata/session-state")
	if err != nil || len(bundles) != 4 {
		t.Fatalf("bundles %v, %v", bundles, err)
	}

	res, s := readID(t, "f38b1538-c803-496e-b3ed-d1ee7c75be85")
	if got := importertest.Roles(s); got != "user assistant user assistant" {
		t.Errorf("roles %q", got)
	}
	if got := importertest.PartTexts(importertest.PartsOf(s, loom.RoleUser, loom.PartText)); !slices.Equal(got, []string{"Say hello in one line.", "One more on the greeting?"}) {
		t.Errorf("prompts %q", got)
	}
	if s.Cwd != "/tmp/ch/work" || s.Version != "1.0.102" || s.Model != "gpt-fake" {
		t.Errorf("session %+v", s)
	}
	u := s.Messages[1].Usage
	if u.InputTokens != 900 || u.CacheReadTokens != 100 || u.OutputTokens != 10 || u.ReasoningTokens != 3 || u.APICalls != 1 {
		t.Errorf("usage %+v", u)
	}
	if res.Skipped["system.message"] == 0 || len(res.Problems) != 0 {
		t.Errorf("skipped %v, problems %v", res.Skipped, res.Problems)
	}

	_, s = readID(t, "e077fa0d-a491-487d-aa99-2b8a8f52d9a4")
	if got := importertest.PartTexts(importertest.PartsOf(s, "", loom.PartReasoning)); !slices.Equal(got, []string{"The user wants the file.", "Both lines are read."}) {
		t.Errorf("reasoning %q", got)
	}
	tools := importertest.PartsOf(s, "", loom.PartTool)
	if len(tools) != 1 || tools[0].Name != "view" || tools[0].Status != loom.ToolCompleted || string(tools[0].Output) != `"alpha\nbeta\n"` ||
		!strings.Contains(string(tools[0].Input), "notes.txt") {
		t.Errorf("tool parts %+v", tools)
	}

	const parent = "81116490-9c1b-4516-88cb-57204f45a0a7"
	res, s = readID(t, parent)
	sub := importertest.Session(t, res, parent+"/call_fake4_0")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != parent || sub.Title != "count lines" ||
		importertest.Roles(sub) != "user assistant" || !strings.HasPrefix(sub.Messages[0].Text(), "SUBTASK-COUNT") {
		t.Errorf("sub-agent %+v: %s", sub, importertest.Roles(sub))
	}
	if got := importertest.Roles(s); got != "user assistant assistant summary" {
		t.Errorf("roles %q", got)
	}
	agents := importertest.PartsOf(s, "", loom.PartAgent)
	if len(agents) != 1 || agents[0].SessionID != sub.SourceID || agents[0].Name != "general-purpose" {
		t.Errorf("agent parts %+v", agents)
	}
	sum := s.Messages[len(s.Messages)-1]
	if sum.Text() != "Hello there." || sum.Usage.Compactions != 1 || sum.Usage.InputTokens != 900 || sum.Usage.OutputTokens != 10 {
		t.Errorf("summary %q %+v", sum.Text(), sum.Usage)
	}
}

// TestReadCancelledCompaction: a compaction Copilot CLI started in the
// background (its prompt budget of 14000 tokens crossed) and cancelled
// when the turn ended, after its model call, is no summary; the call
// it made is a system message saying so, with the call's usage, so
// that the session counts the three calls the model answered.
func TestReadCancelledCompaction(t *testing.T) {
	res, s := readID(t, "facd8b4a-4076-4dc1-a7ca-52feedc13136")
	if got := importertest.Roles(s); got != "user assistant assistant system" {
		t.Fatalf("roles %q", got)
	}
	m := s.Messages[3]
	if m.Text() != "Compaction cancelled; its summary was not kept." || m.Usage != (loom.Usage{InputTokens: 5000, OutputTokens: 30, APICalls: 1}) {
		t.Errorf("the cancelled compaction: %q, %+v", m.Text(), m.Usage)
	}
	var total loom.Usage
	for _, m := range s.Messages {
		total.Add(m.Usage)
	}
	if total.APICalls != 3 || total.InputTokens != 13000+5000+13500 || total.OutputTokens != 10+30+9 || total.Compactions != 0 {
		t.Errorf("the session's usage %+v", total)
	}
	if res.Skipped["session.compaction_complete:failed"] != 0 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// TestReadHandWritten: a failed tool, a call left without a result, an
// event that is not JSON, and a usage record matched by its API call.
func TestReadHandWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	data := `{"type":"session.start","data":{"sessionId":"s1","copilotVersion":"9.9","context":{"cwd":"/w","branch":"main"}},"id":"e0","timestamp":"2026-01-02T03:04:05Z"}
{"type":"user.message","data":{"content":"go"},"id":"e1","timestamp":"2026-01-02T03:04:06Z"}
{"type":"session.usage_record","data":{"usage":{"apiCallId":"a1","inputTokens":50,"outputTokens":5}},"id":"e2"}
{"type":"assistant.message","data":{"content":"","apiCallId":"a1","toolRequests":[{"toolCallId":"c1","name":"bash","arguments":{"command":"false"}}]},"id":"e3"}
{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":false,"error":{"message":"exit 1"}},"id":"e4"}
not json
{"type":"assistant.message","data":{"toolRequests":[{"toolCallId":"c2","name":"view","arguments":"x"}]},"id":"e5"}
{"type":"future.event","data":{},"id":"e6"}
`
	importertest.WriteFile(t, path, []byte(data), 0o644)
	res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	importertest.CheckComplete(t, res)
	s := importertest.Session(t, res, "s1")
	if s.GitBranch != "main" || s.Version != "9.9" || len(res.Problems) != 1 || res.Skipped["future.event"] != 1 {
		t.Errorf("session %+v, problems %v, skipped %v", s, res.Problems, res.Skipped)
	}
	tools := importertest.PartsOf(s, "", loom.PartTool)
	if len(tools) != 2 || tools[0].Status != loom.ToolError || tools[0].Error != "exit 1" ||
		tools[1].Error != importer.NoResult || string(tools[1].Input) != `{"value":"x"}` {
		t.Errorf("tool parts %+v", tools)
	}
	if u := s.Messages[1].Usage; u.InputTokens != 50 || u.OutputTokens != 5 {
		t.Errorf("usage %+v", u)
	}
}

// TestNotCopilot: a file of JSON lines that are not events is refused.
func TestNotCopilot(t *testing.T) {
	importertest.RefusesFile(t, Format{}, "events.jsonl", `{"a":1}`+"\n", "not a Copilot CLI events file")
}

// TestRoots: COPILOT_HOME, as Copilot CLI reads it.
func TestRoots(t *testing.T) {
	if got := (Format{}).Roots(func(string) string { return "" }, "/h"); !slices.Equal(got, []string{"/h/.copilot/session-state"}) {
		t.Errorf("default roots %v", got)
	}
	if got := (Format{}).Roots(func(k string) string { return map[string]string{EnvHome: "/c"}[k] }, "/h"); !slices.Equal(got, []string{"/c/session-state"}) {
		t.Errorf("roots %v", got)
	}
}
