package claudecode

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// TestCwdOfEachCall: a session whose shell moved (cd sub) keeps the
// directory it started in, and each call made after the move records
// its own, so that a relative path of an earlier call is not taken
// from the later directory.
func TestCwdOfEachCall(t *testing.T) {
	lines := []string{
		`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","cwd":"/p","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"write two files"}}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","cwd":"/p","timestamp":"2026-03-01T10:00:01Z","message":{"id":"m1","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cat > a.txt <<'EOF'\na\nEOF"}}]}}`,
		`{"type":"user","uuid":"r1","parentUuid":"a1","sessionId":"s","cwd":"/p","timestamp":"2026-03-01T10:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":""}]}}`,
		`{"type":"assistant","uuid":"a2","parentUuid":"r1","sessionId":"s","cwd":"/p","timestamp":"2026-03-01T10:00:03Z","message":{"id":"m2","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"cd sub"}}]}}`,
		`{"type":"user","uuid":"r2","parentUuid":"a2","sessionId":"s","cwd":"/p/sub","timestamp":"2026-03-01T10:00:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":""}]}}`,
		`{"type":"assistant","uuid":"a3","parentUuid":"r2","sessionId":"s","cwd":"/p/sub","timestamp":"2026-03-01T10:00:05Z","message":{"id":"m3","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"t3","name":"Bash","input":{"command":"cat > b.txt <<'EOF'\nb\nEOF"}}]}}`,
		`{"type":"user","uuid":"r3","parentUuid":"a3","sessionId":"s","cwd":"/p/sub","timestamp":"2026-03-01T10:00:06Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":""}]}}`,
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	importertest.WriteFile(t, path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	res := read(t, path)
	s := res.Sessions[0]
	if s.Cwd != "/p" {
		t.Errorf("the session's directory is %q, want the one it started in, /p", s.Cwd)
	}
	dirs := map[string]string{}
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type != loom.PartTool {
				continue
			}
			var meta struct {
				Cwd string `json:"cwd"`
			}
			json.Unmarshal(p.Metadata, &meta)
			dirs[p.CallID] = meta.Cwd
		}
	}
	if dirs["t1"] != "" || dirs["t2"] != "" || dirs["t3"] != "/p/sub" {
		t.Errorf("the calls' own directories: %q, want t3's /p/sub alone", dirs)
	}
}
