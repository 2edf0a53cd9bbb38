package codex

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const sample = "../../testdata/agent-sessions/codex/vibecodingtracker-codex.jsonl"

// readFile reads one file through Format.
func readFile(t *testing.T, path string) *importer.Result {
	t.Helper()
	return importertest.ReadFile(t, Format{}, path)
}

// readString reads a rollout held in a string.
func readString(t *testing.T, text string) *importer.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout-2025-11-04T17-52-48-019a5000-0000-7000-8000-0000000000f1.jsonl")
	importertest.WriteFile(t, path, []byte(text), 0o644)
	return readFile(t, path)
}

// expect compares a result with the counts expected of it.
func expect(t *testing.T, res *importer.Result, roles, tools map[string]int, agents int, skipped map[string]int, problemLines []int) {
	t.Helper()
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(res.Sessions))
	}
	c := importertest.TallyOf(res.Sessions[0])
	if !maps.Equal(c.Roles, roles) {
		t.Errorf("messages by role = %v, want %v", c.Roles, roles)
	}
	if !maps.Equal(c.Tools, tools) {
		t.Errorf("tool parts by status = %v, want %v", c.Tools, tools)
	}
	if c.Agents != agents {
		t.Errorf("%d agent parts, want %d", c.Agents, agents)
	}
	if !maps.Equal(res.Skipped, skipped) {
		t.Errorf("skipped = %v, want %v", res.Skipped, skipped)
	}
	var lines []int
	for _, p := range res.Problems {
		lines = append(lines, p.Line)
	}
	if !slices.Equal(lines, problemLines) {
		t.Errorf("problems at lines %v, want %v: %v", lines, problemLines, res.Problems)
	}
}

// find returns the message with id, failing the test without it.
func find(t *testing.T, s *importer.Session, id string) *loom.Message {
	t.Helper()
	for _, m := range s.Messages {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("no message %s", id)
	return nil
}

// tool returns the tool part of call id.
func tool(t *testing.T, s *importer.Session, callID string) (*loom.Message, loom.Part) {
	t.Helper()
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type == loom.PartTool && p.CallID == callID {
				return m, p
			}
		}
	}
	t.Fatalf("no tool part %s", callID)
	return nil, loom.Part{}
}

