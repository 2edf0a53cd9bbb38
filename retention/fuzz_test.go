package retention

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzReadChat: any chat file is read in bounded time without a panic,
// and one it takes for a session has a session id and holds a message
// to resume.
func FuzzReadChat(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "testdata", "agent-sessions", "gemini", "vibecodingtracker-gemini.jsonl")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"sessionId":"s","messages":[{"id":"m","type":"user"}],"lastUpdated":"2026-03-01T00:00:00Z"}`))
	f.Add([]byte(`{"$set":{"lastUpdated":1}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "chat.jsonl")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		mtime := time.Unix(1, 0)
		info, err := readChat(p, mtime)
		if err != nil {
			t.Fatal(err)
		}
		if info.invalid == "" && (info.id == "" || !info.resumable) {
			t.Fatalf("%q taken for a session: %+v", data, info)
		}
	})
}

// FuzzStripComments: JSON without comments comes out as it went in,
// and whatever goes in, a comment's text never comes out.
func FuzzStripComments(f *testing.F) {
	f.Add([]byte(`{"a": "http://x//y", "b": [1, 2] /* two */} // end`))
	f.Add([]byte(`{"a": "\"//\""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := stripComments(data)
		if json.Valid(data) && !bytes.Contains(data, []byte("/")) && !bytes.Equal(out, data) {
			t.Fatalf("%q came out as %q", data, out)
		}
		var a, b any
		if json.Unmarshal(data, &a) == nil {
			if err := json.Unmarshal(out, &b); err != nil {
				t.Fatalf("valid JSON %q made invalid: %q", data, out)
			}
		}
	})
}
