package importer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/testseed"
)

// Every chunk keepFile makes carries the hash of the file's last
// loom.OriginalTail bytes up to the chunk's end, whether the file is
// kept whole or as it grows, in steps of any size, across chunks of
// loom.MaxOriginalChunk: what a later run compares to know the file
// only grew. Generated files and growth steps.
func TestKeptTailIsTheFilesEnd(t *testing.T) {
	ctx := context.Background()
	r := testseed.Rand(t)
	dir := t.TempDir()
	sizes := []int{1 + r.IntN(loom.OriginalTail/2), loom.OriginalTail + r.IntN(loom.OriginalTail), loom.MaxOriginalChunk + r.IntN(2*loom.OriginalTail)}
	for i, size := range sizes {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte('a' + r.IntN(8)) // compressible, as session files are
		}
		path := filepath.Join(dir, "f.jsonl")
		wantTail := func(end int64) string { return tailHash(data[max(0, end-loom.OriginalTail):end]) }
		check := func(how string, chunks []loom.OriginalChunk, kept loom.OriginalFile, end int64) {
			t.Helper()
			for _, c := range chunks {
				if c.Tail != wantTail(c.Offset+c.Size) {
					t.Fatalf("file %d (%d bytes), %s: the chunk at %d+%d has the tail of other bytes", i, size, how, c.Offset, c.Size)
				}
				got, err := DecompressOriginal(c.Data)
				if err != nil || !bytes.Equal(got, data[c.Offset:c.Offset+c.Size]) {
					t.Fatalf("file %d, %s: the chunk at %d does not hold the file's bytes (%v)", i, how, c.Offset, err)
				}
			}
			if kept.Size != end || kept.Tail != wantTail(end) {
				t.Fatalf("file %d, %s: kept %d bytes with tail %.8s, want %d and %.8s", i, how, kept.Size, kept.Tail, end, wantTail(end))
			}
		}
		// Whole.
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var chunks []loom.OriginalChunk
		put := func(c loom.OriginalChunk) error { chunks = append(chunks, c); return nil }
		rec := loom.ImportedFile{Path: path, Size: int64(size)}
		kept, err := keepFile(ctx, put, loom.OriginalFile{}, rec, path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		check("whole", chunks, kept, int64(size))
		// Grown in steps.
		chunks, kept = nil, loom.OriginalFile{}
		for end := 0; end < size; {
			end = min(size, end+1+r.IntN(size/2+1))
			if err := os.WriteFile(path, data[:end], 0o600); err != nil {
				t.Fatal(err)
			}
			rec := loom.ImportedFile{Path: path, Size: int64(end)}
			if kept, err = keepFile(ctx, put, kept, rec, path, "", nil); err != nil {
				t.Fatal(err)
			}
			check("grown", chunks, kept, int64(end))
		}
	}
}
