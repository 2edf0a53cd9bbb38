package claudecode

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

func TestSpotterSession(t *testing.T) {
	dir := filepath.Join(samples, "spotter")
	res := readFiles(t, filepath.Join(dir, spotterID+".jsonl"),
		filepath.Join(dir, spotterID, "subagents", "agent-a881341.jsonl"),
		filepath.Join(dir, spotterID, "subagents", "agent-acompact-fffbd0.jsonl"))
	checkNoProblems(t, res)
	// 1333 progress lines in the session file and 2 in the sub-agent's;
	// 9 replies open with a blank "\n\n" text block.
	checkSkipped(t, res, map[string]int{
		"progress": 1335, "file-history-snapshot": 28, "queue-operation": 6,
		"system:stop_hook_summary": 3, "system:turn_duration": 1, "text:blank": 9,
	})
	agentID, compactID := spotterID+"/agent-a881341", spotterID+"/agent-acompact-fffbd0"
	if got := importertest.SourceIDs(res.Sessions); !slices.Equal(got, []string{spotterID, agentID, compactID}) {
		t.Fatalf("sessions = %v", got)
	}

	s := importertest.Session(t, res, spotterID)
	// 192 user lines: 186 tool results, 2 prompts, an interruption and
	// two task notifications (system), the compaction summary; 299
	// assistant lines are 152 replies.
	checkTally(t, s, tally{
		Roles:     map[string]int{"user": 2, "assistant": 152, "system": 3, "summary": 1},
		Tools:     map[string]int{"completed": 179, "error": 7},
		Agents:    2,
		Reasoning: 19,
	})
	if s.Kind != loom.KindMain || s.Title != "" || s.Cwd != "/home/USER/projects/spotter-worktrees/spotter-gqc" ||
		s.GitBranch != "spotter-gqc" || s.Version != "2.1.39" || s.Model != "claude-opus-4-6" || s.Provider != "anthropic" {
		t.Errorf("session = %+v", *s)
	}
	if !s.CreatedAt.Equal(importertest.Time(t, "2026-02-11T20:36:45.618Z")) || !s.UpdatedAt.Equal(importertest.Time(t, "2026-02-11T21:46:25.781Z")) {
		t.Errorf("session times %v..%v", s.CreatedAt, s.UpdatedAt)
	}
	first := s.Messages[0]
	if first.ID != "1a2252ee-fde8-4a8f-a103-4028c39c47ce" || first.Role != loom.RoleUser || first.Text() != "Implement spotter-gqc" {
		t.Errorf("first message = %s %s %q", first.ID, first.Role, first.Text())
	}
	if last := s.Messages[len(s.Messages)-1]; last.ID != "d3231929-5c7c-41e7-9d4d-ef12e6c9b880" || !strings.HasPrefix(last.Text(), "Yes — everything is pushed") {
		t.Errorf("last message = %s %q", last.ID, last.Text())
	}

	// A reply over four lines (blank text, thinking, text, tool call).
	m := importertest.Message(t, s, "429195df-eec9-45fa-92d6-ad19695e2881")
	var types []string
	for _, p := range m.Parts {
		types = append(types, p.Type)
	}
	if !slices.Equal(types, []string{"reasoning", "text", "tool"}) {
		t.Errorf("reply parts = %v", types)
	}
	// Claude Code wrote the cache for an hour: the split is kept.
	wantUsage := loom.Usage{InputTokens: 3, OutputTokens: 166, CacheReadTokens: 62422, CacheWriteTokens: 599, CacheWrite1hTokens: 599, APICalls: 1}
	if m.Usage != wantUsage || m.Model != "claude-opus-4-6" || m.Provider != "anthropic" {
		t.Errorf("reply usage %+v model %q provider %q", m.Usage, m.Model, m.Provider)
	}
	if !m.CreatedAt.Equal(importertest.Time(t, "2026-02-11T21:28:31.998Z")) || m.CompletedAt == nil || !m.CompletedAt.Equal(importertest.Time(t, "2026-02-11T21:28:34.322Z")) {
		t.Errorf("reply times %v %v", m.CreatedAt, m.CompletedAt)
	}
	if !strings.HasPrefix(m.Parts[0].Text, "The warnings are expected") || !strings.Contains(string(m.Parts[0].Metadata), `"signature"`) {
		t.Errorf("reasoning part %q %s", m.Parts[0].Text, m.Parts[0].Metadata)
	}
	if m.Parts[2].CallID != "toolu_01GTgARgXveqvSN6HGMSJin9" || m.Parts[2].Name != "Read" || m.Parts[2].Status != loom.ToolCompleted {
		t.Errorf("tool part %+v", m.Parts[2])
	}

	// The Task call, its result and the sub-agent it ran.
	tm, task := toolPart(t, s, "toolu_01VmaERAwhb19LGUwu9GenaK")
	if tm.ID != "05d592a1-80bf-4e98-aad3-354e87a7ab08" || task.Name != "Task" || task.Status != loom.ToolCompleted ||
		!strings.HasPrefix(output(task), "Based on the official Claude Code hooks documentation") ||
		task.StartedAt == nil || !task.StartedAt.Equal(importertest.Time(t, "2026-02-11T21:24:19.360Z")) ||
		task.EndedAt == nil || !task.EndedAt.Equal(importertest.Time(t, "2026-02-11T21:24:52.220Z")) ||
		!strings.Contains(string(task.Metadata), `"agentId":"a881341"`) {
		t.Errorf("Task part %s: %+v", tm.ID, task)
	}
	if a := agentAfter(t, s, "toolu_01VmaERAwhb19LGUwu9GenaK"); a.Name != "claude-code-guide" || a.SessionID != agentID {
		t.Errorf("agent part %+v", a)
	}
	// A failed call.
	if _, p := toolPart(t, s, "toolu_01CLY7LZY81zMjsfM27ZmeTa"); p.Status != loom.ToolError ||
		!strings.HasPrefix(p.Error, "Exit code 128\nfatal: The current branch spotter-gqc has no upstream branch.") || len(p.Output) != 0 {
		t.Errorf("failed call %+v", p)
	}
	// The compaction: boundary and summary in one message, linked to the
	// compaction agent.
	sum := importertest.Message(t, s, "d46d6800-2f43-4360-ba84-c1de9c1ecbae")
	if sum.Role != loom.RoleSummary || !strings.HasPrefix(sum.Text(), "This session is being continued from a previous conversation") ||
		sum.Usage.Compactions != 1 || !strings.Contains(string(sum.Parts[0].Metadata), `"preTokens":167094`) ||
		sum.Parts[len(sum.Parts)-1].Type != loom.PartAgent || sum.Parts[len(sum.Parts)-1].SessionID != compactID {
		t.Errorf("summary message %+v", sum)
	}
	if i := slices.Index(s.Messages, sum); i < 0 || s.Messages[i+1].Role != loom.RoleAssistant {
		t.Errorf("summary at %d", i)
	}
	for _, id := range []string{"724b4964", "0a5857c1"} { // interruption, task notification
		found := false
		for _, m := range s.Messages {
			if strings.HasPrefix(m.ID, id) {
				found = true
				if m.Role != loom.RoleSystem {
					t.Errorf("message %s role %s", m.ID, m.Role)
				}
			}
		}
		if !found {
			t.Errorf("no message %s", id)
		}
	}

	sub := importertest.Session(t, res, agentID)
	checkTally(t, sub, tally{Roles: map[string]int{"user": 1, "assistant": 3}, Tools: map[string]int{"completed": 2}})
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != spotterID || sub.Title != "Research Claude hook output" ||
		sub.Model != "claude-sonnet-4-5-20250929" || sub.Version != "2.1.39" || !strings.HasSuffix(sub.Path, "agent-a881341.jsonl") {
		t.Errorf("sub-agent session %+v", *sub)
	}
	if !strings.HasPrefix(sub.Messages[0].Text(), "What is the output contract for Claude Code hooks") {
		t.Errorf("sub-agent prompt %q", sub.Messages[0].Text())
	}

	comp := importertest.Session(t, res, compactID)
	// Two system reminders the compaction saw, its prompt, its summary.
	checkTally(t, comp, tally{Roles: map[string]int{"system": 2, "user": 1, "assistant": 1}})
	if comp.Kind != loom.KindSubagent || comp.ParentSourceID != spotterID || comp.Messages[3].Usage.CacheReadTokens != 166758 {
		t.Errorf("compaction session %+v", *comp)
	}
}

