package crush

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads Crush's sessions: the SQLite database crush.db in each
// project's data directory. It implements importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Crush's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "crush"

// dbName is Crush's database in a project's data directory, and
// dataDir that directory's default name in the project.
const (
	dbName  = "crush.db"
	dataDir = ".crush"
)

// globalEnv is the variable that moves Crush's global data directory,
// where it keeps projects.json, the list of the projects it ran in.
const globalEnv = "CRUSH_GLOBAL_DATA"

// maxProjects bounds projects.json.
const maxProjects = 4 << 20

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Crush names each reply's provider.
func (Format) Provider() string { return "" }

// Roots are the data directories of the projects Crush has run in, as
// its projects.json lists them. That file is in Crush's global data
// directory: $CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, else
// %LOCALAPPDATA%\crush on Windows and ~/.local/share/crush elsewhere.
// A project Crush has not listed (a version before projects.json) is
// imported by naming it: `loom session import --from crush ~/src/app`.
func (Format) Roots(env func(string) string, home string) []string {
	global := globalDir(env, home)
	if global == "" {
		return nil
	}
	return projectDirs(filepath.Join(global, "projects.json"))
}

func globalDir(env func(string) string, home string) string {
	get := importer.Getenv(env)
	if d := get(globalEnv); d != "" {
		return d
	}
	if d := get("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "crush")
	}
	if runtime.GOOS == "windows" {
		local := get("LOCALAPPDATA")
		if local == "" && home != "" {
			local = filepath.Join(home, "AppData", "Local")
		}
		if local == "" {
			return ""
		}
		return filepath.Join(local, "crush")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "crush")
}

// projectDirs reads the data directories projects.json lists; none when
// it is missing or not Crush's.
func projectDirs(path string) []string {
	f, _, err := importer.Open(path, maxProjects)
	if err != nil {
		return nil
	}
	defer f.Close()
	var list struct {
		Projects []struct {
			Path    string `json:"path"`
			DataDir string `json:"data_dir"`
		} `json:"projects"`
	}
	if json.NewDecoder(f).Decode(&list) != nil {
		return nil
	}
	var out []string
	for _, p := range list.Projects {
		dir := p.DataDir
		if dir == "" && p.Path != "" {
			dir = dataDir
		}
		if dir != "" && !filepath.IsAbs(dir) {
			if p.Path == "" {
				continue
			}
			dir = filepath.Join(p.Path, dir)
		}
		if dir != "" && !slices.Contains(out, filepath.Clean(dir)) {
			out = append(out, filepath.Clean(dir))
		}
	}
	return out
}

// Bundles finds Crush's database under root: root itself when it is the
// database, else crush.db in root, or in root's .crush directory when
// root is a project.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(Tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []importer.Bundle{importer.SQLiteBundle(root)}, nil
	}
	var u importer.Unreadable
	for _, db := range []string{filepath.Join(root, dbName), filepath.Join(root, dataDir, dbName)} {
		if err := importer.RegularFile(db); err == nil {
			return []importer.Bundle{importer.SQLiteBundle(db)}, nil
		}
		u.DirInPlace(db)
	}
	return nil, u.Err()
}

// Read reads every session of one database.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, isDB, wal, err := importer.SQLiteFile(Tool, b)
	if err != nil {
		return nil, err
	}
	if !isDB {
		return nil, fmt.Errorf("crush: %s is not a SQLite database (damaged, or not Crush's)", name)
	}
	return readDB(ctx, name, wal, dataDir)
}

// ReadDatabase reads every session of a database of Crush's schema whose
// project keeps it in a data directory named dataDir: what OpenCode, the
// Go program Crush grew from, writes in .opencode/opencode.db (Crush's
// first migrations are OpenCode's).
func ReadDatabase(ctx context.Context, b importer.Bundle, dataDir, program string) (*importer.Result, error) {
	name, isDB, wal, err := importer.SQLiteFile(Tool, b)
	if err != nil {
		return nil, err
	}
	if !isDB {
		return nil, fmt.Errorf("%s is not a SQLite database (damaged, or not %s's)", name, program)
	}
	return readDB(ctx, name, wal, dataDir)
}

// projectOf is the project a database belongs to: the directory that
// holds its data directory when that has its default name, dataDir.
func projectOf(db, dataDir string) string {
	dir := filepath.Dir(db)
	if filepath.Base(dir) == dataDir {
		return filepath.Dir(dir)
	}
	return ""
}

// agentSession splits the id Crush gives a sub-agent's session,
// <message id>$$<tool call id>.
func agentSession(id string) (msg, call string, ok bool) {
	msg, call, ok = strings.Cut(id, "$$")
	return msg, call, ok && msg != "" && call != "" && !strings.Contains(call, "$$")
}
