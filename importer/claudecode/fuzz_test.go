package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session file and as a sub-agent's
// file: the reader must not panic, must finish quickly, and must return
// sessions that obey the rules whatever the file says.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(samples, "*", "*.jsonl"))
	subs, _ := filepath.Glob(filepath.Join(samples, "*", "*", "subagents", "*.jsonl"))
	own, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, p := range append(append(files, subs...), own...) {
		data := importertest.ReadBytes(f, p)
		// Small seeds: the fuzzer mutates large inputs slowly.
		f.Add(head(data, 16<<10), false)
		f.Add(head(data, 16<<10), true)
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
		// In memory: a file system is too slow for the fuzzer. The data is
		// read as a session file with a compaction agent's file (the same
		// bytes), or as a sub-agent's file alone.
		files := []string{"/p/" + caseSID + ".jsonl", "/p/" + caseSID + "/subagents/agent-acompact-f.jsonl"}
		if agent {
			files = []string{"/p/agent-fuzz.jsonl"}
		}
		rd := &reader{ctx: context.Background(), open: func(string) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}}
		// A read that hangs fails the run with every goroutine's stack,
		// so that the fuzzer keeps the input.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				buf := make([]byte, 1<<20)
				panic(fmt.Sprintf("Read of %d bytes still running after 10s:\n%s", len(data), buf[:runtime.Stack(buf, true)]))
			}
		}()
		res, err := rd.read(importer.Bundle{Files: files})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		checkResult(t, res)
		importertest.CheckMessagesPerLine(t, res, data, func(lines int) int { return 4 * (lines + maxForkMessages) })
	})
}

// head is the first lines of data that fit in n bytes, at least one.
func head(data []byte, n int) []byte {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, importer.MaxLine)
	var b bytes.Buffer
	for sc.Scan() {
		if b.Len() > 0 && b.Len()+len(sc.Bytes()) >= n {
			break
		}
		b.Write(sc.Bytes())
		b.WriteByte('\n')
	}
	return b.Bytes()
}
