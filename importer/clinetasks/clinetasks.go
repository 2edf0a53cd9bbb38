package clinetasks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/loomhq/loom/importer"
)

// Format reads the task directories of one of the VS Code extensions
// that keep Cline's layout. It implements importer.Format.
type Format struct {
	tool string
	// ext is the extension's id, the name of its globalStorage
	// directory.
	ext string
}

// The extensions whose tasks this package reads, by their names in loom
// (the TOOL of `loom session import --from TOOL`). Cline's own name is
// left to its command-line agent, whose sessions are elsewhere.
var (
	Cline = Format{tool: "cline-vscode", ext: "saoudrizwan.claude-dev"}
	Roo   = Format{tool: "roo-code", ext: "rooveterinaryinc.roo-cline"}
	Kilo  = Format{tool: "kilo-code-vscode", ext: "kilocode.kilo-code"}
)

var _ importer.Format = Format{}

func init() {
	importer.Register(Cline)
	importer.Register(Roo)
	importer.Register(Kilo)
}

// The files of a task directory.
const (
	apiFile      = "api_conversation_history.json"
	uiFile       = "ui_messages.json"
	metadataFile = "task_metadata.json"
	historyFile  = "history_item.json"
)

// editors are the editors the extensions run in and keep their storage
// under: the VS Code family, Cursor and Windsurf.
var editors = append(slices.Clone(importer.VSCodeProducts), "Cursor", "Windsurf")

// Tool returns the extension's name in loom.
func (f Format) Tool() string { return f.tool }

// Provider is "": the extensions call many providers, and the task's
// metadata names the one each reply came from when it records it.
func (Format) Provider() string { return "" }

// Roots are the extension's tasks directories in each editor's global
// storage (see importer.VSCodeUserDirs).
func (f Format) Roots(env func(string) string, home string) []string {
	var out []string
	for _, u := range importer.VSCodeUserDirs(env, home, editors...) {
		out = append(out, filepath.Join(u, "globalStorage", f.ext, "tasks"))
	}
	return out
}

// Bundles finds the task directories under root (the extension's
// storage, its tasks directory, one task's directory or one of its
// files): one bundle per task, its conversation first, then what is
// beside it (the UI messages, the metadata, the history item).
func (f Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(f.tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		root = filepath.Dir(root)
	}
	files, err := importer.FileBundles(ctx, f.tool, root, func(_ string, d fs.DirEntry) bool {
		n := d.Name()
		return n == apiFile || n == uiFile || n == metadataFile || n == historyFile
	})
	if err != nil && files == nil {
		return nil, err
	}
	// One bundle per task directory, its conversation first; a task
	// with neither conversation nor UI messages is metadata of a task
	// that is gone.
	order := []string{apiFile, uiFile, metadataFile, historyFile}
	out := importer.ByDir(files, filepath.Dir, func(p string) string {
		return strconv.Itoa(slices.Index(order, filepath.Base(p)))
	}, func(first string) bool {
		n := filepath.Base(first)
		return n == apiFile || n == uiFile
	})
	return out, err
}

// Read reads one task directory's files into its session.
func (f Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	if b.Name() == "" {
		return nil, errors.New(f.tool + ": empty bundle")
	}
	t := task{id: filepath.Base(filepath.Dir(b.Name())), dir: filepath.Dir(b.Name())}
	for _, name := range b.Files {
		file, fi, err := importer.Open(name, importer.MaxDocument)
		if err != nil {
			if name == b.Name() {
				return nil, fmt.Errorf("%s: %w", f.tool, err)
			}
			continue // a file beside the conversation that went away
		}
		data, err := io.ReadAll(file)
		file.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.tool, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		base := filepath.Base(name)
		t.files = append(t.files, taskFile{name: base, path: name, data: data})
		if fi.ModTime().After(t.modified) {
			t.modified = fi.ModTime()
		}
	}
	return t.parse(), nil
}
