package copilot

import (
	"context"
	"io/fs"

	"github.com/loomhq/loom/importer"
)

// Format reads GitHub Copilot CLI's session files. The zero value is
// ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is GitHub Copilot CLI's name in loom: the surface of its imported
// sessions and the TOOL of `loom session import --from TOOL`.
const Tool = "copilot"

func init() { importer.Register(Format{}) }

// EnvHome is the variable that replaces ~/.copilot, as Copilot CLI
// reads it.
const EnvHome = "COPILOT_HOME"

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Copilot CLI routes to many models, through GitHub or a
// provider of the user's own, and the file does not name the provider.
func (Format) Provider() string { return "" }

// Roots is $COPILOT_HOME/session-state (~/.copilot/session-state by
// default).
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, EnvHome, ".copilot"), "session-state")
}

// Bundles lists every <session id>/events.jsonl under root, one bundle
// each; root itself may be one file, read whatever its name.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return d.Name() == "events.jsonl"
	})
}

// Read reads one session's events into the session and its sub-agents.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path, f, _, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(ctx, path, f)
}
