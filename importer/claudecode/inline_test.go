package claudecode

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// A sub-agent whose transcript is only in the session file's
// agent_progress lines (its own file is not there) is imported from
// them: a sub-agent session with its prompt, its calls and their usage,
// linked from the call that ran it. With its file there, the file is
// read and the inline lines add nothing.
func TestInlineSubagentFromProgress(t *testing.T) {
	dir := filepath.Join(samples, "spotter")
	main := filepath.Join(dir, spotterID+".jsonl")
	agentID := spotterID + "/agent-a881341"

	res := readFiles(t, main, filepath.Join(dir, spotterID, "subagents", "agent-acompact-fffbd0.jsonl"))
	checkNoProblems(t, res)
	if got := importertest.SourceIDs(res.Sessions); !slices.Contains(got, agentID) {
		t.Fatalf("sessions = %v, want the inline sub-agent %s", got, agentID)
	}
	sub := importertest.Session(t, res, agentID)
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != spotterID || sub.Title == "" {
		t.Errorf("inline sub-agent = %+v", *sub)
	}
	if len(sub.Messages) != 3 || sub.Messages[0].Role != loom.RoleUser ||
		sub.Messages[0].ID != "99c77085-8ebd-4871-bdf6-ea5801acb7c9" {
		t.Fatalf("inline sub-agent messages: %d, first %+v", len(sub.Messages), sub.Messages[0])
	}
	var calls, tools int
	var u loom.Usage
	for _, m := range sub.Messages {
		u.Add(m.Usage)
		if m.Role == loom.RoleAssistant {
			calls++
			if m.Model != "claude-sonnet-4-5-20250929" {
				t.Errorf("reply model %q", m.Model)
			}
		}
		for _, p := range m.Parts {
			if p.Type == loom.PartTool {
				tools++
				if p.Name != "WebFetch" || p.Status != loom.ToolCompleted || len(p.Output) == 0 {
					t.Errorf("tool part %s %s %s", p.Name, p.Status, p.Output)
				}
			}
		}
	}
	if calls != 2 || tools != 2 || u.OutputTokens == 0 || u.CacheReadTokens+u.CacheWriteTokens+u.InputTokens == 0 {
		t.Errorf("inline sub-agent: %d replies, %d tool calls, usage %+v", calls, tools, u)
	}
	linked := false
	for _, m := range importertest.Session(t, res, spotterID).Messages {
		for _, p := range m.Parts {
			linked = linked || (p.Type == loom.PartAgent && p.SessionID == agentID)
		}
	}
	if !linked {
		t.Error("no agent part of the session names the inline sub-agent")
	}

	// The sub-agent's own file wins: one session of it, the file's.
	res = readFiles(t, main, filepath.Join(dir, spotterID, "subagents", "agent-a881341.jsonl"))
	n := 0
	for _, s := range res.Sessions {
		if s.SourceID == agentID {
			n++
			if len(s.Messages) != 4 {
				t.Errorf("with its file the sub-agent has %d messages, want the file's 4", len(s.Messages))
			}
		}
	}
	if n != 1 {
		t.Errorf("%d sessions of the sub-agent with its file there, want 1", n)
	}
}
