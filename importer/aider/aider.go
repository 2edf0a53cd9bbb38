package aider

import (
	"context"
	"github.com/loomhq/loom/importer"
)

// Format reads Aider's chat history files. The zero value is ready to
// use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Aider's name in loom: the surface of its imported sessions and
// the TOOL of `loom session import --from TOOL`.
const Tool = "aider"

// HistoryFile is the name Aider gives its chat history, in the git root
// of the project it runs in (or the directory it runs in outside git).
const HistoryFile = ".aider.chat.history.md"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Aider talks to any provider, and each reply's is taken
// from its model's name.
func (Format) Provider() string { return "" }

// Roots is none: Aider keeps no directory of its own, it writes its
// history into each project. Walking the home directory, or every
// repository on the machine, on each import (and watching every
// directory below them with --watch) would cost far more than naming
// them: `loom session import --from aider ~/src`.
func (Format) Roots(env func(string) string, home string) []string { return nil }

// Bundles lists every .aider.chat.history.md under root, one bundle
// each, leaving out dependency, build and version-control directories
// (importer.HeavyDirs); root itself may be one file, read whatever its
// name (a history moved with --chat-history-file).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.NamedFiles(ctx, Tool, root, func(name string) bool { return name == HistoryFile })
}

// Read reads one chat history file: a session for each time Aider
// started.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path, f, _, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(ctx, path, f)
}