func TestShort(t *testing.T) {
	res := readFiles(t, filepath.Join(samples, "spotter", "short.jsonl"))
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{"progress": 3, "file-history-snapshot": 1, "text:blank": 1})
	if len(res.Sessions) != 1 {
		t.Fatalf("sessions = %v", importertest.SourceIDs(res.Sessions))
	}
	s := res.Sessions[0]
	// The file's name is not a session id: the lines' sessionId is.
	if s.SourceID != "55604662-cf2a-4331-851a-ec234028f8ca" || s.Version != "2.1.38" || s.GitBranch != "master" || s.Cwd != "/home/marco/projects/spotter" {
		t.Errorf("session %+v", *s)
	}
	checkTally(t, s, tally{
		Roles:     map[string]int{"user": 1, "assistant": 1, "system": 3},
		Tools:     map[string]int{"error": 2},
		Reasoning: 1,
	})
	var got []string
	for _, m := range s.Messages {
		got = append(got, m.Role+":"+m.ID[:8])
	}
	want := []string{"user:7d48cbd2", "assistant:1b7d717f", "system:c06a9fe4", "system:87cfd146", "system:40003bdd"}
	if !slices.Equal(got, want) {
		t.Errorf("messages = %v, want %v", got, want)
	}
	// Both parallel calls were rejected; the first's result hangs off its
	// own line, a branch that is not a fork.
	for _, id := range []string{"toolu_0116Hyi5v8ut7Ffb7d8qV1Sc", "toolu_01FdQ8qTyVyZjE3Kw4dguQGx"} {
		if _, p := toolPart(t, s, id); p.Status != loom.ToolError || !strings.HasPrefix(p.Error, "The user doesn't want to proceed") ||
			!strings.Contains(string(p.Metadata), `"User rejected tool use"`) {
			t.Errorf("call %s: %+v", id, p)
		}
	}
	if txt := s.Messages[3].Text(); txt != "/model" {
		t.Errorf("local command = %q", txt)
	}
	if txt := s.Messages[2].Text(); txt != "[Request interrupted by user for tool use]" {
		t.Errorf("interruption = %q", txt)
	}
}

