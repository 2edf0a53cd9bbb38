package importer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/keptbytes"
)

// Keeping the originals: after a bundle is read, the bytes of its files
// that the store does not hold yet are kept in it, compressed
// (loom.OriginalsKeeper), so that `loom session reimport` can read them
// again with a later reader once the agent has deleted its files. A
// file grown at its end adds a chunk of its new bytes; one unchanged
// adds nothing; one rewritten (its kept end no longer in place) is kept
// again whole. Files are read and kept loom.MaxOriginalChunk at a time,
// so a file of any size costs that much memory.

// CompressOriginal compresses b as a kept original's data.
func CompressOriginal(b []byte) ([]byte, error) { return keptbytes.Compress(b) }

// DecompressOriginal expands a kept original's data.
func DecompressOriginal(b []byte) ([]byte, error) { return keptbytes.Expand(b) }

// keeper is the store's keeper of originals, nil when the run keeps
// none (or writes nothing).
func (im *Importer) keeper() loom.OriginalsKeeper {
	if im.DryRun || im.NoOriginals {
		return nil
	}
	return im.Store
}

// keepOriginals keeps the bytes of the files of stats (a bundle just
// read) that the store does not hold yet, up to the size each was
// recorded with.
func (im *Importer) keepOriginals(ctx context.Context, tool string, stats []loom.ImportedFile, sessionID string) error {
	k := im.keeper()
	if k == nil {
		return nil
	}
	if err := im.loadKept(ctx, k, tool); err != nil {
		return err
	}
	// The chunks go with the batch, written in its transaction, before
	// the records of their files; a batch whose chunks grow past
	// maxPendingOriginals is written at once, so a file of any size
	// is never held whole.
	put := func(c loom.OriginalChunk) error {
		im.pending.w.Originals = append(im.pending.w.Originals, c)
		im.pending.originals += len(c.Data)
		// A big file's segment (segment.go) is written whole with its
		// records, so that a run stopped after it goes on after it.
		if im.pending.originals >= maxPendingOriginals && im.seg == nil {
			return im.flush(ctx)
		}
		return nil
	}
	if fl, ok := registeredFormat(tool).(Filtered); ok {
		return im.keepCopy(ctx, put, fl, stats, sessionID)
	}
	for _, rec := range stats {
		kf, err := keepFile(ctx, put, im.kept[rec.Path], rec, rec.Path, sessionID, im.ahead.keptFor(rec))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				// Gone or cut short since it was read (an agent that
				// writes its file again whole, as Gemini CLI does, while
				// a hook reads it): what was kept stays, and the next
				// import keeps what it holds then.
				continue
			}
			if errors.Is(err, fs.ErrPermission) {
				// A file its reader could not read either: that reader
				// said so in its one line, and the rest of the import
				// goes on.
				continue
			}
			return fmt.Errorf("keeping the original of %s: %w", rec.Path, err)
		}
		im.kept[rec.Path] = kf
	}
	return nil
}

// loadKept reads what k keeps of tool's files into im.kept, unless it
// holds that already.
func (im *Importer) loadKept(ctx context.Context, k loom.OriginalsKeeper, tool string) error {
	if im.kept != nil && im.keptTool == tool {
		return nil
	}
	files, err := k.OriginalFiles(ctx, im.UserID, tool)
	if err != nil {
		return err
	}
	im.kept, im.keptTool = make(map[string]loom.OriginalFile, len(files)), tool
	for _, f := range files {
		im.kept[f.Path] = f
	}
	return nil
}

// maxPendingOriginals bounds the compressed chunks a batch holds before
// it is written.
const maxPendingOriginals = 32 << 20

// Filtered is a format whose files hold more than the sessions its
// reader reads (an agent's server keeps its users' password hashes and
// tokens in the database that holds the transcripts): what is kept of a
// bundle it read is not its files but the one file KeptCopy writes in
// dir, which holds what Read reads and nothing else, and which Read
// reads as it reads the bundle (a reimport does). It is kept under the
// path of the bundle's main file; the bundle's other files (a
// write-ahead log) are not kept.
type Filtered interface {
	KeptCopy(ctx context.Context, b Bundle, dir string) (string, error)
}

// registeredFormat is the format registered as tool, nil when none is.
func registeredFormat(tool string) Format {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, f := range registry.formats {
		if f.Tool() == tool {
			return f
		}
	}
	return nil
}

