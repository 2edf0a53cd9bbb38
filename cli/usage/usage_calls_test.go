package usage_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	original := toolHeavyLines(t)
	dir := filepath.Join(fx.Home, ".claude", "projects", "-home-user-spotter")
	os.MkdirAll(dir, 0o755)
	write := func(name string, lines []string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl", original)
	checkCountedOnce(t, fx, "the session", 1, original)

	// The same file under another name.
	write("0c0ffee0-1959-4eec-a9d2-0bfade768d8f.jsonl", original)
	checkCountedOnce(t, fx, "a copy of the file", 2, original)

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
	checkCountedOnce(t, fx, "a resumed session", 3, original, lines)
	checkCountedOnce(t, fx, "imported again", 3, original, lines)
	lines = append(lines, more("2")...)
	write(resumed+".jsonl", lines)
	checkCountedOnce(t, fx, "the resumed session grown", 3, original, lines)

	// The copied replies are there, without usage: searchable, resumable.
	if out := fx.MustExec(t, "search", "--all-projects", "--json", "and one more"); !strings.Contains(out, `"session_id"`) {
		t.Errorf("the resumed session's prompts are not searchable: %s", out)
	}
}
