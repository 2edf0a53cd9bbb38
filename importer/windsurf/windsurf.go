package windsurf

import (
	"context"
	"errors"
	"io"
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
// (importer.HeavyDirs): which of them are trajectories only reading
// them tells, and a Markdown file that is not is passed over when read
// (counted as not-a-trajectory, and not read again until it changes),
// unless it is not text: garbage, one line.
// Root itself may be one file, read whatever its name when it starts as
// a trajectory; one that does not is no bundle, so that naming it is
// refused.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if fi, err := importer.StatRoot(Tool, root); fi != nil && !fi.IsDir() && !startsAsTrajectory(ctx, root) {
		return nil, err
	}
	return importer.NamedFiles(ctx, Tool, root, func(name string) bool {
		return strings.EqualFold(filepath.Ext(name), ".md") && !strings.HasPrefix(name, ".")
	})
}

// Read reads one downloaded trajectory: one session.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxDocument)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(ctx, path, fi.ModTime(), f)
}

// peekLen is how much of a file startsAsTrajectory reads.
const peekLen = 64 << 10

// errStarts stops the reading of a file that starts as a trajectory.
var errStarts = errors.New("starts as a trajectory")

// startsAsTrajectory reports whether the file at path starts as a
// trajectory, or may: one that cannot be opened is left to Read to say
// why, and front matter longer than peekLen to Read to tell.
func startsAsTrajectory(ctx context.Context, path string) bool {
	f, fi, err := importer.Open(path, importer.MaxDocument)
	if err != nil {
		return true
	}
	defer f.Close()
	rd := &reader{front: map[string]string{}}
	err = importer.Lines(ctx, io.LimitReader(f, peekLen), func(n int, b []byte) error {
		if err := rd.line(n, b); err != nil {
			return err
		}
		if rd.stage >= head {
			return errStarts
		}
		return nil
	}, func(int) {})
	return errors.Is(err, errStarts) || (err == nil && fi.Size() > peekLen)
}
