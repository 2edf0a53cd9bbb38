package bigfile_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// agentKey is the sub-agent's session that generateAgent writes.
const agentKey = key + "/agent-big"

// generateAgent writes, beside the session file path, a session whose
// one Task call ran sub-agent "big" (described "Survey the code"), and
// appends turns first, first+1, … of that sub-agent's transcript to its
// file until it holds at least size bytes; it returns the next turn's
// number. The transcript is its prompt, then, each turn, a Bash call,
// its result (about 2 KB) and an answer, every line isSidechain as
// Claude Code writes a sub-agent's.
func generateAgent(t testing.TB, path string, size int64, first int) int {
	t.Helper()
	ts := func(n int) string {
		return time.Date(2026, 5, 18, 14, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format("2006-01-02T15:04:05.000Z")
	}
	head := func(uuid, parent string, n int, side bool) string {
		p := "null"
		if parent != "" {
			p = strconv.Quote(parent)
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":%t,"userType":"external","cwd":"/home/dev/p","sessionId":%q,"version":"2.1.62","gitBranch":"main","uuid":%q,"timestamp":%q,`,
			p, side, sid, uuid, ts(n))
	}
	if first == 1 {
		session := strings.Join([]string{
			head("m0", "", 0, false) + `"type":"user","message":{"role":"user","content":"survey the code"}}`,
			head("m1", "m0", 0, false) + `"type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_m1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_task","name":"Task","input":{"description":"Survey the code","prompt":"survey the code","subagent_type":"Explore"}}],"usage":{"input_tokens":3,"output_tokens":9}}}`,
			head("m2", "m1", 1, false) + `"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_task","type":"tool_result","content":"surveyed"}]},"toolUseResult":{"agentId":"big","status":"completed"}}`,
			head("m3", "m2", 2, false) + `"type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_m3","type":"message","role":"assistant","content":[{"type":"text","text":"surveyed"}],"usage":{"input_tokens":3,"output_tokens":9}}}`,
		}, "\n") + "\n"
		importertest.MkdirAll(t, filepath.Dir(path))
		importertest.WriteFile(t, path, []byte(session), 0o644)
	}
	return appendTurns(t, agentFile(path), size, first, func(n int) []string {
		var lines []string
		prev := uuid(n-1, 2)
		if n == 1 {
			prev = uuid(0, 0)
			lines = append(lines, head(prev, "", 0, true)+`"agentId":"big","type":"user","message":{"role":"user","content":"survey the code"}}`)
		}
		call := fmt.Sprintf("toolu_%08d", n)
		return append(lines,
			head(uuid(n, 0), prev, n, true)+fmt.Sprintf(`"agentId":"big","type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_a%d","type":"message","role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"ls %d"}}],"usage":{"input_tokens":3,"output_tokens":96,"cache_read_input_tokens":2000}}}`, n, call, n),
			head(uuid(n, 1), uuid(n, 0), n, true)+fmt.Sprintf(`"agentId":"big","type":"user","message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":%q}]}}`, call, text(n+1, 300)),
			head(uuid(n, 2), uuid(n, 1), n, true)+fmt.Sprintf(`"agentId":"big","type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_b%d","type":"message","role":"assistant","content":[{"type":"text","text":"done %d %s"}],"usage":{"input_tokens":3,"output_tokens":96}}}`, n, n, text(n+2, 40)),
		)
	})
}

// agentFile is the file of sub-agent "big" of the session file path.
func agentFile(path string) string {
	return filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "agent-big.jsonl")
}

// checkAgent fails the test unless the store holds the sub-agent's
// session, its prompt and two messages a turn, each once, every call
// with its result, titled with the Task call's description and linked
// from it.
func (h *home) checkAgent(t *testing.T, turns int) {
	t.Helper()
	ctx := context.Background()
	st := h.open(t)
	defer st.Close()
	main, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Key: key, Limit: 10})
	if err != nil || len(main) != 1 {
		t.Fatalf("sessions %d, %v", len(main), err)
	}
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Key: agentKey, Limit: 10})
	if err != nil || len(ss) != 1 {
		t.Fatalf("sub-agent sessions %d, %v", len(ss), err)
	}
	x := ss[0]
	if x.ParentID != main[0].ID || x.Kind != loom.KindSubagent || x.Title != "Survey the code" {
		t.Errorf("the sub-agent's session: kind %s, parent %s (want %s), title %q", x.Kind, x.ParentID, main[0].ID, x.Title)
	}
	msgs, err := st.Messages(ctx, x.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := 1 + 2*(turns-1)
	if len(msgs) != want || x.MessageCount != want {
		t.Fatalf("%d messages (session says %d), want %d", len(msgs), x.MessageCount, want)
	}
	seen := map[string]bool{}
	for i, m := range msgs {
		if seen[m.ID] {
			t.Fatalf("message %s stored twice", m.ID)
		}
		seen[m.ID] = true
		if i%2 == 1 && (len(m.Parts) == 0 || m.Parts[0].Status != loom.ToolCompleted) {
			t.Fatalf("message %d: the tool call has no result: %+v", m.Seq, m.Parts)
		}
	}
	parent, err := st.Messages(ctx, main[0].ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	linked := false
	for _, m := range parent {
		for _, p := range m.Parts {
			linked = linked || (p.Type == loom.PartAgent && p.SessionID == x.ID)
		}
	}
	if !linked {
		t.Error("the Task call does not name the sub-agent's session")
	}
}

// A Claude Code sub-agent's file bigger than a segment is read a
// segment at a time, as a bundle of its own: its import, follow and
// reimport take the same memory whatever its size (read whole with its
// session, it took 3.8 bytes per byte of the file, and more than 1 GB
// was refused and lost its session).
func TestBigSubagentMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and imports files of tens of megabytes")
	}
	sameMemory(t, memoryOf(t, generateAgent, (*home).checkAgent))
}
