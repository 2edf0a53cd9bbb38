package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom/importer"
)

// Format reads Codex CLI rollout files. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Codex CLI's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "codex"

func init() { importer.Register(Format{}) }

// Provider is the provider of a Codex session whose rollout names none
// (session_meta's model_provider).
const Provider = "openai"

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider returns Provider.
func (Format) Provider() string { return Provider }

// Roots are $CODEX_HOME/sessions and $CODEX_HOME/archived_sessions, with
// CODEX_HOME defaulting to ~/.codex.
func (Format) Roots(env func(string) string, home string) []string {
	dir := importer.ToolDir(env, home, "CODEX_HOME", ".codex")
	if dir == "" {
		return nil
	}
	return []string{filepath.Join(dir, "sessions"), filepath.Join(dir, "archived_sessions")}
}

// isRollout reports whether name is a rollout file's name.
func isRollout(name string) bool {
	return strings.HasPrefix(name, "rollout-") &&
		(strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.zst"))
}

// plainTwin returns the uncompressed twin of a compressed rollout (its
// path without .zst) when one sits beside it: Codex is compressing the
// file, and the plain one is the same session, whole. Any other path is
// returned as it is.
func plainTwin(path string) string {
	if plain, ok := strings.CutSuffix(path, ".zst"); ok {
		if _, err := os.Stat(plain); err == nil {
			return plain
		}
	}
	return path
}

// Bundles lists every rollout-*.jsonl and rollout-*.jsonl.zst file under
// root, one bundle each; root itself may be one file, read whatever its
// name. Symbolic links are followed, to directories (sessions kept on
// another disk, a linked ~/.codex) as to files. A compressed file whose
// uncompressed twin sits beside it is left out (plainTwin): it is the
// same session, caught while being compressed. Directories that cannot
// be listed below root are reported beside the bundles found
// (importer.Unreadable).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		return isRollout(d.Name()) && plainTwin(path) == path
	})
}

// Limits on compressed rollouts: the decoder's window, and how much a
// file may expand to, so that a small hostile file cannot fill memory.
// Variables for the tests' sake.
var (
	zstdMaxWindow    uint64 = 64 << 20
	zstdMinExpansion int64  = 256 << 20
	zstdExpansion    int64  = 64
)

// Read reads one rollout file, plain or zstd-compressed, into one
// session.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path, f, info, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".zst") {
		dec, err := newDecoder(f)
		if err != nil {
			return nil, fmt.Errorf("codex: %s: %w", path, err)
		}
		defer dec.Close()
		limit := min(max(zstdMinExpansion, zstdExpansion*info.Size()), importer.MaxFile)
		r = &importer.CapReader{R: dec, Left: limit}
	}
	return read(ctx, path, r)
}

var _ importer.Expander = Format{}

// Compressed reports whether a rollout file is zstd-compressed
// (importer.Expander).
func (Format) Compressed(name string) bool { return strings.HasSuffix(name, ".zst") }

// Expand opens the plain bytes of a compressed rollout
// (importer.Expander), up to zstdExpansion times its size: a big one is
// expanded to a file that is read in segments, so the 1 GB limit of a
// rollout read whole does not apply.
func (Format) Expand(ctx context.Context, name string) (io.ReadCloser, error) {
	f, info, err := importer.Open(name, 0)
	if err != nil {
		return nil, fmt.Errorf("codex: %w", err)
	}
	dec, err := newDecoder(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("codex: %s: %w", name, err)
	}
	limit := max(zstdMinExpansion, zstdExpansion*info.Size())
	return &expanded{CapReader: importer.CapReader{R: dec, Left: limit}, dec: dec, f: f}, nil
}

// expanded is a compressed rollout's plain bytes.
type expanded struct {
	importer.CapReader
	dec *zstd.Decoder
	f   *os.File
}

func (e *expanded) Close() error {
	e.dec.Close()
	return e.f.Close()
}

// newDecoder reads the zstd stream of r with the decoder's memory
// bounded.
func newDecoder(r io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(r,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(zstdMaxWindow))
}

// ReadSegment reads a segment of a plain rollout file
// (importer.Segmenter), with the file's session_meta line, which names
// the session, when the segment does not hold it.
func (Format) ReadSegment(ctx context.Context, b importer.Bundle, seg importer.Segment) (*importer.Result, error) {
	path, f, _, err := importer.OpenBundle(Tool, b, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head, err := importer.FirstLine(ctx, f, seg.From)
	if err != nil {
		return nil, fmt.Errorf("codex: %s: %w", path, err)
	}
	if !bytes.Contains(head, []byte(`"session_meta"`)) {
		head = nil
	}
	return readFrom(ctx, path, head, io.NewSectionReader(f, seg.From, seg.To-seg.From), seg.Line)
}

// Restart reports whether line starts a turn (its turn_context): a
// segment read from it on makes the messages a reading of the whole
// file makes of what follows.
func (Format) Restart(line []byte) bool {
	if !bytes.Contains(line, []byte(`"turn_context"`)) {
		return false
	}
	var l struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(line, &l) == nil && l.Type == "turn_context"
}
