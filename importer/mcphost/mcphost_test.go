package mcphost

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is what MCPHost v0.34.0 (built with the go command from
// the Go module proxy; `mcphost -m openai:gpt-fake --provider-url URL
// -p PROMPT` against a fake model on the Chat Completions API, as
// TestRealMCPHost runs it) saved, the home directory renamed /home/u:
// work/hello.json, saved with --save-session and continued with
// --session, and other/notes.json, a turn that reads a file with its
// builtin filesystem server.
var (
	real = filepath.Join("testdata", "real")
	file = filepath.Join(real, "work", "hello.json")
)

func TestRead(t *testing.T) { checkRead(t, real) }

// MCPHost writes the document again after each message: a turn more is
// two messages more, the earlier ones unchanged.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollowsList(t, Format{}, real, 2, 7, filepath.Join("work", "hello.json"), "messages",
		map[string]any{"id": "msg_a1", "role": "user", "content": "Thanks", "timestamp": "2026-11-27T20:40:00Z"},
		map[string]any{"id": "msg_a2", "role": "assistant", "content": "You are welcome.", "timestamp": "2026-11-27T20:40:01Z"})
}

// A document that is not JSON (cut off as it was written) is one
// problem naming the file; a JSON document that is not MCPHost's (a
// folder of sessions may hold other JSON files) is skipped, no problem.
func TestReadNotASession(t *testing.T) {
	data := importertest.ReadBytes(t, file)
	importertest.ReadsAsOneProblem(t, Format{}, "cut.json", data[:len(data)/2])
	other := filepath.Join(t.TempDir(), "package.json")
	importertest.WriteFile(t, other, []byte(`{"name": "x", "version": "1.0.0"}`), 0o600)
	res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{other}})
	if err != nil || len(res.Sessions) != 0 || len(res.Problems) != 0 || res.Skipped["not-a-session"] != 1 {
		t.Errorf("other: sessions %d, problems %v, skipped %v, %v", len(res.Sessions), res.Problems, res.Skipped, err)
	}
}

// A tool's result is the text of the MCP server's result, a failure
// its error.
func TestResult(t *testing.T) {
	for _, c := range []struct {
		in, want string
		failed   bool
	}{
		{`{"type":"text","data":{"text":"{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]}"}}`, "a\nb", false},
		{`{"type":"text","data":{"text":"{\"content\":[{\"type\":\"text\",\"text\":\"no such file\"}],\"isError\":true}"}}`, "no such file", true},
		{`{"type":"text","data":{"text":"plain"}}`, "plain", false},
		{`{"type":"error","data":{"error":"denied"}}`, "denied", true},
		{`not json`, "not json", false},
	} {
		if got, failed := result(c.in); got != c.want || failed != c.failed {
			t.Errorf("result(%s) = %q, %v; want %q, %v", c.in, got, failed, c.want, c.failed)
		}
	}
}
