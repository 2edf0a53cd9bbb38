package claudecode

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

func TestSubagentLinkedByProgress(t *testing.T) {
	// Claude Code 2.x while the sub-agent runs: no result yet, but its
	// progress lines name it.
	dir := t.TempDir()
	main := writeLines(t, filepath.Join(dir, caseSID+".jsonl"),
		user("u1", "", 0, "research it"),
		asst("a1", "u1", 1, "m1", toolUse("t1", "Task", L{"description": "Research", "prompt": "find out", "subagent_type": "Explore"})),
		with(line("progress", "p1", "a1", 2), "parentToolUseID", "t1", "toolUseID", "agent_msg_1",
			"data", L{"type": "agent_progress", "agentId": "abc123", "prompt": "find out"}),
	)
	sub := writeLines(t, filepath.Join(dir, caseSID, "subagents", "agent-abc123.jsonl"),
		with(user("s1", "", 1, "find out"), "isSidechain", true, "agentId", "abc123"),
		with(asst("s2", "s1", 2, "sm1", text("found")), "isSidechain", true, "agentId", "abc123"),
	)
	bs, err := New().Bundles(context.Background(), dir)
	if err != nil || len(bs) != 1 || !slices.Equal(bs[0].Files, []string{main, sub}) {
		t.Fatalf("bundles %v, %v", bs, err)
	}
	res := readFiles(t, bs[0].Files...)
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{"progress": 1})
	subID := caseSID + "/agent-abc123"
	if got := importertest.SourceIDs(res.Sessions); !slices.Equal(got, []string{caseSID, subID}) {
		t.Fatalf("sessions = %v", got)
	}
	s := res.Sessions[0]
	if _, p := toolPart(t, s, "t1"); p.Status != loom.ToolRunning {
		t.Errorf("Task %+v", p)
	}
	if a := agentAfter(t, s, "t1"); a.Name != "Explore" || a.SessionID != subID || a.ID != "a1/0/agent" {
		t.Errorf("agent part %+v", a)
	}
	if sub := res.Sessions[1]; sub.Title != "Research" || sub.ParentSourceID != caseSID || sub.Kind != loom.KindSubagent {
		t.Errorf("sub-agent %+v", *sub)
	}
}

func TestSidechainLinkedByTime(t *testing.T) {
	// Claude Code 1.x: the transcript's prompt is not the call's (it was
	// rewritten), but the call was running when the transcript began.
	path := sessionFile(t,
		user("u1", "", 0, "do two things"),
		asst("a1", "u1", 1, "m1",
			toolUse("t1", "Task", L{"description": "First", "prompt": "thing one"}),
			toolUse("t2", "Task", L{"description": "Second", "prompt": "thing two"})),
		with(user("s1", "", 2, "thing two"), "isSidechain", true),
		with(asst("s2", "s1", 3, "sm1", text("two done")), "isSidechain", true),
		with(user("s3", "", 4, "Thing one, reworded"), "isSidechain", true),
		with(asst("s4", "s3", 5, "sm2", text("one done")), "isSidechain", true),
		user("r1", "a1", 6, []any{toolResult("t1", "one done", false)}),
		user("r2", "r1", 6, []any{toolResult("t2", "two done", false)}),
		asst("a2", "r2", 7, "m2", text("both done")),
	)
	res := readFiles(t, path)
	checkNoProblems(t, res)
	if got := importertest.SourceIDs(res.Sessions); !slices.Equal(got, []string{caseSID, caseSID + "/sidechain-s1", caseSID + "/sidechain-s3"}) {
		t.Fatalf("sessions = %v", got)
	}
	s := res.Sessions[0]
	if a := agentAfter(t, s, "t2"); a.SessionID != caseSID+"/sidechain-s1" {
		t.Errorf("t2 runs %s", a.SessionID)
	}
	if a := agentAfter(t, s, "t1"); a.SessionID != caseSID+"/sidechain-s3" {
		t.Errorf("t1 runs %s", a.SessionID)
	}
	if res.Sessions[1].Title != "Second" || res.Sessions[2].Title != "First" {
		t.Errorf("titles %q %q", res.Sessions[1].Title, res.Sessions[2].Title)
	}
}

// A reply that starts two sub-agents at once, its calls on lines of their
// own, the second sub-agent beginning first: every reading of the file
// stopped at a line holds each message's parts as the first parts of the
// whole file's reading, in its order, so that an import that appends
// the parts a later reading adds ends as a reading of the whole file.
func TestParallelAgentsPartsInLineOrder(t *testing.T) {
	lines := []any{
		user("u1", "", 0, "do two things"),
		asst("a1", "u1", 1, "m1", toolUse("t1", "Task", L{"description": "First", "prompt": "thing one"})),
		asst("a2", "a1", 1, "m1", toolUse("t2", "Task", L{"description": "Second", "prompt": "thing two"})),
		with(user("s1", "", 2, "thing two"), "isSidechain", true),
		with(asst("s2", "s1", 3, "sm1", text("two done")), "isSidechain", true),
		with(user("s3", "", 4, "thing one"), "isSidechain", true),
		with(asst("s4", "s3", 5, "sm2", text("one done")), "isSidechain", true),
		user("r1", "a2", 6, []any{toolResult("t1", "one done", false)}),
		user("r2", "r1", 6, []any{toolResult("t2", "two done", false)}),
		asst("a3", "r2", 7, "m2", text("both done")),
	}
	partIDs := func(res *importer.Result) map[string][]string {
		out := map[string][]string{}
		for _, m := range res.Sessions[0].Messages {
			for _, p := range m.Parts {
				out[m.ID] = append(out[m.ID], p.ID)
			}
		}
		return out
	}
	whole := partIDs(readFiles(t, sessionFile(t, lines...)))
	if got := whole["a1"]; !slices.Equal(got, []string{"a1/0", "a2/0", "a2/0/agent", "a1/0/agent"}) {
		t.Errorf("parts of the reply %v, want the calls, then the sub-agents as they began", got)
	}
	for n := 2; n < len(lines); n++ {
		for id, got := range partIDs(readFiles(t, sessionFile(t, lines[:n]...))) {
			if w := whole[id]; len(got) > len(w) || !slices.Equal(got, w[:len(got)]) {
				t.Errorf("after %d lines: message %s has parts %v, the whole file %v", n, id, got, w)
			}
		}
	}
}
