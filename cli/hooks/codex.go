package hooks

import (
	"bytes"
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
// rest of the file, comments included, is kept as it was.
func applyCodex(r *Report, b []byte, prog, args string, install bool) ([]byte, error) {
	cur, err := codexNotify(b)
	if err != nil {
		return nil, err
	}
	ours := isLoom(strings.Join(cur, " "), args)
	r.Import = ours
	lines := strings.SplitAfter(string(b), "\n")
	top := len(lines) // lines before the first table
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "[") {
			top = i
			break
		}
	}
	switch {
	case install && ours, !install && !ours:
		return nil, nil
	case install && cur != nil:
		return nil, fmt.Errorf("codex already runs %q after each turn and has room for one notify program: call it and `%s %s` from a script (docs/import.md)", strings.Join(cur, " "), prog, args)
	case install:
		var words []string
		for _, w := range append([]string{prog}, strings.Fields(args)...) {
			q, err := marshal(w) // a JSON string is a TOML basic string
			if err != nil {
				return nil, err
			}
			words = append(words, string(q))
		}
		// After the last line of the top section that is not blank.
		at := top
		for at > 0 && strings.TrimSpace(lines[at-1]) == "" {
			at--
		}
		head := strings.Join(lines[:at], "")
		if head != "" && !strings.HasSuffix(head, "\n") {
			head += "\n"
		}
		out := head + "notify = [" + strings.Join(words, ", ") + "]\n" + strings.Join(lines[at:], "")
		r.Import, r.Added = true, []string{"notify"}
		return []byte(out), nil
	}
	for i, l := range lines[:top] {
		k, _, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok || strings.TrimSpace(k) != "notify" {
			continue
		}
		if n, err := codexNotify([]byte(l)); err != nil || !isLoom(strings.Join(n, " "), args) {
			break
		}
		out := bytes.NewBufferString(strings.Join(lines[:i], "") + strings.Join(lines[i+1:], ""))
		r.Import, r.Removed = false, []string{"notify"}
		return out.Bytes(), nil
	}
	return nil, errors.New("loom's notify program spans several lines: take it out by hand")
}
