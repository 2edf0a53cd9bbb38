package gemini

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a recording in each of the places a
// recording can be (a JSONL session, a one-document session, a
// sub-agent's file): it must not panic, must return promptly, and what
// it returns must hold together.
func FuzzRead(f *testing.F) {
	seeds := []string{
		sample,
		filepath.Join("testdata", "snapshot.jsonl"),
		filepath.Join("testdata", "malformed.jsonl"),
		filepath.Join("testdata", "rewind-lost.jsonl"),
		filepath.Join("testdata", "tmp", "604d4331967fb6b76ad7112ac89983c76dd7208b059b54a7df4fc4ab34c4ddf9", "chats", "session-2025-11-20T10-00-22222222.json"),
		filepath.Join("testdata", "tmp", "example", "chats", "session-2026-09-05T09-00-0a1b2c3d.jsonl"),
	}
	for i, s := range seeds {
		b := importertest.ReadBytes(f, s)
		f.Add(b, uint8(i%3))
	}
	for _, s := range []string{
		"",
		"\n\n",
		`{"sessionId":"s","projectHash":"h"}`,
		`{"sessionId":"s","messages":[{"id":"a","type":"user","content":"hi"}]}`,
		"{\"sessionId\":\"s\"}\n{\"id\":\"a\",\"type\":\"user\",\"content\":\"x\"}\n{\"$rewindTo\":\"a\"}\n",
		"{\"sessionId\":\"s\"}\n{\"$set\":{\"messages\":[{\"id\":\"a\",\"type\":\"gemini\",\"content\":[{\"functionCall\":{\"name\":\"f\"}}]}]}}\n",
		"{\"sessionId\":\"s\"}\n{\"id\":\"a\",\"type\":\"gemini\",\"toolCalls\":[{\"id\":\"c\",\"name\":\"t\",\"args\":[1],\"status\":\"error\",\"agentId\":\"x\"}]}\n{\"id\":\"b\",\"type\":\"user\",\"content\":[{\"functionResponse\":{\"id\":\"c\",\"response\":{\"error\":\"e\"}}}],\"displayContent\":\"typed\"}\n",
		"{\"sessionId\":\"s\"}\n{\"type\":\"user\",\"content\":\"no id\"}\n{\"id\":\"a/content\",\"type\":\"user\",\"content\":\"x\",\"displayContent\":[{\"text\":\"y\"}]}\n{\"id\":\"a\",\"type\":\"user\",\"content\":\"x\",\"displayContent\":[{\"text\":\"y\"}]}\n",
	} {
		for where := range uint8(3) {
			f.Add([]byte(s), where)
		}
	}
	// One directory for the whole run, rewritten by each input: a
	// directory made and removed per input would cost more than the read.
	dir := f.TempDir()
	old := time.Now().Add(-time.Hour)
	f.Fuzz(func(t *testing.T, data []byte, where uint8) {
		var file string
		switch where % 3 {
		case 0:
			file = filepath.Join(dir, "chats", "session-2026-01-01T00-00-abcdef12.jsonl")
		case 1:
			file = filepath.Join(dir, "chats", "session-2026-01-01T00-00-abcdef12.json")
		default:
			file = filepath.Join(dir, "chats", "abcdef12-0000", "sub.jsonl")
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		importertest.WriteFile(t, file, data, 0o600)
		// Written a while ago: a one-document recording that does not
		// parse is not waited for as one Gemini CLI is still writing.
		if err := os.Chtimes(file, old, old); err != nil {
			t.Fatal(err)
		}
		type outcome struct {
			res *importer.Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{file}})
			done <- outcome{res, err}
		}()
		select {
		case o := <-done:
			if o.err == nil {
				check(t, o.res)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Read of %d bytes did not return in 10s", len(data))
		}
	})
}
