package agents

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// badInputs are the cases of docs/import.md's table of bad input, each
// made of a session file of the agent: what is left in its place.
var badInputs = []struct {
	name string
	// fails says the file cannot be read at all: one line that names it
	// and says why, and the import exits 1. Otherwise at most one line
	// names it and the import exits 0.
	fails  bool
	either bool // a file of one document fails; one of lines is read up to the cut
	make   func(t *testing.T, path string)
}{
	{"garbage", true, false, func(t *testing.T, path string) {
		write(t, path, []byte("\x00\x01garbage \xff\xfe not a session\n{[ nor this\n\x1b[2Jlast"))
	}},
	{"cut line", false, true, func(t *testing.T, path string) {
		// The file ends inside its last line, as when its program is
		// caught writing it.
		data := bytes.TrimRight(read(t, path), "\n")
		start := bytes.LastIndexByte(data, '\n') + 1
		write(t, path, data[:start+(len(data)-start)/2])
	}},
	{"half file", false, true, func(t *testing.T, path string) {
		data := read(t, path)
		write(t, path, data[:len(data)/2])
	}},
	{"0 bytes", false, false, func(t *testing.T, path string) { write(t, path, nil) }},
	{"a directory", true, false, func(t *testing.T, path string) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		importertest.MkdirAll(t, filepath.Join(path, "inside"))
	}},
	{"no read permission", true, false, func(t *testing.T, path string) {
		// Root reads any file: the import then runs as nobody
		// (importAsNobody).
		if err := os.Chmod(path, 0); err != nil {
			t.Fatal(err)
		}
	}},
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data := importertest.ReadBytes(t, path)
	return data
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	importertest.WriteFile(t, path, data, 0o644)
}

// sample is a copy of the reader's testdata/ (its regular files and
// directories), laid out as its agent lays out its files (layouts), and
// in it the main file of a bundle that reads as a session, with the
// number of sessions it reads as; root is what the import is given, a
// directory of the agent's, so that the file made bad is one the reader
// finds in it, never the path named on the command line. For a reader
// whose files its tests build (a database), it is a database of its own
// that is none, and n is -1.
func sample(t *testing.T, f importer.Format) (root, file string, n int) {
	t.Helper()
	ctx := context.Background()
	src := filepath.Join(pkgDir(f), "testdata")
	if _, err := os.Stat(src); err == nil {
		root = layOut(t, f.Tool(), copyTree(t, src))
		bs, _ := f.Bundles(ctx, root)
		for _, b := range bs {
			if fi, err := os.Stat(b.Name()); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
				continue
			}
			if res, err := f.Read(ctx, b); err == nil && res != nil && len(res.Sessions) > 0 {
				return root, b.Name(), len(res.Sessions)
			}
		}
	}
	name, ok := databases[f.Tool()]
	if !ok {
		// Never the file itself as the root: a directory named on the
		// command line is read as one, and the case of a directory in
		// a file's place would not be made.
		t.Fatalf("no file of %s's testdata/ is found as a session from %s: lay it out as %s does in layouts, or give it a line in databases",
			f.Tool(), root, f.Tool())
	}
	root = t.TempDir()
	file = filepath.Join(root, name)
	write(t, file, []byte("SQLite format 3\x00"))
	return root, file, -1
}

// layout is where a reader's testdata/ keeps its agent's files, when
// not at its top as the agent keeps them: dir, the directory under it
// that is one of the agent's (what Roots names), and move, files to
// put where the agent puts them, named as it names them (from, to).
type layout struct {
	dir  string
	move [][2]string
}

// layouts are the readers whose testdata/ is not laid out as their
// agent's directory, each read from the directory Bundles looks in.
var layouts = map[string]layout{
	// A project's .aider.chat.history.md, found in the tree under root.
	"aider": {move: [][2]string{{"history.md", "project/.aider.chat.history.md"}}},
	// ~/.local/share/amp/threads/T-<id>.json.
	"amp": {dir: "threads"},
	// ~/.config/zed/conversations/*.zed.json.
	"zed": {dir: "conversations"},
	// opencode's data directory with its storage tree (data/storage);
	// its forks read the same tree.
	"opencode": {dir: "data"}, "kilo": {dir: "data"}, "mimocode": {dir: "data"}, "nanocode": {dir: "data"},
}