func TestToolHeavy(t *testing.T) {
	res := readFiles(t, filepath.Join(samples, "spotter", "tool_heavy.jsonl"))
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{"progress": 10, "file-history-snapshot": 3, "queue-operation": 2, "text:blank": 1})
	if len(res.Sessions) != 1 {
		t.Fatalf("sessions = %v", importertest.SourceIDs(res.Sessions))
	}
	s := res.Sessions[0]
	checkTally(t, s, tally{
		Roles:     map[string]int{"user": 2, "assistant": 4, "system": 7},
		Tools:     map[string]int{"completed": 6},
		Reasoning: 1,
	})
	var users []string
	for _, m := range s.Messages {
		if m.Role == loom.RoleUser {
			users = append(users, m.Text())
		}
	}
	if len(users) != 2 || users[0] != "start phoenix in background" || !strings.HasPrefix(users[1], "scrolling back in xterm.js") {
		t.Errorf("user messages = %q", users)
	}
	// /mcp ran in Claude Code only: a system message.
	if m := importertest.Message(t, s, "fbc928bf-df77-45c9-a0ef-51d150f4caf7"); m.Role != loom.RoleSystem || m.Text() != "/mcp" {
		t.Errorf("/mcp = %s %q", m.Role, m.Text())
	}
	// Two parallel calls, their results answering in another order.
	m := importertest.Message(t, s, "61045c3d-2ffd-4c10-925c-c82d72e55ebb")
	if len(m.Parts) != 3 || m.Parts[1].Name != "WebSearch" || m.Parts[2].Name != "Glob" ||
		!m.Parts[1].EndedAt.Equal(importertest.Time(t, "2026-02-10T22:59:33.333Z")) || !m.Parts[2].EndedAt.Equal(importertest.Time(t, "2026-02-10T22:59:27.386Z")) {
		t.Errorf("parallel calls %+v", m.Parts)
	}
}

