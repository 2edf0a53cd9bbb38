package pi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loomhq/loom/importer"
)

// ReadAs reads one session file of a program that keeps its sessions in
// pi's format (Oh My Pi, OpenClaw, which run pi's agent), naming tool
// in its errors instead of pi.
func ReadAs(ctx context.Context, tool, path string, r io.Reader) (*importer.Result, error) {
	res, err := read(ctx, path, r)
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return res, err
	}
	msg := strings.TrimPrefix(err.Error(), "pi: ")
	return nil, fmt.Errorf("%s: %s", tool, strings.Replace(msg, "not a pi session file", "not a "+tool+" session file (pi's format)", 1))
}