// layOut lays out the copy of tool's testdata/ at dir as layouts says
// and returns the directory the import is given.
func layOut(t *testing.T, tool, dir string) string {
	t.Helper()
	l := layouts[tool]
	for _, m := range l.move {
		to := filepath.Join(dir, m[1])
		importertest.MkdirAll(t, filepath.Dir(to))
		if err := os.Rename(filepath.Join(dir, m[0]), to); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, l.dir)
}

// databases are the names of the databases of the readers whose tests
// build their files, in the directory the reader is given.
var databases = map[string]string{
	"amazon-q": "data.sqlite3", "crush": "crush.db", "devin": "sessions.db", "forge": ".forge.db",
	"shelley": "shelley.db", "warp": "warp.sqlite",
}

// copyTree copies the regular files and directories under src to a new
// directory, which it returns.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// notYet are the cases a reader does not follow the rule in yet, each
// with what it does instead (docs/import.md says so too).
var notYet = map[string]string{}

// names says whether a problem is about file (or, for a directory in
// its place, what is in it).
func names(p importer.Problem, file string) bool {
	return p.File == file || strings.HasPrefix(p.File, file+string(filepath.Separator))
}

// One rule for bad input, whatever the agent: a file that cannot be
// read is one line naming it and saying why, the rest is imported, and
// the import exits 1 (FilesFailed); a file read in part (cut short)
// gives at most one line and exits 0.
func TestBadInputIsOneLinePerFile(t *testing.T) {
	t.Cleanup(removeNobodyBinary)
	for _, f := range Formats() {
		t.Run(f.Tool(), func(t *testing.T) {
			t.Parallel()
			for _, c := range badInputs {
				t.Run(c.name, func(t *testing.T) {
					if why, ok := notYet[f.Tool()+"/"+c.name]; ok {
						t.Skip("not yet held: " + why)
					}
					root, file, n := sample(t, f)
					before := &importer.ToolReport{}
					if n >= 0 {
						before = importertest.Import(t, importertest.Store(t), f, root)
					}
					c.make(t, file)
					t.Cleanup(func() { os.Chmod(file, 0o644) })
					var tr *importer.ToolReport
					if c.name == "no read permission" && os.Geteuid() == 0 {
						tr = importAsNobody(t, f, root)
					} else {
						tr = importertest.Import(t, importertest.Store(t), f, root)
					}
					// The lines about the file that it did not give
					// whole (a fixture may hold a bad line on purpose).
					had := map[string]bool{}
					for _, p := range before.Problems {
						had[p.String()] = true
					}
					var lines []string
					for _, p := range tr.Problems {
						if names(p, file) && !had[p.String()] {
							lines = append(lines, p.String())
						}
					}
					failed := tr.FilesFailed - before.FilesFailed
					// A bundle that fails at the file made bad is not read
					// further: another file of it that failed before (a
					// fixture's broken event) is no longer counted, and
					// the bundle's one failure is the file made bad.
					now := map[string]bool{}
					for _, p := range tr.Problems {
						now[p.String()] = true
					}
					hidden := false
					for _, p := range before.Problems {
						if p.File != file && !now[p.String()] && !names(p, file) {
							hidden = true
						}
					}
					if failed == 0 && hidden && len(lines) == 1 {
						failed = 1
					}
					switch {
					case c.fails || (c.either && failed == 1):
						if failed != 1 || len(lines) != 1 {
							t.Errorf("%d files failed, lines about it %q; want 1 failed file, 1 line", failed, lines)
						}
					case failed != 0 || len(lines) > 1:
						t.Errorf("%d files failed, lines about it %q; want none failed, at most 1 line", failed, lines)
					}
					if c.name == "0 bytes" && len(lines) != 1 {
						t.Errorf("an empty file is passed over in silence")
					}
					if rest := before.SessionsNew - n; n >= 0 && rest > 0 && tr.SessionsNew < rest {
						t.Errorf("%d sessions imported, want the %d of the other files", tr.SessionsNew, rest)
					}
				})
			}
		})
	}
}
