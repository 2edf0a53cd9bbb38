package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Expander is a Segmenter some of whose main files are not lines it can
// read at an offset: compressed (a Codex rollout kept as .jsonl.zst),
// or one JSON document (a big Gemini CLI .json recording). Such a file
// is expanded once, a stream read from its start, to a temporary file
// of lines,
// which is read in segments as a plain file is (one no bigger than a
// segment is read whole, as it was); the
// sessions and problems read name the compressed file. Memory stays
// bounded by a segment; the temporary file takes the expanded size on
// disk while the import runs.
type Expander interface {
	Segmenter
	// Compressed reports whether the main file name is one.
	Compressed(name string) bool
	// Expand opens the plain bytes of the compressed file name (its
	// lines). An error it reads says what is wrong with the file.
	Expand(ctx context.Context, name string) (io.ReadCloser, error)
}

// compressed is f as an Expander when the main file name is one of its
// compressed files.
func compressed(f any, name string) (Expander, bool) {
	ex, ok := f.(Expander)
	return ex, ok && ex.Compressed(name)
}

// expandTo writes the plain bytes of the compressed file name to a file
// of the same name less its last extension (rollout-….jsonl) in dir,
// and returns its path. An interrupt stops it.
func expandTo(ctx context.Context, ex Expander, name, dir string) (string, error) {
	r, err := ex.Expand(ctx, name)
	if err != nil {
		return "", err
	}
	defer r.Close()
	p := filepath.Join(dir, strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)))
	out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("expanding %s: %w", name, err)
	}
	src := &readErr{r: ContextReader{Ctx: ctx, R: r}}
	_, err = io.Copy(out, src)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	switch {
	case err == nil:
		return p, nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	case src.err != nil && errors.Is(err, src.err):
		// What the Expander found wrong with the file says so itself.
		return "", src.err
	}
	return "", fmt.Errorf("expanding %s: %w", name, err)
}

// readErr is r, with the error other than io.EOF it last returned.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// ContextReader reads R until Ctx is done, so that a big file's reading
// (an expansion, a huge JSON document) stops at once on an interrupt.
type ContextReader struct {
	Ctx context.Context
	R   io.Reader
}

func (c ContextReader) Read(p []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.R.Read(p)
}
