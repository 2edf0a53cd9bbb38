package replaylog

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

func TestWriteLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "alice", "s1.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	l.Now = func() time.Time { return at }
	if err := l.Write(Entry{Kind: KindUserMessage, SessionID: "s1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Entry{Kind: KindFinalResult, SessionID: "s1", Text: "hello", Usage: &loom.Usage{InputTokens: 3}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := `{"timestamp":"2026-01-02T03:04:05.006Z","kind":"user_message","session_id":"s1","text":"hi"}` + "\n"
	if got := string(b[:len(want)]); got != want {
		t.Fatalf("first line = %q", got)
	}
	var nilLog *Log
	if err := nilLog.Write(Entry{Kind: KindStep}); err != nil {
		t.Fatal("a nil log must drop entries")
	}
}

// Writers in several goroutines (or processes appending to the same file)
// never interleave within a line.
func TestConcurrentWritersKeepLinesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		l, _ := Open(path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				l.Write(Entry{Kind: KindStep, Type: StepText, Text: string(make([]byte, 500))})
			}
		}()
	}
	wg.Wait()
	f, _ := os.Open(path)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Kind != KindStep {
			t.Fatalf("line %d is not a whole entry: %v", n+1, err)
		}
		n++
	}
	if n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
}

// A write that fails is returned and told to OnError.
func TestWriteErrorReported(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	l, err := Open(filepath.Join(dir, "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var told []error
	l.OnError = func(err error) { told = append(told, err) }
	os.RemoveAll(dir)
	if err := l.Write(Entry{Kind: KindStep}); err == nil || len(told) != 1 || told[0] != err {
		t.Fatalf("Write = %v, OnError got %v", err, told)
	}
}
