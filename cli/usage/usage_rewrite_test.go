package usage_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// claudeUsage is a Claude Code line's model call: its message id and the
// usage the line records.
type claudeUsage struct {
	Message struct {
		ID    string `json:"id"`
		Usage *struct {
			Input      int64 `json:"input_tokens"`
			Output     int64 `json:"output_tokens"`
			CacheRead  int64 `json:"cache_read_input_tokens"`
			CacheWrite int64 `json:"cache_creation_input_tokens"`
			Split      struct {
				Hour int64 `json:"ephemeral_1h_input_tokens"`
			} `json:"cache_creation"`
		} `json:"usage"`
	} `json:"message"`
}

// handCount adds up the model calls of Claude Code files by hand: each
// message id once, with the usage of its last line in the first file
// that holds it (a reply is written over several lines, the last with
// its final output tokens).
func handCount(t *testing.T, files ...[]string) loom.Usage {
	t.Helper()
	calls := map[string]loom.Usage{}
	for _, lines := range files {
		seen := map[string]loom.Usage{}
		for _, l := range lines {
			var r claudeUsage
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if u := r.Message.Usage; u != nil && r.Message.ID != "" {
				seen[r.Message.ID] = loom.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite,
					CacheWrite1hTokens: u.Split.Hour, APICalls: 1}
			}
		}
		for id, u := range seen {
			if _, ok := calls[id]; !ok {
				calls[id] = u
			}
		}
	}
	var total loom.Usage
	for _, u := range calls {
		total.Add(u)
	}
	return total
}

// toolHeavyLines is the lines of the Claude Code sample session
// tool_heavy.jsonl.
func toolHeavyLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(clitest.Samples, "claude-code", "spotter", "tool_heavy.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// checkCountedOnce imports fx's Claude Code sessions, then checks that
// loom holds sessions sessions and that loom usage and loom usage daily
// both count each model call of files once, as handCount does (daily
// counts messages with usage, which must be as many as the calls).
func checkCountedOnce(t *testing.T, fx *clitest.Fixture, when string, sessions int, files ...[]string) {
	t.Helper()
	fx.MustExec(t, "session", "import", "--from", "claude-code")
	var listed []*loom.Session
	if err := json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "--all-projects", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != sessions {
		t.Fatalf("%s: %d sessions, want %d", when, len(listed), sessions)
	}
	want := handCount(t, files...)
	want.CostUSD = 0
	var report struct {
		Total loom.Usage `json:"total"`
	}
	var daily struct {
		Total struct {
			loom.Usage
			Messages int64 `json:"messages"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(fx.MustExec(t, "usage", "--json")), &report); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(fx.MustExec(t, "usage", "daily", "--json")), &daily); err != nil {
		t.Fatal(err)
	}
	report.Total.CostUSD, daily.Total.CostUSD, daily.Total.APICalls = 0, 0, want.APICalls
	if report.Total != want || daily.Total.Usage != want || daily.Total.Messages != want.APICalls {
		t.Errorf("%s: loom usage counts\n%+v\nusage daily\n%+v (%d messages)\nby hand, each call once:\n%+v",
			when, report.Total, daily.Total.Usage, daily.Total.Messages, want)
	}
}

// A Claude Code session file cut short and written again with more
// lines (an agent or a user rewrote it) is imported again as a fork of
// the session, and every usage report counts each model call once: the
// replies the fork repeats are counted in the session they were first
// imported in, the new one in the fork.
func TestUsageCountsARewrittenFileOnce(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	original := toolHeavyLines(t)
	file := filepath.Join(fx.Home, ".claude", "projects", "-home-user-spotter", "d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl")
	os.MkdirAll(filepath.Dir(file), 0o755)
	write := func(lines []string) {
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(original)
	fx.MustExec(t, "session", "import", "--from", "claude-code")

	// Cut inside the second turn's last reply (its first line, before
	// the line with its final output tokens), then a new prompt and a
	// new reply, each a line of the file's own shape.
	var cut int
	for i, l := range original {
		if strings.Contains(l, `"msg_019BN3`) {
			cut = i + 1
			break
		}
	}
	if cut == 0 {
		t.Fatal("the sample has no reply msg_019BN3…")
	}
	rewritten := append([]string{}, original[:cut]...)
	var prompt, reply map[string]any
	for _, l := range original {
		var r map[string]any
		json.Unmarshal([]byte(l), &r)
		if m, _ := r["message"].(map[string]any); r["type"] == "user" && prompt == nil {
			if _, text := m["content"].(string); text {
				prompt = r
			}
		}
		if r["type"] == "assistant" {
			reply = r
		}
	}
	prompt["uuid"], prompt["parentUuid"], prompt["timestamp"] = "aaaaaaaa-0000-4000-8000-000000000001", reply["uuid"], "2026-02-10T23:30:00.000Z"
	prompt["message"] = map[string]any{"role": "user", "content": "and now stop it"}
	msg := reply["message"].(map[string]any)
	msg["id"] = "msg_rewritten_extra"
	msg["usage"] = map[string]any{"input_tokens": 5, "output_tokens": 1000, "cache_read_input_tokens": 30000, "cache_creation_input_tokens": 700}
	msg["content"] = []any{map[string]any{"type": "text", "text": "Stopped."}}
	reply["uuid"], reply["parentUuid"], reply["requestId"], reply["timestamp"] = "aaaaaaaa-0000-4000-8000-000000000002", prompt["uuid"], "req_rewritten_extra", "2026-02-10T23:30:05.000Z"
	for _, r := range []map[string]any{prompt, reply} {
		l, _ := json.Marshal(r)
		rewritten = append(rewritten, string(l))
	}
	write(rewritten)
	checkCountedOnce(t, fx, "after the rewrite (the session and its fork)", 2, original, rewritten)
}
