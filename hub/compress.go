package hub

import (
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Compression on the wire is zstd, both ways: the client sends a push
// of compressFrom bytes or more compressed, and asks for pages
// compressed, which the hub answers so. Records are mostly base64 of
// ciphertext, which zstd takes back to about the ciphertext's size.

// compressFrom is the size from which a request's body is sent
// compressed.
const compressFrom = 16 << 10

// acceptsZstd reports whether an Accept-Encoding header accepts zstd.
func acceptsZstd(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				continue
			}
		}
		if strings.EqualFold(strings.TrimSpace(name), "zstd") {
			return true
		}
	}
	return false
}

// encoder compresses pushes on the client and pages on the hub: made
// once, safe for concurrent EncodeAll.
var encoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
})

// newDecoder reads zstd from r, one frame after another, in this
// goroutine, with a window no larger than maxRequestBytes: a push's body
// on the hub, a page on the client.
func newDecoder(r io.Reader) (io.ReadCloser, error) {
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxRequestBytes))
	if err != nil {
		return nil, err
	}
	return zr.IOReadCloser(), nil
}
