//go:build unix

package gemini

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// A named pipe is refused at once, never opened to wait for a writer nor
// read without end.
func TestRefuseNamedPipe(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "session-2026-01-01T00-00-aaaaaaaa.json")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{pipe}})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
			t.Errorf("read a named pipe: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("reading a named pipe waits")
	}
}

// Reading a large one-document recording stops as soon as the import is
// cancelled: 64 MB of messages, cancelled after a few milliseconds.
func TestCancelLargeDocument(t *testing.T) {
	const head = `{"sessionId":"large","projectHash":"h","messages":[`
	more := `{"id":"m","type":"user","content":"` + strings.Repeat("x", 4096) + `"},`
	file := filepath.Join(t.TempDir(), "session-2026-01-01T00-00-aaaaaaaa.json")
	body := head + strings.Repeat(more, (64<<20)/len(more)) + `{"id":"z","type":"user","content":"end"}]}`
	importertest.WriteFile(t, file, []byte(body), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Format{}.Read(ctx, importer.Bundle{Files: []string{file}})
		done <- err
	}()
	time.Sleep(5 * time.Millisecond)
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