func sameJSON(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

func text(t *testing.T, p json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(p, &s); err != nil {
		t.Fatalf("output %s is not a JSON string: %v", p, err)
	}
	return s
}

func TestSample(t *testing.T) {
	res := readFile(t, sample)
	// Counted with jq -s on the sample:
	//   [.[]|[.type,.payload.type]]|group_by(.)|map([.[0],length])
	//     session_meta 1, turn_context 19, response_item message 11
	//     (2 user, 9 assistant), reasoning 10 (all with an empty
	//     summary and no encrypted content), function_call 18 and
	//     function_call_output 18, custom_tool_call 1 and its output,
	//     event_msg agent_message 9, user_message 1, token_count 19
	//     (19 distinct totals), patch_apply_end 2 (call ids of no call);
	//   each run of assistant items between a tool output, a
	//     turn_context or a user message is one model call: 19;
	//   the outputs' metadata.exit_code are all 0 or absent;
	//   the 9 agent_message texts equal the 9 assistant texts, the
	//     user_message the request.
	expect(t, res,
		map[string]int{"system": 2, "user": 1, "assistant": 19},
		map[string]int{"completed": 19}, 0,
		map[string]int{
			"event_msg:agent_message":   9,
			"event_msg:user_message":    1,
			"event_msg:patch_apply_end": 2,
			"reasoning:empty":           10,
			"turn_context":              19,
		}, nil)
	s := res.Sessions[0]
	const sid = "01996135-afde-7911-97f0-d863511eca56"
	if s.SourceID != sid || s.Kind != loom.KindMain || s.ParentSourceID != "" || s.Title != "" {
		t.Errorf("session %s kind %s parent %q title %q", s.SourceID, s.Kind, s.ParentSourceID, s.Title)
	}
	if s.Cwd != "/proj/ds906659/gai/claude-code" || s.GitBranch != "main" || s.Version != "0.39.0" ||
		s.Model != "aide-gpt-5" || s.Provider != "" {
		t.Errorf("cwd %q branch %q version %q model %q provider %q", s.Cwd, s.GitBranch, s.Version, s.Model, s.Provider)
	}
	if !s.CreatedAt.Equal(importertest.Time(t, "2025-09-19T09:02:12.446Z")) || !s.UpdatedAt.Equal(importertest.Time(t, "2025-09-19T09:09:32.000Z")) {
		t.Errorf("created %v updated %v", s.CreatedAt, s.UpdatedAt)
	}
	if !strings.HasSuffix(s.Path, "vibecodingtracker-codex.jsonl") {
		t.Errorf("path %s", s.Path)
	}

	env := s.Messages[0]
	if env.ID != sid+":2" || env.Role != loom.RoleSystem || !strings.HasPrefix(env.Text(), "<environment_context>") {
		t.Errorf("first message %s %s %.30q", env.ID, env.Role, env.Text())
	}
	ide := find(t, s, sid+":3:context")
	if ide.Role != loom.RoleSystem || ide.Text() != "# Context from my IDE setup:" {
		t.Errorf("IDE context %s %q", ide.Role, ide.Text())
	}
	user := find(t, s, sid+":3")
	if user.Role != loom.RoleUser || !strings.HasPrefix(user.Text(), "幫我檢查一下 go.mod 裡面 為何 go版本是 1.24?") ||
		!strings.HasSuffix(user.Text(), "最後幫我把 TODO.md 刪除") || !user.CreatedAt.Equal(importertest.Time(t, "2025-09-19T09:02:12.677Z")) {
		t.Errorf("user message %s %q at %v", user.Role, user.Text(), user.CreatedAt)
	}

	// The first model call: its token count (line 7) comes before its
	// items, the first of which is the message on line 9.
	first := find(t, s, sid+":9")
	want := loom.Usage{InputTokens: 5645 - 5504, CacheReadTokens: 5504, OutputTokens: 810, ReasoningTokens: 640, APICalls: 1}
	if first.Role != loom.RoleAssistant || first.Usage != want || first.Model != "aide-gpt-5" {
		t.Errorf("first call %s usage %+v model %s, want %+v", first.Role, first.Usage, first.Model, want)
	}
	if len(first.Parts) != 2 || !strings.HasPrefix(first.Parts[0].Text, "I’ll scan the repo for go.mod") ||
		first.Parts[1].Name != "update_plan" || first.Parts[1].ID != sid+":9/1" {
		t.Errorf("first call parts %+v", first.Parts)
	}
	var total loom.Usage
	for _, m := range s.Messages {
		total.Add(m.Usage)
	}
	// The last token count's total_token_usage.
	want = loom.Usage{InputTokens: 270530 - 136832, CacheReadTokens: 136832, OutputTokens: 12551, ReasoningTokens: 9536, APICalls: 19}
	if total != want {
		t.Errorf("usage total %+v, want %+v", total, want)
	}

	m, ls := tool(t, s, "call_pEqHamKTEvL6ofrtlsNEi8dt")
	if m.ID != sid+":16" || ls.Name != "shell" || ls.Status != loom.ToolCompleted ||
		!strings.HasPrefix(text(t, ls.Output), "total 124\ndrwxrwxr-x 11 ds906659") ||
		!ls.StartedAt.Equal(importertest.Time(t, "2025-09-19T09:02:37.804Z")) || !ls.EndedAt.Equal(importertest.Time(t, "2025-09-19T09:02:37.804Z")) {
		t.Errorf("ls -la in %s: %+v", m.ID, ls)
	}
	sameJSON(t, ls.Input, `{"command":["bash","-lc","ls -la"]}`)
	sameJSON(t, ls.Metadata, `{"exit_code":0,"duration_seconds":0}`)

	_, rejected := tool(t, s, "call_K62tgMeXmdZijajRwxYxUb2i")
	if rejected.Status != loom.ToolCompleted || text(t, rejected.Output) != "patch rejected: empty patch" {
		t.Errorf("rejected patch %+v", rejected)
	}

	last := s.Messages[len(s.Messages)-1]
	m, exec := tool(t, s, "call_exec_patch_cell01")
	if m != last || exec.Name != "exec" || text(t, exec.Output) != "Script completed" ||
		!exec.StartedAt.Equal(importertest.Time(t, "2025-09-19T09:09:30.000Z")) || !exec.EndedAt.Equal(importertest.Time(t, "2025-09-19T09:09:30.500Z")) {
		t.Errorf("custom tool call %+v in %s", exec, m.ID)
	}
	sameJSON(t, exec.Input, `{"input":"await tools.apply_patch(patchText);"}`)
	if last.ID != sid+":106" || !strings.HasPrefix(last.Text(), "Here’s what I changed and what I found.") ||
		!last.CreatedAt.Equal(importertest.Time(t, "2025-09-19T09:09:18.355Z")) || !last.CompletedAt.Equal(importertest.Time(t, "2025-09-19T09:09:30.500Z")) {
		t.Errorf("last message %s %.40q %v–%v", last.ID, last.Text(), last.CreatedAt, last.CompletedAt)
	}
}

func TestNewer(t *testing.T) {
	res := readFile(t, "testdata/newer.jsonl")
	expect(t, res,
		map[string]int{"system": 5, "user": 3, "assistant": 8, "summary": 1},
		map[string]int{"completed": 4, "error": 3, "running": 1}, 1,
		map[string]int{
			"event_msg:agent_message":            1,
			"event_msg:agent_reasoning":          1,
			"event_msg:brand_new_event":          1,
			"event_msg:collab_agent_spawn_end":   1,
			"event_msg:exec_command_end":         1,
			"event_msg:patch_apply_end":          2,
			"event_msg:task_complete":            1,
			"event_msg:task_started":             2,
			"event_msg:token_count":              2,
			"event_msg:turn_aborted":             1,
			"event_msg:user_message":             2,
			"reasoning:encrypted":                1,
			"turn_context":                       2,
			"unknown:response_item:mystery_item": 1,
			"world_state":                        1,
		}, []int{48, 52})
	s := res.Sessions[0]
	const sid = "019a4958-d3b0-7c21-9a3e-1f2e3d4c5b6a"
	if s.SourceID != sid || s.Kind != loom.KindMain || s.Title != "Fix failing test" ||
		s.Cwd != "/home/dev/proj/other" || s.GitBranch != "feature/x" || s.Version != "0.53.0" ||
		s.Model != "gpt-5.1-codex-max" || s.Provider != "openai" {
		t.Errorf("session %+v", s)
	}
	if !s.CreatedAt.Equal(importertest.Time(t, "2025-11-03T10:52:29.488Z")) || !s.UpdatedAt.Equal(importertest.Time(t, "2025-11-03T10:53:36Z")) {
		t.Errorf("created %v updated %v", s.CreatedAt, s.UpdatedAt)
	}
	var roles []string
	for _, m := range s.Messages {
		roles = append(roles, m.Role+" "+strings.TrimPrefix(m.ID, sid+":"))
	}
	wantRoles := []string{"system 1", "system 2", "system 3", "system 4", "system 7:context", "user 7", "assistant 10", "assistant 17",
		"assistant 21", "assistant 25", "assistant 28", "assistant 33", "user 40", "assistant 42", "summary 45",
		"user 46", "assistant 47"}
	if !slices.Equal(roles, wantRoles) {
		t.Errorf("messages\n%v\nwant\n%v", roles, wantRoles)
	}
	if m := s.Messages[0]; m.Text() != "You are Codex, a coding agent." {
		t.Errorf("instructions %q", m.Text())
	}
	user := find(t, s, sid+":7")
	if user.Text() != "Fix the failing test" || len(user.Parts) != 2 || user.Parts[1].Type != loom.PartFile ||
		user.Parts[1].Mime != "image/png" || user.Parts[1].URL != "" {
		t.Errorf("user message %+v", user.Parts)
	}
	if find(t, s, sid+":7:context").Text() != "# Context from my IDE setup:\n\n## Active file: main.go" {
		t.Errorf("IDE context %q", find(t, s, sid+":7:context").Text())
	}

	usage := map[string]loom.Usage{
		"10": {InputTokens: 800, CacheReadTokens: 200, OutputTokens: 300, ReasoningTokens: 100, APICalls: 1},
		"17": {InputTokens: 500, CacheReadTokens: 1000, OutputTokens: 100, ReasoningTokens: 50, APICalls: 1},
		"21": {InputTokens: 700, CacheReadTokens: 800, OutputTokens: 100, APICalls: 1},
		"25": {},
		"28": {InputTokens: 300, CacheReadTokens: 900, OutputTokens: 60, ReasoningTokens: 20, APICalls: 1},
		"33": {InputTokens: 200, CacheReadTokens: 1100, OutputTokens: 40, APICalls: 1},
		"42": {},
		"47": {},
	}
	for line, u := range usage {
		if m := find(t, s, sid+":"+line); m.Usage != u {
			t.Errorf("message on line %s: usage %+v, want %+v", line, m.Usage, u)
		}
	}
	if m := find(t, s, sid+":10"); m.Model != "gpt-5.1-codex" || m.Provider != "openai" || m.Parts[0].Type != loom.PartReasoning ||
		m.Parts[0].Text != "**Reading the test**" {
		t.Errorf("first call %s %s %+v", m.Model, m.Provider, m.Parts[0])
	}
	if m := find(t, s, sid+":42"); m.Model != "gpt-5.1-codex-max" || m.Text() != "Running again." {
		t.Errorf("event-only agent message %s %q", m.Model, m.Text())
	}

	_, a := tool(t, s, "call_A")
	if a.Name != "exec_command" || a.Status != loom.ToolError || !strings.Contains(a.Error, "Process exited with code 1") ||
		!strings.HasSuffix(a.Error, "--- FAIL: TestX\nFAIL") || a.Output != nil {
		t.Errorf("failed command %+v", a)
	}
	sameJSON(t, a.Input, `{"cmd":"go test ./...","workdir":"/home/dev/proj"}`)
	_, b := tool(t, s, "call_B")
	if b.Status != loom.ToolCompleted || text(t, b.Output) != "Success. Updated the following files:\nM x_test.go\n" ||
		!b.StartedAt.Equal(importertest.Time(t, "2025-11-03T10:52:35.100Z")) || !b.EndedAt.Equal(importertest.Time(t, "2025-11-03T10:52:35.201Z")) {
		t.Errorf("patch %+v", b)
	}
	sameJSON(t, b.Metadata, `{"exit_code":0,"duration_seconds":0}`)
	_, c := tool(t, s, "call_C")
	if c.Status != loom.ToolError || c.Error != "apply_patch verification failed: Failed to find gone.go" {
		t.Errorf("patch the event says failed %+v", c)
	}
	_, d := tool(t, s, "call_D")
	if d.Name != "local_shell" || d.Status != loom.ToolCompleted || text(t, d.Output) != "total 0\n" {
		t.Errorf("local shell %+v", d)
	}
	sameJSON(t, d.Input, `{"type":"exec","command":["ls","-la"],"working_directory":"/home/dev/proj"}`)
	m, ws := tool(t, s, "line-28")
	if m.ID != sid+":28" || ws.Name != "web_search" || ws.Status != loom.ToolCompleted {
		t.Errorf("web search %+v", ws)
	}
	sameJSON(t, ws.Input, `{"type":"search","query":"go test flags"}`)
	m, e := tool(t, s, "call_E")
	agent := m.Parts[len(m.Parts)-1]
	if e.Name != "spawn_agent" || e.Status != loom.ToolCompleted || agent.Type != loom.PartAgent ||
		agent.Name != "explorer" || agent.SessionID != "019a4959-0000-7000-8000-00000000abcd" {
		t.Errorf("spawn %+v agent %+v", e, agent)
	}
	_, f := tool(t, s, "call_F")
	if f.Status != loom.ToolError || f.Error != loom.Interrupted || !f.EndedAt.Equal(importertest.Time(t, "2025-11-03T10:53:25Z")) {
		t.Errorf("aborted call %+v", f)
	}
	_, g := tool(t, s, "call_G")
	if g.Status != loom.ToolRunning || g.EndedAt != nil {
		t.Errorf("call without output %+v", g)
	}
	sum := find(t, s, sid+":45")
	if sum.Role != loom.RoleSummary || sum.Text() != "Summary: the failing test was fixed; the rerun was interrupted." ||
		sum.Usage.Compactions != 1 || !sum.CreatedAt.Equal(importertest.Time(t, "2025-11-03T10:53:30Z")) {
		t.Errorf("summary %+v", sum)
	}
	for _, p := range res.Problems {
		if p.File != "testdata/newer.jsonl" {
			t.Errorf("problem file %q", p.File)
		}
	}
}

func TestLegacy(t *testing.T) {
	res := readFile(t, "testdata/legacy.jsonl")
	expect(t, res, map[string]int{"system": 2, "user": 1, "assistant": 1}, map[string]int{"error": 1}, 0,
		map[string]int{"record_type:state": 2}, nil)
	s := res.Sessions[0]
	const sid = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
	if s.SourceID != sid || s.GitBranch != "main" || !s.CreatedAt.Equal(importertest.Time(t, "2025-05-07T17:24:21.123Z")) {
		t.Errorf("session %s branch %s created %v", s.SourceID, s.GitBranch, s.CreatedAt)
	}
	if m := s.Messages[0]; m.ID != sid+":1" || m.Role != loom.RoleSystem || m.Text() != "Be brief." {
		t.Errorf("instructions %s %s %q", m.ID, m.Role, m.Text())
	}
	a := find(t, s, sid+":5")
	if len(a.Parts) != 3 || a.Parts[0].Type != loom.PartReasoning || a.Parts[0].Text != "Greeting the user" ||
		a.Parts[1].Text != "Hello!" || a.Parts[2].Status != loom.ToolError || a.Parts[2].Error != "boom" ||
		!a.CreatedAt.Equal(s.CreatedAt) {
		t.Errorf("assistant %+v", a)
	}
}

func TestMalformed(t *testing.T) {
	res := readString(t, `{"timestamp":"2025-11-04T17:52:48.700Z","type":"session_meta","payload":{"id":"019a5000-0000-7000-8000-0000000000f1","cwd":5}}
not json at all
{"timestamp":"2025-11-04T17:52:49Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"still read"}]}}
{"timestamp":"2025-11-04T17:52:50Z","type":"response_item","payload":{"type":"message","role":"assistant","content":"plain"}}
{"timestamp":"2025-11-04T17:52:51Z","type":"response_item","payload":{"type":"function_call","call_id":"x","arguments":"not json"}}
{"timestamp":"2025-11-04T17:52:52Z","type":"response_item","payload":{"type":"function_call_output","call_id":"nowhere","output":"lost"}}
{"timestamp":"2025-11-04T17:52:53Z","type":"turn_context","payload":{"model":7}}
{"timestamp":"2025-11-04T17:52:54Z","type":"compacted","payload":{"message":""}}
{"timestamp":"2025-11-04T17:52:55Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":"many"}}}}
[1,2]
{"type":"`+strings.Repeat("x", 100)+`","payload":{}}
`)
	// The session_meta that cannot be read leaves the id to the file
	// name; the output of an unknown call keeps a part of its own.
	expect(t, res, map[string]int{"user": 1, "assistant": 1}, map[string]int{"completed": 1, "running": 1}, 0,
		map[string]int{"compacted:encrypted": 1, "unknown:" + strings.Repeat("x", importer.MaxTypeName) + "…": 1}, []int{0, 1, 2, 7, 9, 10})
	s := res.Sessions[0]
	if s.SourceID != "019a5000-0000-7000-8000-0000000000f1" || s.Cwd != "" {
		t.Errorf("id %s cwd %s", s.SourceID, s.Cwd)
	}
	m := s.Messages[1]
	if len(m.Parts) != 3 || m.Parts[0].Text != "plain" || m.Parts[1].Name != "unknown" ||
		m.Parts[2].Name != "unknown" || m.Parts[2].CallID != "nowhere" || text(t, m.Parts[2].Output) != "lost" {
		t.Errorf("assistant %+v", m.Parts)
	}
	sameJSON(t, m.Parts[1].Input, `{"arguments":"not json"}`)

	if res, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{writeTemp(t, "")}}); err != nil || len(res.Sessions) != 0 {
		t.Errorf("empty file: %v, %v", res, err)
	}
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{writeTemp(t, "hello\nworld\n")}}); err == nil {
		t.Error("a file of no rollout lines read without error")
	}
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{filepath.Join(t.TempDir(), "gone.jsonl")}}); err == nil {
		t.Error("a missing file read without error")
	}
}

