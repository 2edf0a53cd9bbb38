package command_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/loomhq/loom/cli/command"
)

func TestReadHookInput(t *testing.T) {
	ctx := context.Background()
	in := `{"session_id":"abc","transcript_path":"/tmp/t.jsonl"}`
	if got, err := command.ReadHookInput(ctx, strings.NewReader(in), 1<<20); err != nil || string(got) != in {
		t.Fatalf("ReadHookInput = %q, %v", got, err)
	}
	// Exactly the limit is read; one byte more is refused, in one line.
	if got, err := command.ReadHookInput(ctx, strings.NewReader(strings.Repeat("x", 1<<20)), 1<<20); err != nil || len(got) != 1<<20 {
		t.Fatalf("an input of the limit: %d bytes, %v", len(got), err)
	}
	_, err := command.ReadHookInput(ctx, strings.NewReader(strings.Repeat("x", 1<<20+1)), 1<<20)
	if err == nil || err.Error() != "the hook's input is over 1 MB" {
		t.Fatalf("an input over the limit: %v", err)
	}
	_, err = command.ReadHookInput(ctx, iotest.ErrReader(errors.New("broken pipe")), 1<<20)
	if err == nil || err.Error() != "reading the hook's input: broken pipe" {
		t.Fatalf("a failing read: %v", err)
	}
}

// A pipe that sends nothing does not hold the command past its context.
func TestReadHookInputStalled(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := command.ReadHookInput(ctx, pr, 1<<20)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadHookInput on a stalled pipe after cancel = %v", err)
	}
}
