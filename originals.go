package loom

import (
	"context"
	"time"
)

// OriginalChunk is a piece of the bytes loom read from one of an agent's
// files, kept so that a reader fixed later can read them again (`loom
// session reimport`) after the agent has deleted the file. A file is
// kept as chunks in order of Offset: an import that finds the file grown
// at its end adds one chunk of the new bytes; one that finds it
// rewritten (its kept end no longer in place) keeps it again from 0,
// replacing its older chunks.
type OriginalChunk struct {
	UserID string
	// Tool is the agent that wrote the file; Path is the file as the
	// import found it and Bundle the main file of its group
	// (ImportedFile).
	Tool   string
	Path   string
	Bundle string
	// SessionID is loom's copy of the session the bundle holds, empty
	// when it holds several (a database of many sessions).
	SessionID string
	// Offset and Size are the bytes of the file the chunk holds: Size
	// bytes from Offset, as the file had them when read.
	Offset int64
	Size   int64
	// Data is the chunk's bytes compressed with zstd. A redacted chunk
	// holds the bytes with the secret replaced, so it may expand to
	// another length than Size.
	Data []byte
	// Tail is the hex SHA-256 of the file's last OriginalTail bytes up to
	// Offset+Size, how the next import tells an append from a rewrite.
	Tail string
	// ModTime is the file's modification time when read; KeptAt when the
	// chunk was stored (set by the store).
	ModTime time.Time
	KeptAt  time.Time
}

// OriginalTail is how many bytes before a kept file's end must still be
// in place for a larger file to count as the kept one grown.
const OriginalTail = 64 << 10

// MaxOriginalChunk bounds the source bytes of one chunk, so that neither
// keeping nor reading back a file of any size holds more of it at once.
const MaxOriginalChunk = 8 << 20

// OriginalFile sums what is kept of one file.
type OriginalFile struct {
	UserID    string
	Tool      string
	Path      string
	Bundle    string
	SessionID string
	// Size is how many source bytes are kept (the end of the last
	// chunk), Stored what they take compressed, Chunks how many pieces.
	Size    int64
	Stored  int64
	Chunks  int
	Tail    string
	ModTime time.Time
}

// OriginalsKeeper is a Store that keeps the original bytes of imported
// files. Both SQL engines are.
type OriginalsKeeper interface {
	// OriginalFiles sums what is kept of userID's files of tool (every
	// tool's when empty), by path.
	OriginalFiles(ctx context.Context, userID, tool string) ([]OriginalFile, error)
	// KeepOriginal stores c. A chunk at Offset 0 replaces every chunk
	// kept of its path; any other must start where the kept bytes end
	// (EINVALID otherwise), so that the chunks of a path always hold its
	// bytes from 0 without a gap.
	KeepOriginal(ctx context.Context, c OriginalChunk) error
	// OriginalChunks calls fn with the chunks of userID's file path in
	// order, one at a time (a file of any size is never held whole).
	OriginalChunks(ctx context.Context, userID, path string, fn func(OriginalChunk) error) error
	// RewriteOriginal replaces the data of the chunk of path at offset
	// (a redaction), keeping its place and size in the file.
	RewriteOriginal(ctx context.Context, userID, path string, offset int64, data []byte) error
	// DeleteOriginals removes what is kept of the files whose session is
	// one of sessionIDs, and of those whose session the store no longer
	// holds (purged from the trash), and returns how many chunks it
	// removed.
	DeleteOriginals(ctx context.Context, userID string, sessionIDs []string) (int, error)
}

// Validate checks a chunk before it is stored.
func (c *OriginalChunk) Validate() error {
	switch {
	case c.UserID == "" || c.Path == "" || c.Tool == "" || c.Bundle == "":
		return Errorf(EINVALID, "a kept original needs its user, path, tool and bundle")
	case c.Offset < 0 || c.Size < 0:
		return Errorf(EINVALID, "a kept original of %s has a negative offset or size", c.Path)
	case c.Size > MaxOriginalChunk:
		return Errorf(EINVALID, "a kept original of %s holds %d bytes, more than %d", c.Path, c.Size, MaxOriginalChunk)
	}
	return nil
}