func writeTemp(t *testing.T, s string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout-x.jsonl")
	importertest.WriteFile(t, path, []byte(s), 0o644)
	return path
}

// TestStableIDs reads a rollout cut short at every line, as while Codex
// writes it: the messages and parts it has keep their ids when the rest
// is read. The real 0.39 rollout writes each reply's agent_message event
// before the response items that repeat it: a reading stopped between
// them does not start the reply at the event.
func TestStableIDs(t *testing.T) {
	for _, file := range []string{"testdata/newer.jsonl", sample} {
		t.Run(filepath.Base(file), func(t *testing.T) { stableIDs(t, file) })
	}
}

func stableIDs(t *testing.T, file string) {
	data := importertest.ReadBytes(t, file)
	full := readFile(t, file).Sessions[0]
	ids := map[string]bool{}
	for _, m := range full.Messages {
		ids[m.ID] = true
		for _, p := range m.Parts {
			ids[p.ID] = true
		}
	}
	lines := strings.SplitAfter(string(data), "\n")
	for n := 1; n < len(lines); n++ {
		res := readString(t, strings.Join(lines[:n], ""))
		for _, m := range res.Sessions[0].Messages {
			if !ids[m.ID] {
				t.Errorf("after %d lines: message %s not in the whole file", n, m.ID)
			}
			for _, p := range m.Parts {
				if !ids[p.ID] {
					t.Errorf("after %d lines: part %s not in the whole file", n, p.ID)
				}
			}
		}
	}
}

