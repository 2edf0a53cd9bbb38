package goose

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads goose's sessions: the SQLite database sessions.db that
// recent versions of goose keep, and the JSONL file per session that
// earlier versions wrote. It implements importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is goose's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "goose"

// dbName is goose's database in its sessions directory.
const dbName = "sessions.db"

// rootEnv is the variable that moves all of goose's directories: its
// data directory is then $GOOSE_PATH_ROOT/data (goose ignores a relative
// path).
const rootEnv = "GOOSE_PATH_ROOT"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": goose names each session's provider.
func (Format) Provider() string { return "" }

// Roots is goose's sessions directory: $GOOSE_PATH_ROOT/data/sessions
// when the variable holds an absolute path, else the data directory of
// goose's platform layout (XDG on Linux and macOS, where the Apple
// layout of some builds is looked at too; %APPDATA%\Block\goose\data on
// Windows) followed by sessions.
func (Format) Roots(env func(string) string, home string) []string {
	get := importer.Getenv(env)
	if root := get(rootEnv); root != "" && filepath.IsAbs(root) {
		return []string{filepath.Join(root, "data", "sessions")}
	}
	if runtime.GOOS == "windows" {
		appData := importer.AppConfigDir(get, home)
		if appData == "" {
			return nil
		}
		return []string{filepath.Join(appData, "Block", "goose", "data", "sessions")}
	}
	data := get("XDG_DATA_HOME")
	if !filepath.IsAbs(data) {
		data = ""
		if home != "" {
			data = filepath.Join(home, ".local", "share")
		}
	}
	var roots []string
	if data != "" {
		roots = append(roots, filepath.Join(data, "goose", "sessions"))
	}
	if runtime.GOOS == "darwin" && home != "" {
		roots = append(roots, filepath.Join(home, "Library", "Application Support", "Block", "goose", "sessions"))
	}
	return roots
}

// Bundles finds goose's sessions under root: its sessions directory,
// its database, or one session file of the older versions.
//
// The database is one bundle (with its write-ahead log when there is
// one); each JSONL file is one. When the directory holds the database,
// its JSONL files are not read: goose moved them into the database when
// it created it, under the same session ids, and has not written them
// since. A JSONL file named as the root is read.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(Tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		switch {
		case strings.HasSuffix(root, ".jsonl"):
			return []importer.Bundle{{Files: []string{root}}}, nil
		case strings.HasSuffix(root, ".db"):
			return []importer.Bundle{importer.SQLiteBundle(root)}, nil
		}
		return nil, nil
	}
	db := filepath.Join(root, dbName)
	if fi, err := os.Stat(db); err == nil && fi.Mode().IsRegular() {
		return []importer.Bundle{importer.SQLiteBundle(db)}, nil
	}
	var u importer.Unreadable
	u.DirInPlace(db)
	bs, err := importer.FilesIn(ctx, Tool, root, func(n string) bool { return strings.HasSuffix(n, ".jsonl") })
	if err == nil {
		err = u.Err()
	}
	return bs, err
}

// Read reads one bundle: the database, or one JSONL session file.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, isDB, wal, err := importer.SQLiteFile(Tool, b)
	if err != nil {
		return nil, err
	}
	if isDB {
		return readDB(ctx, name, wal)
	}
	if !strings.HasSuffix(name, ".jsonl") {
		return nil, fmt.Errorf("goose: %s is not a SQLite database (damaged, or not goose's) nor a session file", name)
	}
	return readJSONL(ctx, name)
}
