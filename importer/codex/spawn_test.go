package codex

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// A parent rollout of Codex CLI 0.146 that spawned an agent with the
// multi-agent tools (spawn_agent with a task name, the agent forked from
// the parent's history), and the rollout of that agent.
const (
	parentID      = "019f7ecd-c978-7a41-9c3e-5b1f0d2e8a47"
	childID       = "019f7ece-35a7-7b62-a0d4-6e8f1c3b9a25"
	parentRollout = "testdata/rollout-2026-07-20T09-14-03-" + parentID + ".jsonl"
	childRollout  = "testdata/rollout-2026-07-20T09-14-31-" + childID + ".jsonl"

	childTask   = "Follow the install steps in README.md in a scratch copy of the repository and report every step that fails, with its error. Do not change any file."
	childAnswer = "All install steps work except `make deps`: it fails with `go: github.com/acme/kit@v0.9.1: unknown revision v0.9.1`. `make build` and `make test` pass once the dependency is fetched with `go mod download`."
)

// userTexts are the texts of a session's user messages.
func userTexts(s *importer.Session) []string {
	var out []string
	for _, m := range s.Messages {
		if m.Role == loom.RoleUser {
			out = append(out, m.Text())
		}
	}
	return out
}

func TestSpawnLinksParentToChild(t *testing.T) {
	parent := readFile(t, parentRollout).Sessions[0]
	child := readFile(t, childRollout).Sessions[0]

	// The spawn call names the agent by its task path only; the event
	// that says it started names its thread.
	m, spawn := tool(t, parent, "call_Wq3sZk8vT1nYbH2rLm0cXeP4")
	if spawn.Name != "spawn_agent" || spawn.Status != loom.ToolCompleted {
		t.Errorf("spawn call %+v", spawn)
	}
	var agents []loom.Part
	for _, p := range m.Parts {
		if p.Type == loom.PartAgent {
			agents = append(agents, p)
		}
	}
	if len(agents) != 1 || agents[0].SessionID != child.SourceID || agents[0].Name != "readme_check" {
		t.Fatalf("agent parts %+v, want one naming %s", agents, child.SourceID)
	}
	if child.Kind != loom.KindSubagent || child.ParentSourceID != parent.SourceID {
		t.Errorf("child kind %s parent %s, want subagent of %s", child.Kind, child.ParentSourceID, parent.SourceID)
	}

	// The agent's answer, delivered to the parent, is context for the
	// parent's model, not the user's prompt nor the parent's own reply.
	ans := find(t, parent, parentID+":22")
	if ans.Role != loom.RoleSystem || ans.Text() != childAnswer {
		t.Errorf("answer from the agent: %s %q", ans.Role, ans.Text())
	}
	if got := userTexts(parent); len(got) != 1 || !strings.HasPrefix(got[0], "Check with a sub-agent") {
		t.Errorf("parent prompts %q", got)
	}
}

func TestSpawnedAgentStartsWithItsTask(t *testing.T) {
	res := readFile(t, childRollout)
	s := res.Sessions[0]
	// Its task, from the parent's spawn call, is its prompt: the first
	// message after the instructions, so it titles the session and
	// opens a turn.
	if got := userTexts(s); !slices.Equal(got, []string{childTask}) {
		t.Fatalf("prompts %q, want the task alone", got)
	}
	var first *loom.Message
	for _, m := range s.Messages {
		if m.Role != loom.RoleSystem {
			first = m
			break
		}
	}
	if first == nil || first.ID != childID+":12" || first.Role != loom.RoleUser {
		t.Errorf("first message %+v", first)
	}
	// The copy of the parent's history the agent starts with is the
	// parent's: left out of the agent's session, and counted.
	for _, m := range s.Messages {
		if strings.Contains(m.Text(), "Check with a sub-agent") || strings.Contains(m.Text(), "AGENTS.md instructions") {
			t.Errorf("parent's message %s copied into the agent: %q", m.ID, m.Text())
		}
	}
	for k, n := range map[string]int{"inherited:session_meta": 1, "inherited:response_item": 3, "inherited:event_msg": 3, "inherited:turn_context": 1} {
		if res.Skipped[k] != n {
			t.Errorf("skipped[%s] = %d, want %d (all %v)", k, res.Skipped[k], n, res.Skipped)
		}
	}
	if s.Model != "gpt-5.5" || s.Title != "" {
		t.Errorf("model %q title %q", s.Model, s.Title)
	}
	var total loom.Usage
	for _, m := range s.Messages {
		total.Add(m.Usage)
	}
	if total.APICalls != 3 || total.InputTokens != 39840-29696 || total.OutputTokens != 539 {
		t.Errorf("usage %+v: want the agent's three calls", total)
	}
	_, failed := tool(t, s, "call_Zt7bNq2xLr5cVm8sKd1fGh4J")
	if failed.Status != loom.ToolError {
		t.Errorf("make deps: %+v", failed)
	}
}