// Codex 0.169 compacts a long history (over model_auto_compact_token_limit)
// with a model call whose answer it writes as an assistant message, then
// a compacted line holding that answer after its own preamble: the
// answer is the summary message, once, not a reply too, and the call's
// usage is counted once. The file is what Codex 0.169.0 wrote.
func TestCompactionAnswerIsTheSummary(t *testing.T) {
	res := readFile(t, "testdata/rollout-2026-11-24T16-32-10-01a20e66-874d-7a31-848b-7a86278579e3.jsonl")
	s := res.Sessions[0]
	var roles []string
	var summary *loom.Message
	for _, m := range s.Messages {
		if m.Role == loom.RoleSystem {
			continue
		}
		roles = append(roles, m.Role+": "+m.Text())
		if m.Role == loom.RoleSummary {
			summary = m
		}
	}
	want := []string{"user: Big turn.", "assistant: A big answer.", "summary: ", "user: After the big turn?", "assistant: Still here after the summary."}
	if len(roles) != len(want) {
		t.Fatalf("messages %q, want %q", roles, want)
	}
	for i := range want {
		if !strings.HasPrefix(roles[i], want[i]) {
			t.Errorf("message %d is %q, want %q…", i, roles[i], want[i])
		}
	}
	if summary == nil || !strings.HasSuffix(summary.Text(), "Progress: one big answer was given.") || summary.Usage.Compactions != 1 ||
		summary.Usage.InputTokens != 1900 || summary.Usage.OutputTokens != 30 {
		t.Errorf("summary %+v", summary)
	}
	var total loom.Usage
	for _, m := range s.Messages {
		total.Add(m.Usage)
	}
	if total.InputTokens != 6000+1900+2000 || total.OutputTokens != 10+30+6 || total.Compactions != 1 || total.APICalls != 3 {
		t.Errorf("usage %+v, want 9900 in, 46 out, 3 calls, 1 compaction", total)
	}
}
