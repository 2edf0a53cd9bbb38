package pi

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzRead reads arbitrary bytes as a session file: it must not panic,
// must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	const head = `{"type":"session","id":"s"}` + "\n"
	for _, s := range []string{
		"",
		"{}\n",
		head + `{"type":"message","id":"a","parentId":"a","message":{"role":"toolResult","toolCallId":"x"}}`,
		head + `{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall"},{"type":"toolCall","id":"c"}]}}` + "\n" +
			`{"type":"message","id":"a","parentId":"a","message":{"role":"toolResult","toolCallId":"c","content":"x","isError":true}}`,
		head + `{"type":"compaction","id":"k","summary":"s","tokensBefore":1e99}` + "\n" + `{"type":"message","message":{"role":"user","content":7}}`,
		head + `{"type":"message","id":"b","parentId":"z","message":{"role":"bashExecution","command":"ls","exitCode":2}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		res, err := read(ctx, "fuzz.jsonl", bytes.NewReader(data))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("read took %v", d)
		}
		if err != nil {
			return
		}
		checkValid(t, res)
		lines := bytes.Count(data, []byte("\n")) + 1
		total := 0
		for _, s := range res.Sessions {
			total += len(s.Messages)
		}
		if total > 2*lines*lines+maxForkMessages {
			t.Fatalf("%d messages from %d lines", total, lines)
		}
	})
}
