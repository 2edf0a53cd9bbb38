// Package memory keeps loom's two long-term memory files: MEMORY.md, what
// an agent chose to remember, and USER.md, about the user. Both are plain
// Markdown the user may edit; agents only read them whole and append.
package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom"
)

// MaxAppend bounds what one append adds: memory is for facts and
// decisions, not for transcripts.
const MaxAppend = 16 << 10

// Read returns the file's text, "" when it does not exist yet.
func Read(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	return string(b), nil
}

// Append adds text as a line (or lines) at the end of the file, creating
// it and its directory when missing.
func Append(path, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return loom.Errorf(loom.EINVALID, "nothing to append: text is empty")
	}
	if len(text) > MaxAppend {
		return loom.Errorf(loom.EINVALID, "text is %d bytes; append at most %d at a time", len(text), MaxAppend)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("append to %s: %w", filepath.Base(path), err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("append to %s: %w", filepath.Base(path), err)
	}
	_, err = f.WriteString(text + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", filepath.Base(path), err)
	}
	return nil
}
