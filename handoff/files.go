package handoff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// WriteNew writes data as the new file path, making its directory: a
// file already there is never replaced (the tools name their files by
// fresh ids, so one there is another session's). The file appears
// whole or not at all.
func WriteNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".loom-handoff-*")
	if err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("handoff: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("handoff: writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	// A hard link fails when path exists, where a rename would replace it.
	if err := os.Link(tmp.Name(), path); err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	return nil
}

// WriteLines writes values as the new file path (see WriteNew), as JSON
// one a line, unless ctx has ended.
func WriteLines[T any](ctx context.Context, path string, values []T) error {
	data, err := jsonLines(values)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return WriteNew(path, data)
}

// jsonLines is values as JSON, one a line.
func jsonLines[T any](values []T) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("handoff: %w", err)
		}
	}
	return b.Bytes(), nil
}

// ResumeIn is the command that runs cmd in dir, the words quoted for a
// POSIX shell where they need it.
func ResumeIn(dir string, cmd ...string) string {
	words := []string{"cd", shellQuote(dir), "&&"}
	for _, w := range cmd {
		words = append(words, shellQuote(w))
	}
	return strings.Join(words, " ")
}

var plainWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`) })

func shellQuote(s string) string {
	if plainWord().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Stamp is t as the tools write times: RFC 3339 in UTC with
// milliseconds.
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// WriteJSON writes v as the new file path (see WriteNew), as indented
// JSON with <, > and & as they are, unless ctx has ended.
func WriteJSON(ctx context.Context, path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return WriteNew(path, b.Bytes())
}