func TestViewerSessions(t *testing.T) {
	dir := filepath.Join(samples, "viewer-sample-project")

	res := readFiles(t, filepath.Join(dir, af7ID+".jsonl"))
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{})
	if len(res.Sessions) != 1 {
		t.Fatalf("sessions = %v", importertest.SourceIDs(res.Sessions))
	}
	s := res.Sessions[0]
	checkTally(t, s, tally{Roles: map[string]int{"user": 1, "system": 1, "assistant": 7}, Tools: map[string]int{"completed": 11, "error": 1}})
	// /init was answered: the user's prompt; its expansion is injected.
	if s.Messages[0].Role != loom.RoleUser || s.Messages[0].Text() != "/init" || s.Messages[1].Role != loom.RoleSystem ||
		!strings.HasPrefix(s.Messages[1].Text(), "Please analyze this codebase") {
		t.Errorf("first messages %q %q", s.Messages[0].Text(), s.Messages[1].Text())
	}
	if s.Version != "1.0.98" || s.GitBranch != "" || s.Cwd != "/path/to/Demo" || s.Title != "" {
		t.Errorf("session %+v", *s)
	}
	m := importertest.Message(t, s, "b96a37ed-bbf2-4ac3-b4ab-e286f7facb3a")
	if m.Usage.OutputTokens != 322 || m.Usage.CacheWriteTokens != 10816 || m.Usage.CacheReadTokens != 4734 || m.Usage.InputTokens != 3 {
		t.Errorf("usage %+v", m.Usage)
	}
	if _, p := toolPart(t, s, "toolu_01LM7vfs6eMdhHJokVajzJA1"); p.Status != loom.ToolError || !strings.HasPrefix(p.Error, "Claude requested permissions to write") {
		t.Errorf("denied Write %+v", p)
	}
	if pm, p := toolPart(t, s, "toolu_01MEJ7TRMeoTyDi6EZLHM2zY"); pm.ID != "a1bdced2-6cf5-4c3a-b700-d5e13eb64d9d" || p.Name != "Glob" || p.Status != loom.ToolCompleted {
		t.Errorf("Glob call in %s: %+v", pm.ID, p)
	}

	res = readFiles(t, filepath.Join(dir, c037ID+".jsonl"))
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{})
	side1, side2 := c037ID+"/sidechain-6340ddef-f656-4b72-a065-82390f637678", c037ID+"/sidechain-83e2917c-8940-4df6-a5a5-f2514f0d08c5"
	if got := importertest.SourceIDs(res.Sessions); !slices.Equal(got, []string{c037ID, side1, side2}) {
		t.Fatalf("sessions = %v", got)
	}
	s = importertest.Session(t, res, c037ID)
	checkTally(t, s, tally{Roles: map[string]int{"user": 1, "system": 1, "assistant": 10}, Tools: map[string]int{"completed": 11, "error": 2}, Agents: 2})
	if s.Messages[0].Text() != "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください" || s.GitBranch != "main" || s.Version != "1.0.108" {
		t.Errorf("session %q %+v", s.Messages[0].Text(), *s)
	}
	if a := agentAfter(t, s, "toolu_014YF9TXhDRR7BnpasNJ7gjC"); a.SessionID != side1 || a.Name != "general-purpose" {
		t.Errorf("agent part %+v", a)
	}
	if a := agentAfter(t, s, "toolu_01LKfUwrsnof18CpWZQcJH44"); a.SessionID != side2 {
		t.Errorf("agent part %+v", a)
	}
	// The Task call that failed validation ran no sub-agent.
	if _, p := toolPart(t, s, "toolu_018t5jce2ZNoGr2ADsHGQife"); p.Status != loom.ToolError || !strings.Contains(p.Error, "`prompt` is missing") {
		t.Errorf("failed Task %+v", p)
	}
	checkTally(t, importertest.Session(t, res, side1), tally{Roles: map[string]int{"user": 1, "assistant": 3}, Tools: map[string]int{"completed": 2}})
	checkTally(t, importertest.Session(t, res, side2), tally{Roles: map[string]int{"user": 1, "assistant": 7}, Tools: map[string]int{"completed": 5, "error": 1}})
	if sub := importertest.Session(t, res, side2); sub.Kind != loom.KindSubagent || sub.ParentSourceID != c037ID || sub.Title != "Analyze current project structure" ||
		!strings.HasPrefix(sub.Messages[0].Text(), "Analyze the current project structure in /path/to/Demo") {
		t.Errorf("sub-agent %+v", *sub)
	}

	res = readFiles(t, filepath.Join(dir, fe5eID+".jsonl"))
	checkNoProblems(t, res)
	// Its summary line names the last message of 1af7fc5e, another file.
	checkSkipped(t, res, map[string]int{"summary": 1})
	s = importertest.Session(t, res, fe5eID)
	checkTally(t, s, tally{Roles: map[string]int{"user": 2, "system": 1, "assistant": 9}, Tools: map[string]int{"completed": 11}, Agents: 5})
	if s.Title != "" || s.Messages[0].Text() != "/orchestrator create TODO app by Next.js" {
		t.Errorf("title %q first %q", s.Title, s.Messages[0].Text())
	}
	subs := []struct {
		call, root string
		want       tally
		title      string
	}{
		{"toolu_014i9ThHMNShCHocf9xMKasf", "60dade70-20bb-4edb-9dad-9f08267e0cc2", tally{Tools: map[string]int{"completed": 31, "error": 2}, Roles: map[string]int{"assistant": 34}}, "Setup Next.js project"},
		{"toolu_01EbxY94wRUAGyMLj5wh699C", "f4546a51-ea10-47e0-b4e0-76802974f8a9", tally{Tools: map[string]int{"completed": 30, "error": 9}, Roles: map[string]int{"assistant": 40}}, "Create data models"},
		{"toolu_01LS6tcVd796SbQKmZqeVnWY", "6690d10e-f521-4ac0-800d-e5eb7a2d8072", tally{Tools: map[string]int{"completed": 8}, Roles: map[string]int{"assistant": 9}}, "Build TODO components"},
		{"toolu_017rjDpjVPeNFmAEXNTkoP55", "0d692b0f-17cb-4fd0-94fb-215dabcef803", tally{Tools: map[string]int{"completed": 22, "error": 2}, Roles: map[string]int{"assistant": 25}}, "Implement state management"},
		{"toolu_01EPom7jESzNbU8coiKjzVGS", "f4ab2bf6-d642-431a-85cb-66691f24c404", tally{Tools: map[string]int{"completed": 42, "error": 10}, Roles: map[string]int{"assistant": 53}}, "Create main page integration"},
	}
	if len(res.Sessions) != 1+len(subs) {
		t.Errorf("sessions = %v", importertest.SourceIDs(res.Sessions))
	}
	for _, c := range subs {
		id := fe5eID + "/sidechain-" + c.root
		if a := agentAfter(t, s, c.call); a.SessionID != id {
			t.Errorf("call %s runs %s, want %s", c.call, a.SessionID, id)
		}
		sub := importertest.Session(t, res, id)
		c.want.Roles["user"] = 1
		checkTally(t, sub, c.want)
		if sub.Title != c.title || sub.Messages[0].ID != c.root {
			t.Errorf("sub-agent %s title %q first %s", id, sub.Title, sub.Messages[0].ID)
		}
	}
}

