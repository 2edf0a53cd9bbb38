package secrets

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// An allow-list file holds the ids (ValueID) of values never to report,
// one a line, each with what the user said of it after a #:
//
//	4f2a9c0e1b3d5f7a  # sha512 integrity of a lockfile, 2026-11-25
//
// Blank lines and lines starting with # are comments. It holds no value,
// only ids, so that allowing a value by mistake writes no secret down.

// ValidID reports whether id is a value's id as ValueID makes them: 16
// hex digits.
func ValidID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// AllowEntry is one line of an allow-list file.
type AllowEntry struct {
	ID   string `json:"id"`
	Note string `json:"note,omitempty"`
}

// ReadAllow reads the allow-list file at path; a missing file is an
// empty list. A line that holds no valid id is an error naming it.
func ReadAllow(path string) ([]AllowEntry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var out []AllowEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, note, _ := strings.Cut(line, "#")
		id = strings.ToLower(strings.TrimSpace(id))
		if !ValidID(id) {
			return nil, fmt.Errorf("%s:%d: %q is not a secret's id (16 hex digits, as loom secrets scan shows them)", path, n, id)
		}
		out = append(out, AllowEntry{ID: id, Note: strings.TrimSpace(note)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// ReadAllowFile returns the ids of the allow-list file at path.
func ReadAllowFile(path string) ([]string, error) {
	entries, err := ReadAllow(path)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	return ids, nil
}

// WriteAllow writes entries to the allow-list file at path, through a
// file beside it that replaces it whole.
func WriteAllow(path string, entries []AllowEntry) error {
	var b strings.Builder
	b.WriteString("# Values loom secrets scan and redact never report: the ids of false\n# positives, kept by `loom secrets allow ID`. Ids only, no values.\n")
	for _, e := range entries {
		b.WriteString(e.ID)
		if e.Note != "" {
			b.WriteString("  # " + strings.ReplaceAll(e.Note, "\n", " "))
		}
		b.WriteByte('\n')
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
