package importer

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/loomhq/loom/internal/safefile"
)

// Limits on what a reader reads of one file, so that no file (a sparse
// one, a runaway log) can hold an import or fill memory. A file over its
// limit is refused before it is read: a problem in the report, its file
// counted as one that could not be read. They are in docs/import.md.
const (
	// MaxFile bounds a session file read whole a line at a time (a
	// Claude Code or Gemini CLI sub-agent's file, the logs of the agents
	// whose readers have no segments), and what a compressed one
	// expands to when it is read whole. A Claude Code, Codex, Gemini CLI
	// (JSONL) or Pi file bigger than a segment is read a segment at a
	// time (segment.go), and a compressed Codex rollout is expanded to
	// a file read so (expand.go), without this limit.
	MaxFile = 1 << 30
	// MaxDocument bounds a file that is one JSON document, which is held
	// whole while it is read (Gemini CLI's one-document recordings).
	MaxDocument = 128 << 20
)

// Open opens a session file for reading: at once, without blocking (a
// named pipe would wait in open(2) for a writer), and only when it is a
// regular file of at most max bytes (no limit when max <= 0). Its error
// says which, in words fit for a problem.
func Open(path string, max int64) (*os.File, fs.FileInfo, error) {
	f, fi, err := safefile.Open(path, max)
	if err != nil {
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenBundle opens the file of b, a bundle of one file, for a reader of
// tool, as Open does with max: its name, the file and its information.
// An empty bundle, and a file that cannot be opened, are errors named
// with tool.
func OpenBundle(tool string, b Bundle, max int64) (string, *os.File, fs.FileInfo, error) {
	name := b.Name()
	if name == "" {
		return "", nil, nil, fmt.Errorf("%s: empty bundle", tool)
	}
	f, fi, err := Open(name, max)
	if err != nil {
		return name, nil, nil, fmt.Errorf("%s: %w", tool, err)
	}
	return name, f, fi, nil
}
