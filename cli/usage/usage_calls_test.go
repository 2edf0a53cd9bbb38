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

// A model call Claude Code wrote into two files is counted once, as
// ccusage counts it (by message id and request id): a session file
// copied under another name (renamed, backed up), and a session resumed
// into a new file that starts with the old one's lines, add to the
// reports only the calls no other file held. The copies are imported
// whole (their messages are searchable); a reply whose call another
// session counts is kept without usage. Every report agrees with a
// count by hand.
func TestUsageCountsACallInTwoFilesOnce(t *testing.T) {
	t.Parallel()
	countsACallInTwoFilesOnce(t, "")
}

// So with [secrets] redact_on_write: redaction is the store's rule, and
// the import still finds the calls the store counts (a copy resumed under
// a new id once counted its calls twice: $23.71 for $11.85).
func TestUsageCountsACallInTwoFilesOnceWithRedactOnWrite(t *testing.T) {
	t.Parallel()
	countsACallInTwoFilesOnce(t, "[secrets]\nredact_on_write = true\n")
}

// countsACallInTwoFilesOnce is TestUsageCountsACallInTwoFilesOnce with
// config.toml holding config ("" for none).
func countsACallInTwoFilesOnce(t *testing.T, config string) {
	fx := clitest.NewEmptyFixture(t)
	if config != "" {
		clitest.WriteConfig(t, fx, config)
	}
	b, err := os.ReadFile(filepath.Join(clitest.Samples, "claude-code", "spotter", "tool_heavy.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	original := strings.Split(strings.TrimSpace(string(b)), "\n")
	dir := filepath.Join(fx.Home, ".claude", "projects", "-home-user-spotter")
	os.MkdirAll(dir, 0o755)
	write := func(name string, lines []string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, sessions int, files ...[]string) {
		t.Helper()
		fx.MustExec(t, "session", "import", "--from", "claude-code")
		var listed []*loom.Session
		json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "--all-projects", "--json")), &listed)
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
		json.Unmarshal([]byte(fx.MustExec(t, "usage", "--json")), &report)
		json.Unmarshal([]byte(fx.MustExec(t, "usage", "daily", "--json")), &daily)
		report.Total.CostUSD, daily.Total.CostUSD, daily.Total.APICalls = 0, 0, want.APICalls
		if report.Total != want || daily.Total.Usage != want || daily.Total.Messages != want.APICalls {
			t.Errorf("%s: loom usage counts\n%+v\nusage daily\n%+v (%d messages)\nby hand, each call once:\n%+v",
				when, report.Total, daily.Total.Usage, daily.Total.Messages, want)
		}
	}
	write("d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl", original)
	check("the session", 1, original)

	// The same file under another name.
	write("0c0ffee0-1959-4eec-a9d2-0bfade768d8f.jsonl", original)
	check("a copy of the file", 2, original)

	// Resumed into a new file: the old lines under a new session id and
	// new line ids, then a new prompt and reply.
	const resumed = "5e55e55e-0000-4000-8000-000000000001"
	var lines []string
	var last map[string]any
	for _, l := range original {
		var r map[string]any
		json.Unmarshal([]byte(l), &r)
		if _, ok := r["sessionId"]; ok {
			r["sessionId"] = resumed
		}
		for _, k := range []string{"uuid", "parentUuid"} {
			if id, ok := r[k].(string); ok && id != "" {
				r[k] = "r" + id[1:]
			}
		}
		if id, ok := r["uuid"].(string); ok && id != "" && (r["type"] == "user" || r["type"] == "assistant") {
			last = r // the new turn follows the conversation's last line
		}
		out, _ := json.Marshal(r)
		lines = append(lines, string(out))
	}
	more := func(n string) []string {
		prompt := map[string]any{"type": "user", "sessionId": resumed, "uuid": "aaaaaaaa-0000-4000-8000-00000000000" + n, "parentUuid": last["uuid"],
			"timestamp": "2026-02-10T23:30:0" + n + ".000Z", "cwd": last["cwd"], "message": map[string]any{"role": "user", "content": "and one more " + n}}
		reply := map[string]any{"type": "assistant", "sessionId": resumed, "uuid": "bbbbbbbb-0000-4000-8000-00000000000" + n, "parentUuid": prompt["uuid"],
			"timestamp": "2026-02-10T23:30:0" + n + ".500Z", "cwd": last["cwd"], "requestId": "req_more_" + n,
			"message": map[string]any{"id": "msg_more_" + n, "role": "assistant", "model": "claude-opus-4-6", "content": []any{map[string]any{"type": "text", "text": "Done " + n + "."}},
				"usage": map[string]any{"input_tokens": 5, "output_tokens": 100, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 70}}}
		last = reply
		var out []string
		for _, r := range []map[string]any{prompt, reply} {
			l, _ := json.Marshal(r)
			out = append(out, string(l))
		}
		return out
	}
	lines = append(lines, more("1")...)
	write(resumed+".jsonl", lines)
	check("a resumed session", 3, original, lines)
	check("imported again", 3, original, lines)
	lines = append(lines, more("2")...)
	write(resumed+".jsonl", lines)
	check("the resumed session grown", 3, original, lines)

	// The copied replies are there, without usage: searchable, resumable.
	if out := fx.MustExec(t, "search", "--all-projects", "--json", "and one more"); !strings.Contains(out, `"session_id"`) {
		t.Errorf("the resumed session's prompts are not searchable: %s", out)
	}
}
