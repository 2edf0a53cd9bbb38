package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loomhq/loom"
)

// What several readers share to name what they skip and report, and
// to list a directory of session files.

// TypeName is a type or role read from a file, fit for a skipped
// count's key ("unknown:<type>"): on one line, and cut to MaxTypeName
// bytes (Clip), so that a hostile file cannot make keys of any size.
func TypeName(t string) string {
	return Clip(strings.Map(func(r rune) rune {
		if r < ' ' {
			return -1
		}
		return r
	}, t), MaxTypeName)
}

// Excerpt is s cut to 200 bytes, for a problem's reason.
func Excerpt(s string) string { return Clip(s, 200) }

// CompactJSON is raw without insignificant space; nil when it is
// absent, null or not JSON.
func CompactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil || b.Len() == 0 || b.String() == "null" {
		return nil
	}
	return b.Bytes()
}

// Meta is the part metadata {k: v}.
func Meta(k, v string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{k: v})
	return b
}

// FilesIn lists the regular files (or links to them) directly in dir
// whose names match, one bundle each, sorted by name; hidden files are
// left out. An error names tool.
func FilesIn(ctx context.Context, tool, dir string, match func(name string) bool) ([]Bundle, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	var out []Bundle
	var u Unreadable
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := e.Name()
		if strings.HasPrefix(n, ".") || !match(n) {
			continue
		}
		switch mode := EntryMode(dir, e); {
		case mode.IsRegular():
			out = append(out, Bundle{Files: []string{filepath.Join(dir, n)}})
		case mode.IsDir():
			u.Problems = append(u.Problems, Problem{File: filepath.Join(dir, n), Reason: DirReason})
		}
	}
	slices.SortFunc(out, func(a, b Bundle) int { return strings.Compare(a.Name(), b.Name()) })
	return out, u.Err()
}

// Getenv is env made safe to call when nil (no variable set).
func Getenv(env func(string) string) func(string) string {
	return func(k string) string {
		if env == nil {
			return ""
		}
		return env(k)
	}
}

// EnvPath is a lookup in env (nil: no variable set) of variables that
// name a directory or file, as the tools read their own: the value
// trimmed of surrounding spaces, a leading ~ the home directory
// (ExpandHome).
func EnvPath(env func(string) string, home string) func(string) string {
	get := Getenv(env)
	return func(k string) string { return ExpandHome(strings.TrimSpace(get(k)), home) }
}

// ConfigDirs are the directories rel below a Python program's
// configuration directory (platformdirs' user_config_dir):
// $XDG_CONFIG_HOME/rel when that variable is set, else both
// ~/.config/rel and ~/Library/Application Support/rel (on macOS), since
// a copied file may come from either; none when neither is known. env
// may be nil (no variable set).
func ConfigDirs(env func(string) string, home string, rel ...string) []string {
	if x := Getenv(env)("XDG_CONFIG_HOME"); x != "" {
		return []string{filepath.Join(append([]string{x}, rel...)...)}
	}
	if home == "" {
		return nil
	}
	return []string{filepath.Join(append([]string{home, ".config"}, rel...)...),
		filepath.Join(append([]string{home, "Library", "Application Support"}, rel...)...)}
}

// ExpandHome makes a leading ~ of p (~ alone, or followed by a
// separator) home, as a shell would have; p is left as it is when home
// is unknown.
func ExpandHome(p, home string) string {
	if home == "" || !strings.HasPrefix(p, "~") {
		return p
	}
	if p == "~" {
		return home
	}
	if rest := p[1:]; strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, string(filepath.Separator)) {
		return filepath.Join(home, rest[1:])
	}
	return p
}

// AddAgentPart adds to m an agent part naming the sub-agent session sub
// that the tool part call ran, after m's other parts.
func AddAgentPart(m *loom.Message, call loom.Part, sub string) {
	m.Parts = append(m.Parts, loom.Part{ID: call.ID + "/agent", Type: loom.PartAgent, Name: call.Name, SessionID: sub})
}
