package opencodego

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is what OpenCode v0.0.55 (opencode-ai/opencode, built
// with the go command from the Go module proxy; `opencode -p PROMPT -q`
// against a fake model on the Chat Completions API, as
// TestRealOpenCodeGo runs it) wrote in the two projects it ran in, each
// database written out as one file (its write-ahead log included) with
// the home directory renamed /home/u: work, a greeting, and other, a
// turn that reads a file with its view tool.
var real = filepath.Join("testdata", "real")

func TestRead(t *testing.T) { checkRead(t, real) }

// A second import adds nothing.
func TestImportsOnce(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 2, 5)
}

// Below a folder, the databases in projects' .opencode directories are
// OpenCode's; an opencode.db elsewhere (sst's opencode keeps one in its
// data directory) is not; a .opencode directory named is read, and so
// is a database named whatever its name.
func TestBundles(t *testing.T) {
	root := importertest.CopyDir(t, real)
	data := importertest.ReadBytes(t, filepath.Join(real, "work", dataDir, dbName))
	sst := filepath.Join(root, "share", "opencode", dbName)
	importertest.MkdirAll(t, filepath.Dir(sst))
	importertest.WriteFile(t, sst, data, 0o644)
	ctx := context.Background()
	for _, c := range []struct {
		root string
		want int
	}{{root, 2}, {filepath.Join(root, "work"), 1}, {filepath.Join(root, "work", dataDir), 1}, {sst, 1}} {
		bs, err := Format{}.Bundles(ctx, c.root)
		if err != nil || len(bs) != c.want {
			t.Errorf("%s: %d bundles, want %d, %v", c.root, len(bs), c.want, err)
		}
		for _, b := range bs {
			if c.root != sst && b.Name() == sst {
				t.Errorf("%s: sst's database read as OpenCode's", c.root)
			}
		}
	}
}

// A file that is not a database is an error naming it.
func TestReadNotADatabase(t *testing.T) {
	importertest.RefusesFile(t, Format{}, dbName, "not a database, not even close to one\n", "")
}