func TestAgentMessageShapes(t *testing.T) {
	meta := `{"timestamp":"2026-03-02T10:00:00.000Z","type":"session_meta","payload":{"id":"019cae1b-6c00-7000-8000-0000000000c1","timestamp":"2026-03-02T10:00:00.000Z","cwd":"/w","cli_version":"0.110.0","source":{"subagent":{"thread_spawn":{"parent_thread_id":"019cae1a-0000-7000-8000-0000000000b0","depth":1,"agent_path":"/root/lint_fix","agent_nickname":"Noether","agent_role":"worker"}}},"model_provider":"openai"}}
`
	tc := `{"timestamp":"2026-03-02T10:00:00.100Z","type":"turn_context","payload":{"turn_id":"019cae1b-6c64-7000-8000-000000000001","cwd":"/w","model":"gpt-5.3-codex"}}
`
	t.Run("assistant message holding the communication", func(t *testing.T) {
		// Codex 0.1xx records the parent's message in the agent's
		// history as an assistant message whose text is its JSON.
		res := readString(t, meta+tc+
			`{"timestamp":"2026-03-02T10:00:00.200Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"{\"author\":\"/root\",\"recipient\":\"/root/lint_fix\",\"other_recipients\":[],\"content\":\"Fix the lint errors in pkg/api\",\"trigger_turn\":true}"}],"phase":"commentary"}}
{"timestamp":"2026-03-02T10:00:03.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed."}],"phase":"final_answer"}}
{"timestamp":"2026-03-02T10:00:04.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"{\"author\":\"/root/docs\",\"recipient\":\"/root/lint_fix\",\"other_recipients\":[],\"content\":\"I touched pkg/api/doc.go too\",\"trigger_turn\":false}"}],"phase":"commentary"}}
`)
		s := res.Sessions[0]
		if got := userTexts(s); !slices.Equal(got, []string{"Fix the lint errors in pkg/api"}) {
			t.Errorf("prompts %q", got)
		}
		if m := s.Messages[len(s.Messages)-1]; m.Role != loom.RoleSystem || m.Text() != "I touched pkg/api/doc.go too" {
			t.Errorf("message from a sibling: %s %q", m.Role, m.Text())
		}
	})
	t.Run("encrypted task", func(t *testing.T) {
		// Sent encrypted, the task cannot be read: the agent's name
		// titles its session.
		res := readString(t, meta+tc+
			`{"timestamp":"2026-03-02T10:00:00.200Z","type":"response_item","payload":{"type":"agent_message","author":"/root","recipient":"/root/lint_fix","content":[{"type":"input_text","text":"Message Type: NEW_TASK\nTask name: /root/lint_fix\nSender: /root\nPayload:\n"},{"type":"encrypted_content","encrypted_content":"gAAAAABpQ2hpbGRUYXNr"}]}}
{"timestamp":"2026-03-02T10:00:03.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed."}],"phase":"final_answer"}}
`)
		s := res.Sessions[0]
		if res.Skipped["inter_agent_communication:encrypted"] != 1 || s.Title != "lint_fix" {
			t.Errorf("skipped %v title %q", res.Skipped, s.Title)
		}
	})
}

