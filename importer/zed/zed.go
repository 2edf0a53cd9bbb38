package zed

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads the threads of Zed's agent panel: the SQLite database
// threads.db in Zed's data directory, and the text threads of its
// earlier assistant panel (conversations/*.zed.json). It implements
// importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Zed's name in loom: the surface of its imported sessions and
// the TOOL of `loom session import --from TOOL`.
const Tool = "zed"

const (
	threadsDB      = "threads.db"
	contextsSuffix = ".zed.json"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": each thread names its provider.
func (Format) Provider() string { return "" }

// Roots are Zed's threads directory in its data directory
// ($XDG_DATA_HOME/zed, else ~/.local/share/zed on Linux;
// ~/Library/Application Support/Zed on macOS; %LOCALAPPDATA%\Zed on
// Windows; $FLATPAK_XDG_DATA_HOME/zed in its Flatpak), and the
// conversations directory of its configuration directory
// ($XDG_CONFIG_HOME/zed, else ~/.config/zed; %APPDATA%\Zed on Windows),
// where its assistant panel saved text threads.
func (Format) Roots(env func(string) string, home string) []string {
	get := importer.Getenv(env)
	join := func(base string, rel ...string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, rel...)...)
	}
	var data, config string
	switch runtime.GOOS {
	case "windows":
		local, roaming := get("LOCALAPPDATA"), get("APPDATA")
		if local == "" {
			local = join(home, "AppData", "Local")
		}
		if roaming == "" {
			roaming = join(home, "AppData", "Roaming")
		}
		data, config = join(local, "Zed"), join(roaming, "Zed")
	case "darwin":
		data, config = join(home, "Library", "Application Support", "Zed"), join(home, ".config", "zed")
	default:
		base := get("FLATPAK_XDG_DATA_HOME")
		if base == "" {
			base = get("XDG_DATA_HOME")
		}
		if base == "" {
			base = join(home, ".local", "share")
		}
		data = join(base, "zed")
		cfg := get("XDG_CONFIG_HOME")
		if cfg == "" {
			cfg = join(home, ".config")
		}
		config = join(cfg, "zed")
	}
	var roots []string
	for _, r := range []string{join(data, "threads"), join(config, "conversations")} {
		if r != "" {
			roots = append(roots, r)
		}
	}
	return roots
}

// Bundles finds Zed's threads under root: threads.db (one bundle, with
// its write-ahead log), and each saved text thread (*.zed.json), one
// bundle each.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(Tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		if strings.HasSuffix(root, ".db") {
			return []importer.Bundle{importer.SQLiteBundle(root)}, nil
		}
		return []importer.Bundle{{Files: []string{root}}}, nil
	}
	var out []importer.Bundle
	var u importer.Unreadable
	if db := filepath.Join(root, threadsDB); importer.RegularFile(db) == nil {
		out = append(out, importer.SQLiteBundle(db))
	} else {
		u.DirInPlace(db)
	}
	files, err := importer.FilesIn(ctx, Tool, root, func(n string) bool { return strings.HasSuffix(n, contextsSuffix) })
	if err == nil {
		err = u.Err()
	}
	return append(out, files...), err
}

// Read reads one bundle: the threads database, or a saved text thread.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, isDB, wal, err := importer.SQLiteFile(Tool, b)
	if err != nil {
		return nil, err
	}
	if isDB {
		return readDB(ctx, name, wal)
	}
	if !strings.HasSuffix(name, ".json") {
		return nil, fmt.Errorf("zed: %s is neither a threads database nor a saved text thread", name)
	}
	return readContext(name)
}