func TestViewerAgentFiles(t *testing.T) {
	for _, name := range []string{"agent-test-hash-123", "agent-test-hash-456"} {
		res := readFiles(t, filepath.Join(samples, "viewer-sample-project", name+".jsonl"))
		checkNoProblems(t, res)
		checkSkipped(t, res, map[string]int{})
		if len(res.Sessions) != 1 {
			t.Fatalf("sessions = %v", importertest.SourceIDs(res.Sessions))
		}
		s := res.Sessions[0]
		if s.SourceID != c037ID+"/"+name || s.Kind != loom.KindSubagent || s.ParentSourceID != c037ID || s.Version != "2.0.28" {
			t.Errorf("session %+v", *s)
		}
		checkTally(t, s, tally{Roles: map[string]int{"user": 1, "assistant": 1}})
	}
}

func TestToolMetadataBounded(t *testing.T) {
	big := `{"type":"text","file":{"content":"` + strings.Repeat("x", 20000) + `"},"durationMs":5}`
	got := toolMetadata(json.RawMessage(big))
	if len(got) > 200 || !strings.Contains(string(got), `"durationMs":5`) || !strings.Contains(string(got), `"omitted":["file"]`) {
		t.Errorf("metadata = %s", got)
	}
	if got := toolMetadata(json.RawMessage(`"` + strings.Repeat("y", 20000) + `"`)); got != nil {
		t.Errorf("long text metadata = %.80s", got)
	}
}