func TestInstructionsStoredOnce(t *testing.T) {
	const base = "You are Codex, a coding agent based on GPT-5. You and the user share the same workspace."
	res := readString(t, `{"timestamp":"2026-06-10T10:00:00.000Z","type":"session_meta","payload":{"id":"019eb1f2-0a00-7000-8000-00000000a001","timestamp":"2026-06-10T10:00:00.000Z","cwd":"/w","originator":"codex-tui","cli_version":"0.136.0","source":"cli","model_provider":"openai","base_instructions":{"text":"`+base+`"}}}
{"timestamp":"2026-06-10T10:00:00.010Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"`+base+`"}]}}
{"timestamp":"2026-06-10T10:00:00.011Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>\nsandbox: read-only\n</permissions instructions>"},{"type":"input_text","text":"`+base+`"}]}}
{"timestamp":"2026-06-10T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"add connection pooling"}]}}
`)
	s := res.Sessions[0]
	n := 0
	for _, m := range s.Messages {
		if m.Role != loom.RoleSystem && m.Role != loom.RoleUser {
			t.Errorf("message %s role %s", m.ID, m.Role)
		}
		n += strings.Count(m.Text(), base)
	}
	if n != 1 {
		t.Errorf("the instructions are stored %d times, want once", n)
	}
	if res.Skipped["developer:duplicate"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	// What the second developer message adds is kept, as context.
	if m := find(t, s, "019eb1f2-0a00-7000-8000-00000000a001:3"); m.Role != loom.RoleSystem || !strings.HasPrefix(m.Text(), "<permissions instructions>") {
		t.Errorf("permissions %s %q", m.Role, m.Text())
	}
}

// agentParts are the agent parts of the message holding call callID.
func agentParts(t *testing.T, s *importer.Session, callID string) []loom.Part {
	t.Helper()
	m, _ := tool(t, s, callID)
	var out []loom.Part
	for _, p := range m.Parts {
		if p.Type == loom.PartAgent {
			out = append(out, p)
		}
	}
	return out
}

func TestSpawnLinkedByOutputOrPath(t *testing.T) {
	const (
		meta = `{"timestamp":"2026-07-20T09:00:00.000Z","type":"session_meta","payload":{"id":"019f7e00-0000-7000-8000-0000000000a0","timestamp":"2026-07-20T09:00:00.000Z","cwd":"/w","cli_version":"0.146.0","source":"cli","model_provider":"openai"}}
{"timestamp":"2026-07-20T09:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"check the repository with sub-agents"}]}}
`
		child = "019f7e01-0000-7000-8000-0000000000c1"
	)
	spawn := func(callID, args string) string {
		return `{"timestamp":"2026-07-20T09:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"spawn_agent","arguments":` + strconv.Quote(args) + `,"call_id":"` + callID + `"}}` + "\n"
	}
	output := func(callID, out string) string {
		return `{"timestamp":"2026-07-20T09:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"` + callID + `","output":` + strconv.Quote(out) + `}}` + "\n"
	}
	// started is a sub_agent_activity event whose event_id names no call.
	started := func(path string) string {
		return `{"timestamp":"2026-07-20T09:00:04.000Z","type":"event_msg","payload":{"type":"sub_agent_activity","event_id":"evt_1","agent_thread_id":"` + child + `","agent_path":"` + path + `","kind":"started"}}` + "\n"
	}
	type link struct{ callID, name string }
	for _, c := range []struct {
		name  string
		lines string
		want  []link // the calls that get an agent part, and its name
		calls []string
	}{
		{
			// Multi-agent v1 without a collab_agent_spawn_end event: the
			// output's agent_id names the thread.
			name:  "output agent_id",
			lines: spawn("call_A", `{"message":"Check the docs","agent_type":"explorer"}`) + output("call_A", `{"agent_id":"`+child+`","nickname":"Ada"}`),
			want:  []link{{"call_A", "explorer"}},
			calls: []string{"call_A"},
		},
		{
			name:  "output agent_id without agent_type",
			lines: spawn("call_A", `{"message":"Check the docs"}`) + output("call_A", `{"agent_id":"`+child+`","nickname":"Ada"}`),
			want:  []link{{"call_A", "Ada"}},
			calls: []string{"call_A"},
		},
		{
			// Multi-agent v2: the output names the task path; an event
			// that names the call by no id links the call of that path.
			name: "event after the output, by its task path",
			lines: spawn("call_L", `{"task_name":"lint","message":"Fix the lint errors"}`) +
				output("call_L", `{"task_name":"/root/lint","nickname":null}`) +
				spawn("call_D", `{"task_name":"docs","message":"Check the docs"}`) +
				output("call_D", `{"task_name":"/root/docs","nickname":null}`) +
				started("/root/docs"),
			want:  []link{{"call_D", "docs"}},
			calls: []string{"call_L", "call_D"},
		},
		{
			// Before the output, the task name of the call's arguments
			// tells its path; the output then adds no second part.
			name: "event before the output, by its task name",
			lines: spawn("call_D", `{"task_name":"docs","message":"Check the docs"}`) +
				output("call_D", `{"task_name":"/root/docs","nickname":null}`) +
				spawn("call_L", `{"task_name":"lint","message":"Fix the lint errors"}`) +
				started("/root/lint") +
				output("call_L", `{"task_name":"/root/lint","nickname":null}`),
			want:  []link{{"call_L", "lint"}},
			calls: []string{"call_L", "call_D"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := readString(t, meta+c.lines).Sessions[0]
			var got []link
			for _, id := range c.calls {
				for _, p := range agentParts(t, s, id) {
					if p.SessionID != child {
						t.Errorf("call %s links %s, want %s", id, p.SessionID, child)
					}
					got = append(got, link{id, p.Name})
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("agent parts %v, want %v", got, c.want)
			}
		})
	}
}

func TestSubagent(t *testing.T) {
	res := readFile(t, "testdata/subagent.jsonl")
	expect(t, res, map[string]int{"user": 2, "assistant": 1, "system": 1}, map[string]int{}, 0,
		map[string]int{"turn_context": 1, "inter_agent_communication_metadata": 1, "world_state": 1}, nil)
	s := res.Sessions[0]
	// The parent's spawn_agent call names this session's id.
	parent := readFile(t, "testdata/newer.jsonl").Sessions[0]
	m, _ := tool(t, parent, "call_E")
	link := m.Parts[len(m.Parts)-1]
	if s.Kind != loom.KindSubagent || s.ParentSourceID != parent.SourceID || s.SourceID != link.SessionID {
		t.Errorf("sub-agent %s kind %s parent %s; link %s", s.SourceID, s.Kind, s.ParentSourceID, link.SessionID)
	}
	if s.Model != "gpt-5.1-codex-mini" || s.Messages[1].Text() != "The docs are current." ||
		s.Messages[1].Usage != (loom.Usage{InputTokens: 900, OutputTokens: 30, ReasoningTokens: 10, APICalls: 1}) {
		t.Errorf("model %s last %+v", s.Model, s.Messages[1])
	}
	// A message from the agent above is a prompt; from another agent,
	// context.
	if m := s.Messages[2]; m.ID != s.SourceID+":6" || m.Role != loom.RoleUser || m.Text() != "Also check the changelog" {
		t.Errorf("message from the parent %s %s %q", m.ID, m.Role, m.Text())
	}
	if m := s.Messages[3]; m.ID != s.SourceID+":8" || m.Role != loom.RoleSystem || m.Text() != "FYI: the tests pass" {
		t.Errorf("message from a sibling %s %s %q", m.ID, m.Role, m.Text())
	}
}

// Codex 0.169 tells that a spawned agent started with an item_completed
// event whose item is a SubAgentActivity (its id the spawn call's), and
// gives the agent its task in an encrypted_content block that holds the
// task in clear.
func TestSpawnOf0169(t *testing.T) {
	const (
		parent = "019fa2b0-4c1e-7d83-9a51-2e6f0b8c7d14"
		child  = "019fa2b0-6a37-7f02-8c44-5d1e9b3a2f60"
		task   = "List every file in /home/dev/notes, one per line, and nothing else."
	)
	p := readFile(t, "testdata/rollout-2026-11-20T10-02-11-"+parent+".jsonl").Sessions[0]
	agents := agentParts(t, p, "call_Sp4wNn7cQe2vLk9xTz1aRb6M")
	if len(agents) != 1 || agents[0].SessionID != child || agents[0].Name != "list_files" {
		t.Fatalf("agent parts %+v, want one naming %s", agents, child)
	}
	res := readFile(t, "testdata/rollout-2026-11-20T10-02-12-"+child+".jsonl")
	c := res.Sessions[0]
	if got := userTexts(c); !slices.Equal(got, []string{task}) {
		t.Errorf("prompts %q, want the task", got)
	}
	if c.Kind != loom.KindSubagent || c.ParentSourceID != parent || c.Title != "" {
		t.Errorf("kind %s parent %s title %q", c.Kind, c.ParentSourceID, c.Title)
	}
	if n := res.Skipped["inter_agent_communication:encrypted"]; n != 0 {
		t.Errorf("the task in clear was skipped as encrypted (%v)", res.Skipped)
	}
}

func TestClearText(t *testing.T) {
	for in, want := range map[string]string{
		"List the files.": "List the files.",
		"list_files":      "list_files",
		"gAAAAABpQ2hpbGRUYXNrZW5jcnlwdGVkX3Rhc2tfdGV4dF9oZXJl": "",
		" Fix pkg/api ": "Fix pkg/api",
	} {
		if got := clearText(in); got != want {
			t.Errorf("clearText(%q) = %q, want %q", in, got, want)
		}
	}
}
