//go:build unix

package gemini

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
)

// Reading a one-document recording that does not end stops as soon as
// the import is cancelled. A writer behind a named pipe stands for the
// file: it goes on writing until the test ends. (One endless line of a
// .jsonl recording is importer.Lines', tested with it.)
func TestCancelEndlessFile(t *testing.T) {
	const head = `{"sessionId":"endless","projectHash":"h","messages":[`
	more := `{"id":"m","type":"user","content":"` + strings.Repeat("x", 4096) + `"},`
	pipe := filepath.Join(t.TempDir(), "session-2026-01-01T00-00-aaaaaaaa.json")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	stop := make(chan struct{})
	writer := make(chan struct{})
	go func() {
		defer close(writer)
		w, err := os.OpenFile(pipe, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		if _, err := w.WriteString(head); err != nil {
			return
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.WriteString(more); err != nil {
				return // the reader is gone
			}
			// A few MB a second: a reader that ignores the cancellation
			// holds what it read, for as long as the test waits for it.
			time.Sleep(time.Millisecond)
		}
	}()
	defer func() { close(stop); <-writer }()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Format{}.Read(ctx, importer.Bundle{Files: []string{pipe}})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("read after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read goes on after the import was cancelled")
	}
}