// TestSampleAccounting checks, per sample file read alone, that its lines
// (counted here apart from the reader) are all accounted for: every
// tool-result line answers a call, every progress line is counted.
func TestSampleAccounting(t *testing.T) {
	for _, c := range []struct {
		file    string
		types   map[string]int
		results int // user lines holding only tool results
		// inline are the tool results of a sub-agent that the file's
		// agent_progress lines carry, its own file not read with it.
		inline int
	}{
		{"spotter/" + spotterID + ".jsonl", map[string]int{"assistant": 299, "file-history-snapshot": 28, "progress": 1333, "queue-operation": 6, "system": 5, "user": 192}, 186, 2},
		{"spotter/short.jsonl", map[string]int{"assistant": 5, "file-history-snapshot": 1, "progress": 3, "system": 2, "user": 4}, 2, 0},
		{"spotter/tool_heavy.jsonl", map[string]int{"assistant": 9, "file-history-snapshot": 3, "progress": 10, "queue-operation": 2, "system": 2, "user": 13}, 6, 0},
		{"spotter/" + spotterID + "/subagents/agent-a881341.jsonl", map[string]int{"assistant": 5, "progress": 2, "user": 3}, 2, 0},
		{"spotter/" + spotterID + "/subagents/agent-acompact-fffbd0.jsonl", map[string]int{"assistant": 1, "user": 3}, 0, 0},
		{"viewer-sample-project/" + af7ID + ".jsonl", map[string]int{"assistant": 15, "user": 14}, 12, 0},
		{"viewer-sample-project/" + c037ID + ".jsonl", map[string]int{"assistant": 28, "user": 25}, 21, 0},
		{"viewer-sample-project/" + fe5eID + ".jsonl", map[string]int{"assistant": 262, "summary": 1, "user": 175}, 167, 0},
		{"viewer-sample-project/agent-test-hash-123.jsonl", map[string]int{"assistant": 1, "user": 1}, 0, 0},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			path := filepath.Join(samples, c.file)
			types, results := countLines(t, path)
			if !maps.Equal(types, c.types) || results != c.results {
				t.Fatalf("sample lines %v, %d results; want %v, %d", types, results, c.types, c.results)
			}
			res := readFiles(t, path)
			checkNoProblems(t, res)
			answered := 0
			for _, s := range res.Sessions {
				if s.Kind == loom.KindFork {
					continue
				}
				for _, p := range importertest.Parts(s, loom.PartTool) {
					if p.EndedAt != nil {
						answered++
					}
				}
			}
			if answered != c.results+c.inline || res.Skipped["progress"] != c.types["progress"] || res.Skipped["tool_result:unmatched"] != 0 {
				t.Errorf("%d answered calls, %d progress lines skipped", answered, res.Skipped["progress"])
			}
		})
	}
}

// countLines counts a file's lines by type, and the user lines that only
// carry tool results.
func countLines(t *testing.T, path string) (map[string]int, int) {
	t.Helper()
	data := importertest.ReadBytes(t, path)
	types, results := map[string]int{}, 0
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var v struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		types[v.Type]++
		var blocks []struct {
			Type string `json:"type"`
		}
		if v.Type == "user" && json.Unmarshal(v.Message.Content, &blocks) == nil && len(blocks) > 0 &&
			!slices.ContainsFunc(blocks, func(b struct {
				Type string `json:"type"`
			}) bool {
				return b.Type != "tool_result"
			}) {
			results++
		}
	}
	return types, results
}
