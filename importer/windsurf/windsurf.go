package windsurf

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads the Cascade trajectories Windsurf (and Antigravity) let
// the user download as Markdown. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Windsurf's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "windsurf"

// DirEnv names the directories (a list, as PATH is) where the user
// keeps downloaded trajectories: Windsurf has no folder of its own for
// them, and no variable of its own to name one.
const DirEnv = "LOOM_WINDSURF_DIR"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Cascade talks to many providers' models, and a
// trajectory names none.
func (Format) Provider() string { return "" }

// Roots is what $LOOM_WINDSURF_DIR names, none without it: a trajectory
// is a download, kept wherever the user saved it, and finding them on
// each import would mean reading every Markdown file of the home
// directory.
func (Format) Roots(env func(string) string, home string) []string {
	if env == nil {
		return nil
	}
	var out []string
	for _, d := range filepath.SplitList(env(DirEnv)) {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// Bundles lists every Markdown file (.md) under root, one bundle each,
// leaving out dependency, build and version-control directories
// (importer.HeavyDirs); root itself may be one file, read whatever its
// name. A Markdown file that turns out not to be a trajectory is passed
// over when read (counted as not-a-trajectory).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.NamedFiles(ctx, Tool, root, func(name string) bool {
		return strings.EqualFold(filepath.Ext(name), ".md") && !strings.HasPrefix(name, ".")
	})
}

// Read reads one downloaded trajectory: one session.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path := b.Name()
	if path == "" {
		return nil, errors.New("windsurf: empty bundle")
	}
	f, fi, err := importer.Open(path, importer.MaxDocument)
	if err != nil {
		return nil, fmt.Errorf("windsurf: %w", err)
	}
	defer f.Close()
	return read(ctx, path, fi.ModTime(), f)
}
