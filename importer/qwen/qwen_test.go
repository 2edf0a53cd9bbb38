package qwen

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

const project = "testdata/projects/-tmp-qh-work"

// readReal reads a chat file Qwen Code 0.24.4 wrote, found by its
// session id, through Bundles as an import does.
func readReal(t *testing.T, id string) *importer.Result {
	t.Helper()
	bundles, err := Format{}.Bundles(context.Background(), "testdata/projects")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bundles {
		if strings.TrimSuffix(filepath.Base(b.Name()), ".jsonl") == id {
			res, err := Format{}.Read(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			importertest.CheckComplete(t, res)
			return res
		}
	}
	t.Fatalf("no bundle of %s among %v", id, bundles)
	return nil
}

// Files Qwen Code 0.24.4 wrote against a fake model, in the flows of
// TestImportRealQwen (package cli): two
// turns, the second by --continue; a file read with reasoning; a
// sub-agent, a /compress and a turn after it.
func TestReadReal(t *testing.T) {
	res := readReal(t, "89c7aa28-f4b4-47f5-8a3a-7285dd27ba7d")
	s := importertest.Session(t, res, "89c7aa28-f4b4-47f5-8a3a-7285dd27ba7d")
	if got := importertest.Roles(s); got != "user assistant user assistant" {
		t.Errorf("roles %q", got)
	}
	if got := importertest.PartTexts(importertest.PartsOf(s, loom.RoleUser, loom.PartText)); !slices.Equal(got, []string{"Say hello in one line.", "One more on the greeting?"}) {
		t.Errorf("prompts %q", got)
	}
	if s.Cwd != "/tmp/qh/work" || s.Version != "0.24.4" || s.Model != "gpt-fake" {
		t.Errorf("session %+v", s)
	}
	u := s.Messages[1].Usage
	if u.InputTokens != 900 || u.CacheReadTokens != 100 || u.OutputTokens != 10 || u.ReasoningTokens != 3 || u.APICalls != 1 {
		t.Errorf("usage %+v", u)
	}
	if res.Skipped["system:ui_telemetry"] == 0 || res.Skipped["user:system-reminder"] != 0 {
		t.Errorf("skipped %v", res.Skipped)
	}

	res = readReal(t, "0eabb966-8635-48db-a857-f8d8c01eec6b")
	s = importertest.Session(t, res, "0eabb966-8635-48db-a857-f8d8c01eec6b")
	if got := importertest.PartTexts(importertest.PartsOf(s, "", loom.PartReasoning)); !slices.Equal(got, []string{"The user wants the file.", "Both lines are read."}) {
		t.Errorf("reasoning %q", got)
	}
	var tool *loom.Part
	for _, m := range s.Messages {
		for i := range m.Parts {
			if m.Parts[i].Type == loom.PartTool {
				tool = &m.Parts[i]
			}
		}
	}
	if tool == nil || tool.Name != "read_file" || tool.Status != loom.ToolCompleted || string(tool.Output) != `"alpha\nbeta\n"` ||
		!strings.Contains(string(tool.Input), "notes.txt") {
		t.Errorf("tool part %+v", tool)
	}

	const parent = "705f6bf6-61dc-4ac9-a53a-4bfb1a314729"
	res = readReal(t, parent)
	s = importertest.Session(t, res, parent)
	sub := importertest.Session(t, res, parent+"/general-purpose-call_fake7_0")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != parent || sub.Title != "count lines" ||
		importertest.Roles(sub) != "user assistant" || !strings.HasPrefix(sub.Messages[0].Text(), "SUBTASK-COUNT") {
		t.Errorf("sub-agent %+v: %s", sub, importertest.Roles(sub))
	}
	var agent *loom.Part
	for _, m := range s.Messages {
		for i, p := range m.Parts {
			if p.Type == loom.PartAgent {
				agent = &m.Parts[i]
				if i == 0 || m.Parts[i-1].Name != "agent" {
					t.Errorf("the agent part does not follow the agent call: %+v", m.Parts)
				}
			}
		}
	}
	if agent == nil || agent.SessionID != sub.SourceID || agent.Name != "general-purpose" {
		t.Errorf("agent part %+v", agent)
	}
	// The task notification is a system message; the compression a
	// summary, then the turn after it, the reminder left out.
	roles := importertest.Roles(s)
	if !strings.Contains(roles, "system") || !strings.HasSuffix(roles, "summary user assistant") {
		t.Errorf("roles %q", roles)
	}
	for _, m := range s.Messages {
		if m.Role == loom.RoleSummary && (m.Text() != "<state_snapshot>One question was answered.</state_snapshot>\n\nResume the prior task using the summary above. Continue from the last in-flight step; do not acknowledge the summary, do not re-introduce, do not greet the user again." ||
			m.Usage.Compactions != 1) {
			t.Errorf("summary %q %+v", m.Text(), m.Usage)
		}
	}
	if got := importertest.PartTexts(importertest.PartsOf(s, loom.RoleUser, loom.PartText)); !slices.Equal(got, []string{"Delegate the count to a helper.", "After the compaction?"}) {
		t.Errorf("prompts %q", got)
	}
	if res.Skipped["user:system-reminder"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// TestSubagentCalls: a sub-agent's reply of text and a read_file call,
// which Qwen Code 0.24.4 records as two assistant records (the second
// without usage) in TestImportRealQwen's flow, is one model call: the
// sub-agent counts the two calls the model answered, not three.
func TestSubagentCalls(t *testing.T) {
	const id = "444a0a81-7177-447e-b0c7-89626e14cd79"
	res := readReal(t, id)
	sub := importertest.Session(t, res, id+"/general-purpose-call_fake10_0")
	if got := importertest.Roles(sub); got != "user assistant assistant assistant" {
		t.Fatalf("roles %q", got)
	}
	var total loom.Usage
	for _, m := range sub.Messages {
		total.Add(m.Usage)
	}
	if total.APICalls != 2 || total.InputTokens != 700+800 || total.OutputTokens != 9+6 {
		t.Errorf("the sub-agent's usage %+v", total)
	}
	if p := sub.Messages[2].Parts[0]; p.Name != "read_file" || p.Status != loom.ToolCompleted {
		t.Errorf("the read %+v", p)
	}
}

// TestRewound: records off the path to the last record (a turn Qwen Code
// rewound away) are left out, counted; a record whose parent is unknown
// is a problem and starts a new root.
func TestRewound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	rec := func(id, parent, typ, body string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"uuid":"` + id + `","parentUuid":` + p + `,"sessionId":"s","timestamp":"2026-01-02T03:04:05Z","type":"` + typ + `",` + body + "}\n"
	}
	data := rec("u1", "", "user", `"message":{"role":"user","parts":[{"text":"first"}]}`) +
		rec("a1", "u1", "assistant", `"message":{"role":"model","parts":[{"text":"one"}]}`) +
		rec("u2", "a1", "user", `"message":{"role":"user","parts":[{"text":"rewound away"}]}`) +
		rec("a2", "u2", "assistant", `"message":{"role":"model","parts":[{"text":"gone"},{"functionCall":{"id":"c","name":"x"}}]}`) +
		rec("r", "a1", "system", `"subtype":"rewind"`) +
		rec("u3", "r", "user", `"message":{"role":"user","parts":[{"text":"second"}]}`) +
		rec("a3", "u3", "assistant", `"message":{"role":"model","parts":[{"functionCall":{"id":"c2","name":"read_file","args":{"file_path":"x"}}}]}`) +
		"not json\n"
	importertest.WriteFile(t, path, []byte(data), 0o644)
	res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	importertest.CheckComplete(t, res)
	s := importertest.Session(t, res, "s")
	if got := importertest.PartTexts(importertest.PartsOf(s, loom.RoleUser, loom.PartText)); !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("prompts %q", got)
	}
	if res.Skipped["rewound:user"] != 1 || res.Skipped["rewound:assistant"] != 1 || len(res.Problems) != 1 {
		t.Errorf("skipped %v, problems %v", res.Skipped, res.Problems)
	}
	last := s.Messages[len(s.Messages)-1].Parts[0]
	if last.Status != loom.ToolError || last.Error != importer.NoResult {
		t.Errorf("the last call %+v", last)
	}
}

// TestNotQwen: a file of JSON lines that are not records is refused.
func TestNotQwen(t *testing.T) {
	importertest.RefusesFile(t, Format{}, "x.jsonl", `{"a":1}`+"\n", "not a Qwen Code chat file")
}

// TestRoots: QWEN_RUNTIME_DIR and QWEN_HOME, as Qwen Code reads them.
func TestRoots(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if got := (Format{}).Roots(get, "/h"); !slices.Equal(got, []string{"/h/.qwen/projects", "/h/.qwen/tmp"}) {
		t.Errorf("default roots %v", got)
	}
	env[EnvHome], env[EnvRuntimeDir] = "/h/q", "/run/q"
	if got := (Format{}).Roots(get, "/h"); !slices.Equal(got, []string{"/run/q/projects", "/h/q/projects", "/h/q/tmp"}) {
		t.Errorf("roots %v", got)
	}
}

// Qwen Code 0.1 recorded each session as Gemini CLI's one-document
// recording under ~/.qwen/tmp/<project hash>/chats/, its replies typed
// "qwen". testdata/tmp holds what Qwen Code 0.1.4 wrote, run offline
// against a fake OpenAI-compatible model: two sessions of one prompt
// each (`qwen -p`, which resumes none), the second's input partly
// cached.
func TestReadEarlyRecording(t *testing.T) {
	roots := Format{}.Roots(func(string) string { return "" }, "/home/u")
	if !slices.Contains(roots, filepath.Join("/home/u", ".qwen", "tmp")) {
		t.Fatalf("roots %v lack ~/.qwen/tmp", roots)
	}
	bundles, err := Format{}.Bundles(context.Background(), "testdata/tmp")
	if err != nil {
		t.Fatal(err)
	}
	if len(bundles) != 2 {
		t.Fatalf("bundles = %v, want the two recordings", bundles)
	}
	want := []struct {
		id, prompt, reply string
		input, cached     int64
	}{
		{"954dd1f0-782f-4839-bca5-ba317257d9e3", "What does main.go print?", `It prints "hello, world" followed by a newline.`, 1834, 0},
		{"e6f2f886-", "And with -v?", "The same: main.go reads no flags.", 1870, 1024},
	}
	for i, b := range bundles {
		res, err := Format{}.Read(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Sessions) != 1 || len(res.Problems) != 0 || len(res.Skipped) != 0 {
			t.Fatalf("%s: sessions %d, problems %v, skipped %v", b.Name(), len(res.Sessions), res.Problems, res.Skipped)
		}
		s, w := res.Sessions[0], want[i]
		if !strings.HasPrefix(s.SourceID, w.id) || s.Cwd != "" {
			t.Errorf("source id %q, cwd %q", s.SourceID, s.Cwd)
		}
		if got := importertest.PartTexts(importertest.PartsOf(s, loom.RoleUser, loom.PartText)); !slices.Equal(got, []string{w.prompt}) {
			t.Errorf("prompts %q", got)
		}
		if got := importertest.PartTexts(importertest.PartsOf(s, loom.RoleAssistant, loom.PartText)); !slices.Equal(got, []string{w.reply}) {
			t.Errorf("replies %q", got)
		}
		var u loom.Usage
		for _, m := range s.Messages {
			u.Add(m.Usage)
			if m.Role == loom.RoleAssistant && m.Model != "qwen3-coder-plus" {
				t.Errorf("model %q", m.Model)
			}
		}
		if u.InputTokens+u.CacheReadTokens != w.input || u.CacheReadTokens != w.cached || u.OutputTokens == 0 || u.APICalls != 1 {
			t.Errorf("%s: usage %+v", s.SourceID, u)
		}
	}
}
