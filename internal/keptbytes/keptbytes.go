// Package keptbytes compresses and expands the data of kept originals
// (loom.OriginalChunk): the importer compresses what it reads, the store
// expands a chunk to redact it before it keeps it, `loom session
// reimport` and `loom secrets redact` expand what is kept.
package keptbytes

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
)

var encoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	// One frame per chunk, of at most 8 MB: a window of 1 MB finds
	// nearly all a session file repeats (its lines' metadata) and keeps
	// the encoder small. One encoder a core: an import compresses on
	// its parse workers, one file each (EncodeAll waits for a free
	// encoder, and what it writes does not depend on which).
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true))
})

var decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(4*loom.MaxOriginalChunk))
})

// Compress compresses b as a kept original's data.
func Compress(b []byte) ([]byte, error) {
	enc, err := encoder()
	if err != nil {
		return nil, err
	}
	return enc.EncodeAll(b, make([]byte, 0, len(b)/4+64)), nil
}

// Expand expands a kept original's data.
func Expand(b []byte) ([]byte, error) {
	dec, err := decoder()
	if err != nil {
		return nil, err
	}
	out, err := dec.DecodeAll(b, nil)
	if err != nil {
		return nil, fmt.Errorf("kept original damaged: %w", err)
	}
	return out, nil
}
