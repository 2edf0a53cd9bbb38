package copilotchat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads the chat sessions of GitHub Copilot Chat in VS Code. The
// zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Copilot Chat's name in loom: the surface of its imported
// sessions and the TOOL of `loom session import --from TOOL` (the name
// "copilot" is GitHub's command-line agent's).
const Tool = "copilot-vscode"

// provider is the provider of Copilot Chat's replies: GitHub Copilot,
// whatever model it routed them to.
const provider = "github-copilot"

// The directories VS Code keeps chat sessions in: chatSessions in each
// workspace's storage, and emptyWindowChatSessions in the global
// storage for a window with no folder open.
const (
	sessionsDir    = "chatSessions"
	emptyWindowDir = "emptyWindowChatSessions"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is GitHub Copilot's.
func (Format) Provider() string { return provider }

// Roots are, for VS Code, its Insiders build and VSCodium (see
// importer.VSCodeUserDirs), the workspace storage and the global
// storage's empty-window sessions.
func (Format) Roots(env func(string) string, home string) []string {
	var out []string
	for _, u := range importer.VSCodeUserDirs(env, home, importer.VSCodeProducts...) {
		out = append(out, filepath.Join(u, "workspaceStorage"), filepath.Join(u, "globalStorage", emptyWindowDir))
	}
	return out
}

// Bundles lists the session files under root: each .json or .jsonl
// file in a chatSessions or emptyWindowChatSessions directory, one
// bundle each; root itself may be one session file, read whatever its
// name. Only the first three levels of directories below root are
// looked into (User/workspaceStorage/<hash>/chatSessions), so that the
// storage every other extension keeps beside them is not walked.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if bs, dir, err := importer.FileRoot(Tool, root); !dir {
		return bs, err
	}
	var out []importer.Bundle
	var unreadable importer.Unreadable
	err := importer.WalkDir(ctx, root, func(path string, d fs.DirEntry, err error) error {
		dir := filepath.Base(filepath.Dir(path))
		n := filepath.Base(path)
		named := (dir == sessionsDir || dir == emptyWindowDir) && !strings.HasPrefix(n, ".") && (strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl"))
		if err != nil {
			if path == root {
				return err
			}
			if !importer.IsLink(d) || named {
				unreadable.Add(path, err)
			}
			return nil
		}
		switch {
		case unreadable.NamedDir(path, d, (dir == sessionsDir || dir == emptyWindowDir) && (strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl"))):
			return fs.SkipDir
		case d.IsDir():
			rel, _ := filepath.Rel(root, path)
			if depth := strings.Count(rel, string(filepath.Separator)) + 1; rel != "." && depth >= 3 && n != sessionsDir && n != emptyWindowDir {
				return fs.SkipDir
			}
		case d.Type().IsRegular() && (dir == sessionsDir || dir == emptyWindowDir) && !strings.HasPrefix(n, ".") &&
			(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl")):
			out = append(out, importer.Bundle{Files: []string{path}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("copilot-vscode: listing %s: %w", root, err)
	}
	return out, unreadable.Err()
}

// Read reads one session file: a whole session (.json), or the log of
// its changes (.jsonl).
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxDocument)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &importer.Result{}
	var doc json.RawMessage
	if strings.HasSuffix(name, ".jsonl") {
		doc, err = replay(ctx, name, f, res)
		if err != nil {
			return nil, fmt.Errorf("copilot-vscode: %w", err)
		}
	} else {
		if doc, err = io.ReadAll(f); err != nil {
			return nil, fmt.Errorf("copilot-vscode: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(name), ".jsonl"), ".json")
	parse(res, name, id, doc, workspace(name), fi.ModTime())
	return res, nil
}

// workspace is the folder of the workspace whose storage holds the
// session file at name, from workspace.json beside its chatSessions
// directory; "" for an empty window's session or a folder not known.
func workspace(name string) string {
	dir := filepath.Dir(name)
	if filepath.Base(dir) != sessionsDir {
		return ""
	}
	f, _, err := importer.Open(filepath.Join(filepath.Dir(dir), "workspace.json"), 1<<20)
	if err != nil {
		return ""
	}
	defer f.Close()
	var w struct {
		Folder    string `json:"folder"`
		Workspace string `json:"workspace"`
	}
	if json.NewDecoder(f).Decode(&w) != nil || w.Folder == "" {
		return "" // a multi-root workspace names a file, not a folder
	}
	return importer.FileURIPath(w.Folder)
}
