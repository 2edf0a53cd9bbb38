package importer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/aider"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/internal/testkit/fsfault"
)

// What is not a regular file is refused with one problem, counted as a
// file that failed, at once: a FIFO would block the read until something
// writes to it, and /dev/zero never ends. The rest of the import goes on.
// (Walking a directory, such files are not sessions and are passed over.)
func TestImportRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x.jsonl")
	fsfault.Fifo(t, fifo)
	raw := importertest.ReadBytes(t, "../testdata/agent-sessions/claude-code/spotter/short.jsonl")
	importertest.WriteFile(t, filepath.Join(dir, "good.jsonl"), raw, 0o644)
	fx := newFixture(t)
	for _, tc := range []struct {
		roots []string
		want  string
		good  int
	}{
		{[]string{fifo}, "named pipe", 0},
		{[]string{"/dev/zero"}, "character device", 0},
		{[]string{fifo, filepath.Join(dir, "good.jsonl")}, "named pipe", 1},
	} {
		im := &importer.Importer{Store: fx.st, UserID: "alice"}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		rep, err := im.Run(ctx, []importer.Target{{Format: claudecode.Format{}, Roots: tc.roots, Explicit: true}})
		cancel()
		if err != nil {
			t.Fatalf("%v: %v", tc.roots, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%v took %s", tc.roots, d)
		}
		tr := rep.Tools[0]
		if tr.FilesFailed != 1 || rep.FilesFailed() != 1 || len(tr.Problems) != 1 || !strings.Contains(tr.Problems[0].Reason, tc.want) {
			t.Errorf("%v: %+v", tc.roots, tr)
		}
		if tr.SessionsNew != tc.good {
			t.Errorf("%v: %d sessions imported beside the refused file, want %d", tc.roots, tr.SessionsNew, tc.good)
		}
	}
}

// endless is a reader with no end and no newline, as /dev/zero is.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// One endless line stops being read when the import is cancelled.
func TestLinesStopsInAnEndlessLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- importer.Lines(ctx, endless{}, func(int, []byte) error { return nil }, func(int) {})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Lines = %v, want the context's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lines goes on reading an endless line after its context ended")
	}
}

// A file over the limit is refused before it is read: a sparse file of
// 2 GB as an Aider chat history (read whole, a line at a time), and one
// as a Gemini CLI one-document recording (read a message at a time,
// TestBigOneDocumentRecording), each one problem that says it is too
// large, at once.
// Claude Code's, Codex's, Pi's and Gemini CLI's JSONL session files have
// no such limit: they are read a segment at a time (segment.go,
// TestBigImportMemory).
func TestImportRefusesTooLargeFiles(t *testing.T) {
	dir := t.TempDir()
	sparse := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Skipf("no sparse file here: %v", err)
		}
		return p
	}
	fx := newFixture(t)
	for _, tc := range []struct {
		format importer.Format
		path   string
		want   string
	}{
		{aider.Format{}, sparse(aider.HistoryFile, 2<<30), "too large: 2 GB, over the limit of 1 GB"},
		{gemini.Format{}, sparse("session-2026-01-01T00-00-bbbbbbbb.json", 2<<30), "too large: 2 GB, over the limit of 1 GB"},
	} {
		im := &importer.Importer{Store: fx.st, UserID: "alice"}
		start := time.Now()
		rep, err := im.Run(context.Background(), []importer.Target{{Format: tc.format, Roots: []string{tc.path}, Explicit: true}})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		// At once: well under the 2 s docs/import.md gives on a quiet
		// machine; the bound allows a loaded one.
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("%s took %s", tc.path, d)
		}
		tr := rep.Tools[0]
		if tr.FilesFailed != 1 || len(tr.Problems) != 1 || !strings.Contains(tr.Problems[0].Reason, tc.want) {
			t.Errorf("%s %s: %+v", tc.format.Tool(), tc.path, tr)
		}
	}
}