// keepCopy keeps, of a bundle of a Filtered format whose files stats
// are, the copy fl makes of it, in place of its main file.
func (im *Importer) keepCopy(ctx context.Context, put func(loom.OriginalChunk) error, fl Filtered, stats []loom.ImportedFile, sessionID string) error {
	if len(stats) == 0 {
		return nil
	}
	main := stats[0]
	files := make([]string, 0, len(stats))
	for _, rec := range stats {
		if rec.Path == rec.Bundle {
			main = rec
		}
		files = append(files, rec.Path)
	}
	dir, err := os.MkdirTemp("", "loom-kept-")
	if err != nil {
		return fmt.Errorf("keeping the original of %s: %w", main.Path, err)
	}
	defer os.RemoveAll(dir)
	cp, err := fl.KeptCopy(ctx, Bundle{Files: files}, dir)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Gone since it was read, or not one its reader reads (an empty
		// file, whose line the reading gave): what was kept stays, and
		// nothing of the file is kept otherwise.
		slog.Debug("no copy of the original kept", "path", main.Path, "err", err)
		return nil
	}
	fi, err := os.Stat(cp)
	if err != nil {
		return fmt.Errorf("keeping the original of %s: %w", main.Path, err)
	}
	rec := main
	rec.Size = fi.Size()
	kf, err := keepFile(ctx, put, im.kept[rec.Path], rec, cp, sessionID, nil)
	if err != nil {
		return fmt.Errorf("keeping the original of %s: %w", main.Path, err)
	}
	im.kept[rec.Path] = kf
	return nil
}

// keepFile keeps what file rec holds beyond kept, what the store has of
// it, reading it at src (rec's path, or a copy made of it), and
// returns what the store has then. ahead, when not nil, is the file
// compressed from its start by a worker (ahead.go): when the whole file
// is to be kept, its chunks are kept instead of reading it again.
func keepFile(ctx context.Context, put func(loom.OriginalChunk) error, kept loom.OriginalFile, rec loom.ImportedFile, src, sessionID string, ahead *keptAhead) (loom.OriginalFile, error) {
	f, err := os.Open(src)
	if err != nil {
		return kept, err
	}
	defer f.Close()
	from := int64(0)
	if kept.Size > 0 && rec.Size >= kept.Size {
		same, err := tailIs(f, kept.Size, kept.Tail)
		if err != nil {
			return kept, err
		}
		if same {
			from = kept.Size
		}
	}
	if from == rec.Size && from > 0 {
		return kept, nil // unchanged: nothing to add
	}
	if from == 0 {
		kept = loom.OriginalFile{UserID: rec.UserID, Tool: rec.Tool, Path: rec.Path, Bundle: rec.Bundle}
		if ahead != nil {
			for _, c := range ahead.chunks {
				c.UserID, c.Tool, c.Path, c.Bundle, c.SessionID, c.ModTime = rec.UserID, rec.Tool, rec.Path, rec.Bundle, sessionID, rec.ModTime
				if err := put(c); err != nil {
					return kept, err
				}
				kept.Size, kept.Stored, kept.Chunks, kept.Tail = c.Offset+c.Size, kept.Stored+int64(len(c.Data)), kept.Chunks+1, c.Tail
				kept.SessionID = pick(sessionID, kept.SessionID)
			}
			return kept, nil
		}
	}
	// The window of the file's last bytes, for each chunk's tail.
	var window []byte
	if from > 0 {
		start := max(0, from-loom.OriginalTail)
		window = make([]byte, from-start)
		if _, err := f.ReadAt(window, start); err != nil {
			return kept, err
		}
	}
	// A buffer of the chunk's size, or the file's rest when less: a
	// small file costs little.
	buf := make([]byte, min(int64(loom.MaxOriginalChunk), rec.Size-from))
	for off := from; off < rec.Size; {
		if err := ctx.Err(); err != nil {
			return kept, err
		}
		n := int(min(int64(len(buf)), rec.Size-off))
		got, err := f.ReadAt(buf[:n], off)
		if err != nil && !(errors.Is(err, io.EOF) && got > 0) {
			if errors.Is(err, io.EOF) {
				break // the file shrank since it was looked at
			}
			return kept, err
		}
		b := buf[:got]
		if len(b) >= loom.OriginalTail {
			// Only the chunk's end is the window's: copying the whole
			// chunk first moved every byte of the file once more.
			window = append(window[:0], b[len(b)-loom.OriginalTail:]...)
		} else {
			window = append(window, b...)
		}
		if len(window) > loom.OriginalTail {
			window = append(window[:0], window[len(window)-loom.OriginalTail:]...)
		}
		data, err := CompressOriginal(b)
		if err != nil {
			return kept, err
		}
		c := loom.OriginalChunk{UserID: rec.UserID, Tool: rec.Tool, Path: rec.Path, Bundle: rec.Bundle, SessionID: sessionID,
			Offset: off, Size: int64(got), Data: data, Tail: tailHash(window), ModTime: rec.ModTime}
		if err := put(c); err != nil {
			return kept, err
		}
		off += int64(got)
		kept.Size, kept.Stored, kept.Chunks, kept.Tail = off, kept.Stored+int64(len(data)), kept.Chunks+1, c.Tail
		kept.SessionID = pick(sessionID, kept.SessionID)
	}
	return kept, nil
}

// tailIs reports whether f's last OriginalTail bytes up to end hash to
// tail.
func tailIs(f *os.File, end int64, tail string) (bool, error) {
	start := max(0, end-loom.OriginalTail)
	b := make([]byte, end-start)
	if _, err := f.ReadAt(b, start); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	return tailHash(b) == tail, nil
}

func tailHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
