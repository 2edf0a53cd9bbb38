package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
)

// FuzzRead reads arbitrary bytes as a session file and as a sub-agent's
// file: the reader must not panic, must finish quickly, and must return
// sessions that obey the rules whatever the file says.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(samples, "*", "*.jsonl"))
	subs, _ := filepath.Glob(filepath.Join(samples, "*", "*", "subagents", "*.jsonl"))
	for _, p := range append(files, subs...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(head(data, 60), false)
		f.Add(head(data, 60), true)
	}
	var small []string
	for _, lines := range [][]any{
		{user("u1", "", 0, "hi"), asst("a1", "u1", 1, "m1", text("hello"), toolUse("t1", "Task", L{"prompt": "p"})),
			user("r1", "a1", 2, []any{toolResult("t1", "done", false)}), asst("a2", "u1", 3, "m2", text("again"))},
		{with(line("system", "b1", "", 0), "subtype", "compact_boundary", "logicalParentUuid", "zz"),
			with(user("c1", "b1", 0, "summary"), "isCompactSummary", true), L{"type": "summary", "leafUuid": "c1", "summary": "t"}},
		{with(user("s1", "", 0, "side"), "isSidechain", true), user("u1", "u1", 0, "<command-name>/x</command-name>")},
	} {
		var b bytes.Buffer
		for _, l := range lines {
			j, _ := json.Marshal(l)
			b.Write(j)
			b.WriteByte('\n')
		}
		small = append(small, b.String())
	}
	for _, s := range small {
		f.Add([]byte(s), false)
	}
	f.Add([]byte("{\"type\":\"user\"\n[]\nnull\n{}\n"), false)

	f.Fuzz(func(t *testing.T, data []byte, agent bool) {
		dir := t.TempDir()
		name := caseSID + ".jsonl"
		if agent {
			name = "agent-fuzz.jsonl"
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := New().Read(context.Background(), importer.Bundle{Files: []string{path}})
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("Read took %v for %d bytes", d, len(data))
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		checkResult(t, res)
		lines := bytes.Count(data, []byte("\n")) + 1
		total := 0
		for _, s := range res.Sessions {
			total += len(s.Messages)
		}
		if total > 2*(lines+maxForkMessages) {
			t.Fatalf("%d messages from %d lines", total, lines)
		}
	})
}

// head is the first n lines of data.
func head(data []byte, n int) []byte {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, importer.MaxLine)
	var b bytes.Buffer
	for i := 0; i < n && sc.Scan(); i++ {
		b.Write(sc.Bytes())
		b.WriteByte('\n')
	}
	return b.Bytes()
}
