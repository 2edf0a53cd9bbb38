package command

import (
	"context"
	"fmt"
	"io"
)

// ReadHookInput reads the JSON an agent passes its hook on r, at most
// max bytes of it. It reads aside, so that the command still ends with
// ctx (SIGTERM, Ctrl+C, a time bound) when r is a pipe that sends
// nothing.
func ReadHookInput(ctx context.Context, r io.Reader, max int) ([]byte, error) {
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
		done <- read{b, err}
	}()
	select {
	case rd := <-done:
		if rd.err != nil {
			return nil, fmt.Errorf("reading the hook's input: %w", rd.err)
		}
		if len(rd.b) > max {
			return nil, fmt.Errorf("the hook's input is over %d MB", max>>20)
		}
		return rd.b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
