package importer

import (
	"errors"
	"io"
)

// ErrExpandedTooLarge stops reading a compressed file that expands
// beyond its limit.
var ErrExpandedTooLarge = errors.New("decompressed size exceeds the limit")

// CapReader reads R, the plain bytes of a compressed session file (Codex's
// rollouts, DeepSeek Harness's logs), and fails with ErrExpandedTooLarge
// once more than Left bytes were read, so that a small hostile file
// cannot fill memory; a stream that ends exactly at the limit is read
// whole.
type CapReader struct {
	R    io.Reader
	Left int64
}

func (c *CapReader) Read(p []byte) (int, error) {
	if c.Left <= 0 {
		// At the limit: fine if the stream ends here.
		var one [1]byte
		if n, err := c.R.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, ErrExpandedTooLarge
	}
	if int64(len(p)) > c.Left {
		p = p[:c.Left]
	}
	n, err := c.R.Read(p)
	c.Left -= int64(n)
	return n, err
}
