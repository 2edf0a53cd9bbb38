package gptme

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads gptme's conversation logs. The zero value is ready to
// use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is gptme's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "gptme"

// logFile is the file of a conversation in its log directory.
const logFile = "conversation.jsonl"

// envLogs is the variable that moves gptme's logs directory.
const envLogs = "GPTME_LOGS_HOME"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": gptme calls many providers, and each reply names its
// model with its provider.
func (Format) Provider() string { return "" }

// Roots is gptme's logs directory, as gptme finds it:
// $GPTME_LOGS_HOME; else $XDG_DATA_HOME/gptme/logs; else
// ~/.local/share/gptme/logs, which gptme keeps on every platform where
// it exists, and the platform's data directory (~/Library/Application
// Support/gptme/logs on macOS, %LOCALAPPDATA%\gptme\gptme\logs on
// Windows).
func (Format) Roots(env func(string) string, home string) []string {
	get := importer.EnvPath(env, home)
	if d := get(envLogs); d != "" {
		return []string{d}
	}
	if d := get("XDG_DATA_HOME"); d != "" {
		return []string{filepath.Join(d, "gptme", "logs")}
	}
	if home == "" {
		return nil
	}
	roots := []string{filepath.Join(home, ".local", "share", "gptme", "logs")}
	switch runtime.GOOS {
	case "darwin":
		roots = append(roots, filepath.Join(home, "Library", "Application Support", "gptme", "logs"))
	case "windows":
		local := get("LOCALAPPDATA")
		if local == "" {
			local = filepath.Join(home, "AppData", "Local")
		}
		roots = append(roots, filepath.Join(local, "gptme", "gptme", "logs"))
	}
	return roots
}

// Bundles lists the conversation.jsonl of each conversation's directory
// under root, one bundle each; root itself may be one log file, read
// whatever its name. A conversation's branches (branches/*.jsonl) are
// not read.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.NamedFiles(ctx, Tool, root, func(name string) bool { return name == logFile })
}

// Read reads one conversation's log.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, _, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dir := filepath.Dir(name)
	id := filepath.Base(dir)
	if filepath.Base(name) != logFile {
		id = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	return read(ctx, name, id, workspace(dir), f)
}

// workspace is the conversation's working directory: the workspace
// link gptme makes in the log directory.
func workspace(dir string) string {
	fi, err := os.Lstat(filepath.Join(dir, "workspace"))
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return ""
	}
	target, err := os.Readlink(filepath.Join(dir, "workspace"))
	if err != nil || !filepath.IsAbs(target) {
		return ""
	}
	return target
}
