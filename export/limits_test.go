package export

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// repeat is an endless reader of one byte over and over: /dev/zero, or
// a line that never ends.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// bounded runs Read on r and fails the test unless it ends within a
// second with an error containing want.
func bounded(t *testing.T, ctx context.Context, r io.Reader, want string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := ReadContext(ctx, r, ReadOptions{Name: "x"})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Read = %v, want one line with %q", err, want)
		}
		return err
	case <-time.After(time.Second):
		t.Fatalf("Read went on for a second (want %q)", want)
	}
	return nil
}

// What no export starts with is refused at its first byte: /dev/zero
// through a pipe is not read on.
func TestReadRefusesEndlessZeros(t *testing.T) {
	err := bounded(t, context.Background(), repeat(0), "x:1: not a loom export")
	if loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("code %q", loom.ErrorCode(err))
	}
}

// A jsonl record that never ends is refused at MaxRecord, a document at
// MaxDocument, an input of endless blank lines at MaxSize: with the
// limits lowered here so that the test reads little.
func TestReadLimits(t *testing.T) {
	defer func(s, d int64, r int) { maxSize, maxDocument, maxRecord = s, d, r }(maxSize, maxDocument, maxRecord)
	maxSize, maxDocument, maxRecord = 8<<20, 4<<20, 1<<20
	bounded(t, context.Background(), io.MultiReader(strings.NewReader(`{"type":"session","session":{"title":"`), repeat('a')), "x:1: record longer than 1 MB")
	bounded(t, context.Background(), io.MultiReader(strings.NewReader("\n\n{\"version\": 1, \"sessions\": [\n"), repeat(' ')), "x: too large: a json export is read whole, up to 4 MB")
	bounded(t, context.Background(), repeat('\n'), "x: too large: over the limit of 8 MB")
	// Just under the limits is read.
	if _, err := ReadContext(context.Background(), strings.NewReader(strings.Repeat("\n", 8<<20-1)), ReadOptions{Name: "x"}); err == nil || !strings.Contains(err.Error(), "empty file") {
		t.Errorf("8 MB of blank lines: %v", err)
	}
}

// Reading stops when the context ends, in the middle of a record.
func TestReadStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err := bounded(t, ctx, io.MultiReader(strings.NewReader("{\"version\": 1, \"sessions\": [\n"), repeat(' ')), "context canceled")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Read = %v, want context.Canceled", err)
	}
}
