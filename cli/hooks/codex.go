package hooks

import (
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// codexNotify is the notify program of a Codex config.toml, nil when it
// sets none.
func codexNotify(b []byte) ([]string, error) {
	var cfg struct {
		Notify []string `toml:"notify"`
	}
	if _, err := toml.Decode(string(b), &cfg); err != nil {
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	return cfg.Notify, nil
}

// applyCodex sets or takes out Codex's notify program. A top-level key
// goes before the file's first table, so loom's line goes there; the
// rest of the file, comments included, is kept as it was. A notify
// program of loom's that runs another loom (moved, or named bare) is
// set again to run this one.
func applyCodex(r *Report, b []byte, prog, args string, install bool) ([]byte, error) {
	cur, err := codexNotify(b)
	if err != nil {
		return nil, err
	}
	ours := isLoom(strings.Join(cur, " "), args)
	r.Import = ours
	lines := strings.SplitAfter(string(b), "\n")
	switch {
	case install && ours && len(cur) > 0 && cur[0] == prog, !install && !ours:
		return nil, nil
	case install && ours:
		lines, err = dropNotify(lines, args)
		if err != nil {
			return nil, err
		}
		out, err := addNotify(lines, prog, args)
		if err != nil {
			return nil, err
		}
		r.Updated = []string{"notify"}
		return out, nil
	case install && cur != nil:
		return nil, fmt.Errorf("codex already runs %q after each turn and has room for one notify program: call it and `%s %s` from a script (docs/import.md)", strings.Join(cur, " "), prog, args)
	case install:
		out, err := addNotify(lines, prog, args)
		if err != nil {
			return nil, err
		}
		r.Import, r.Added = true, []string{"notify"}
		return out, nil
	}
	lines, err = dropNotify(lines, args)
	if err != nil {
		return nil, err
	}
	r.Import, r.Removed = false, []string{"notify"}
	return []byte(strings.Join(lines, "")), nil
}

// topLines counts the lines before the file's first table.
func topLines(lines []string) int {
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "[") {
			return i
		}
	}
	return len(lines)
}

// addNotify puts loom's notify line after the last line of the top
// section that is not blank.
func addNotify(lines []string, prog, args string) ([]byte, error) {
	var words []string
	for _, w := range append([]string{prog}, strings.Fields(args)...) {
		q, err := marshal(w) // a JSON string is a TOML basic string
		if err != nil {
			return nil, err
		}
		words = append(words, string(q))
	}
	at := topLines(lines)
	for at > 0 && strings.TrimSpace(lines[at-1]) == "" {
		at--
	}
	head := strings.Join(lines[:at], "")
	if head != "" && !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return []byte(head + "notify = [" + strings.Join(words, ", ") + "]\n" + strings.Join(lines[at:], "")), nil
}

// dropNotify is lines without loom's notify line.
func dropNotify(lines []string, args string) ([]string, error) {
	for i, l := range lines[:topLines(lines)] {
		k, _, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok || strings.TrimSpace(k) != "notify" {
			continue
		}
		if n, err := codexNotify([]byte(l)); err != nil || !isLoom(strings.Join(n, " "), args) {
			break
		}
		return append(lines[:i:i], lines[i+1:]...), nil
	}
	return nil, errors.New("loom's notify program spans several lines: take it out by hand")
}
