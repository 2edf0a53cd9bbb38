package opencode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads the sessions of opencode, or of a fork of opencode that
// keeps them as opencode does (Kilo Code's CLI): the JSON storage tree
// opencode kept before version 1.2 and the SQLite database it keeps
// since. The zero Format is opencode's; Kilo is the fork's.
type Format struct{ app *app }

var _ importer.Format = Format{}

// app is a program of opencode's line: its name in loom, the directory
// of its data under the XDG data directory, its database's name there,
// and the agent it runs a prompt with unless told another.
type app struct{ tool, dir, db, agent string }

var (
	opencodeApp = &app{Tool, "opencode", "opencode.db", "build"}
	kiloApp     = &app{KiloTool, "kilo", "kilo.db", "code"}
)

// Kilo reads Kilo Code's CLI, a fork of opencode that keeps its sessions
// in a database of opencode's schema, kilo.db.
var Kilo = Format{app: kiloApp}

// Fork reads another fork of opencode: tool is its name in loom, dir
// its data directory under the XDG data directory, db its database's
// name there, agent the agent it runs a prompt with unless told
// another.
func Fork(tool, dir, db, agent string) Format { return Format{app: &app{tool, dir, db, agent}} }

func (f Format) a() *app {
	if f.app == nil {
		return opencodeApp
	}
	return f.app
}

// The storage tree's directory inside opencode's data directory.
const storageDir = "storage"

// Tool is opencode's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "opencode"

// KiloTool is Kilo Code's CLI's name in loom.
const KiloTool = "kilo"

func init() {
	importer.Register(Format{})
	importer.Register(Kilo)
}

// Tool returns the program's name in loom: Tool or KiloTool.
func (f Format) Tool() string { return f.a().tool }

// Provider is "": opencode names the provider of each reply.
func (Format) Provider() string { return "" }

// Roots is the program's data directory: $XDG_DATA_HOME/opencode, else
// ~/.local/share/opencode (opencode uses the XDG layout on macOS too);
// kilo in place of opencode for Kilo.
func (f Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, "XDG_DATA_HOME", ".local", "share"), f.a().dir)
}

// Bundles finds opencode's sessions under root, which is opencode's data
// directory, its storage directory, its database file or one session
// file of the tree.
//
// The database is one bundle: the database file, with its write-ahead
// log when there is one (so that a change still in the log is noticed).
// In the tree each session is a bundle: its session file, its message
// files and their part files.
//
// When the data directory holds both, only the database is read:
// opencode moved the tree into it when it created it (version 1.2) and
// has not written the tree since, so every session of the tree is in the
// database too, under the same id. The tree is read when it is named as
// the root itself.
//
// Symbolic links are followed, to directories and to files alike; a
// dangling one is passed over.
func (f Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(f.Tool(), root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		switch {
		case strings.HasSuffix(root, ".db"):
			return []importer.Bundle{dbBundle(root)}, nil
		case isSessionFile(root):
			storage := filepath.Dir(filepath.Dir(filepath.Dir(root)))
			b, err := treeBundle(storage, root)
			if err != nil {
				return nil, err
			}
			return []importer.Bundle{b}, nil
		}
		return nil, nil
	}
	db := filepath.Join(root, f.a().db)
	if fi, err := os.Stat(db); err == nil && fi.Mode().IsRegular() {
		return []importer.Bundle{dbBundle(db)}, nil
	}
	var u importer.Unreadable
	u.DirInPlace(db)
	for _, storage := range []string{filepath.Join(root, storageDir), root} {
		if isDir(filepath.Join(storage, "session")) {
			bs, err := treeBundles(ctx, storage)
			if err == nil {
				err = u.Err()
			}
			return bs, err
		}
	}
	return nil, u.Err()
}

// Read reads one bundle Bundles returned: the database, or one session
// of the tree.
func (f Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, isDB, wal, err := importer.SQLiteFile(f.Tool(), b)
	if err != nil {
		return nil, err
	}
	if isDB {
		return readDB(ctx, f.Tool(), name, wal)
	}
	if !isJSON(filepath.Base(name)) {
		// A database damaged past its header, emptied, or not one at all.
		return nil, fmt.Errorf("%s: %s is not a SQLite database (damaged, or not opencode's) nor a session file of the storage tree", f.Tool(), name)
	}
	return readTree(ctx, b, readFile)
}

func dbBundle(db string) importer.Bundle { return importer.SQLiteBundle(db) }

func isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}

// isSessionFile reports whether name is storage/session/<project>/<id>.json.
func isSessionFile(name string) bool {
	return isJSON(filepath.Base(name)) && filepath.Base(filepath.Dir(filepath.Dir(name))) == "session"
}

// isJSON reports whether a directory entry is one of opencode's records:
// not a temporary or hidden file.
func isJSON(name string) bool {
	return strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".") && len(name) > len(".json")
}

// jsonFiles lists the records in dir, sorted; none when dir does not
// exist.
func jsonFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if isJSON(e.Name()) && importer.EntryMode(dir, e).IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// dirsInPlace records each directory of dir named as a session file
// is (ses_….json): one line each, by the rule for bad input.
func dirsInPlace(dir string, u *importer.Unreadable) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // jsonFiles said why
	}
	for _, e := range entries {
		u.NamedDir(filepath.Join(dir, e.Name()), e, isJSON(e.Name()))
	}
}

// treeBundles lists every session of the storage tree under storage.
// opencode's session ids sort newest first, so the bundles are listed in
// reverse order of id: oldest first, each parent before the sub-agent
// sessions it ran. A session id found under two projects (opencode once
// moved sessions between project directories) is read once, from the
// first project in name order.
func treeBundles(ctx context.Context, storage string) ([]importer.Bundle, error) {
	projects, err := os.ReadDir(filepath.Join(storage, "session"))
	if err != nil {
		return nil, fmt.Errorf("opencode: %w", err)
	}
	var files []string
	var unreadable importer.Unreadable
	seen := map[string]bool{}
	for _, p := range projects {
		if !importer.EntryMode(filepath.Join(storage, "session"), p).IsDir() {
			continue
		}
		dir := filepath.Join(storage, "session", p.Name())
		names, err := jsonFiles(dir)
		if err != nil {
			// A problem of the import; the other projects are read.
			unreadable.Add(dir, err)
			continue
		}
		dirsInPlace(dir, &unreadable)
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				files = append(files, filepath.Join(dir, n))
			}
		}
	}
	slices.SortFunc(files, func(a, b string) int { return strings.Compare(filepath.Base(b), filepath.Base(a)) })
	out := make([]importer.Bundle, 0, len(files))
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := treeBundle(storage, f)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, unreadable.Err()
}

// treeBundle lists one session's files: the session file, then each
// message file followed by its part files.
func treeBundle(storage, sessionFile string) (importer.Bundle, error) {
	b := importer.Bundle{Files: []string{sessionFile}}
	id := strings.TrimSuffix(filepath.Base(sessionFile), ".json")
	msgDir := filepath.Join(storage, "message", id)
	msgs, err := jsonFiles(msgDir)
	if err != nil {
		return b, fmt.Errorf("opencode: %w", err)
	}
	for _, m := range msgs {
		b.Files = append(b.Files, filepath.Join(msgDir, m))
		partDir := filepath.Join(storage, "part", strings.TrimSuffix(m, ".json"))
		parts, err := jsonFiles(partDir)
		if err != nil {
			return b, fmt.Errorf("opencode: %w", err)
		}
		for _, p := range parts {
			b.Files = append(b.Files, filepath.Join(partDir, p))
		}
	}
	return b, nil
}
