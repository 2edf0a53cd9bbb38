package importer

import (
	"context"
	"path/filepath"
)

// Variant is an agent whose sessions are files of another agent's
// format, kept in places of its own: a fork of the other's program (a
// fork of Claude Code, of Codex), or a product built on its code. It
// reads them with the other's Format under its own name, so that its
// sessions are its own (their keys, their surface) and `--from list`
// names it.
type Variant struct {
	// Of is the format the files are of.
	Of Format
	// Name is the agent's name in loom; Prov its provider, "" for Of's.
	Name, Prov string
	// Env is the variable that names the agent's directory, and Dirs
	// its default directories, each relative to the home directory
	// (the first that exists on each system is read; all of them are
	// tried).
	Env  string
	Dirs [][]string
	// Sub is the directory below Env's that holds the sessions ("" for
	// Env's directory itself).
	Sub string
	// Places, when set, gives the roots in place of Env and Dirs (an
	// editor of the VS Code family: its user directories').
	Places func(env func(string) string, home string) []string
}

var _ Format = Variant{}

// Tool returns the agent's name.
func (v Variant) Tool() string { return v.Name }

// Provider is Prov, else Of's.
func (v Variant) Provider() string {
	if v.Prov != "" {
		return v.Prov
	}
	return v.Of.Provider()
}

// Roots are Env's directory (with Sub) when it is set, else each of
// Dirs under home.
func (v Variant) Roots(env func(string) string, home string) []string {
	if v.Places != nil {
		return v.Places(env, home)
	}
	if v.Env != "" {
		if d := EnvPath(env, home)(v.Env); d != "" {
			return []string{filepath.Join(d, v.Sub)}
		}
	}
	return HomeDirs(env, home, "", v.Dirs...)
}

// HomeDirs are the roots of an agent whose directory the variable
// envVar names when it is set (envVar may be ""), else each of dirs
// under the home directory (each a path relative to it).
func HomeDirs(env func(string) string, home, envVar string, dirs ...[]string) []string {
	if envVar != "" {
		if d := EnvPath(env, home)(envVar); d != "" {
			return []string{d}
		}
	}
	if home == "" {
		return nil
	}
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		out = append(out, filepath.Join(append([]string{home}, d...)...))
	}
	return out
}

// Bundles are Of's.
func (v Variant) Bundles(ctx context.Context, root string) ([]Bundle, error) {
	return v.Of.Bundles(ctx, root)
}

// Read is Of's.
func (v Variant) Read(ctx context.Context, b Bundle) (*Result, error) { return v.Of.Read(ctx, b) }

// CountSessions is Of's count when Of counts its bundles' sessions, one
// a bundle else.
func (v Variant) CountSessions(ctx context.Context, b Bundle) (int, error) {
	if c, ok := v.Of.(Counter); ok {
		return c.CountSessions(ctx, b)
	}
	return 1, nil
}
