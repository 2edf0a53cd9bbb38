package claudeai

import (
	"context"
	"errors"

	"github.com/loomhq/loom/importer"
)

// Format reads Claude.ai's data export. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Claude.ai's name in loom: the surface of its imported
// sessions and the TOOL of `loom session import --from TOOL`.
const Tool = "claude-ai"

// Provider is the provider of Claude.ai's replies.
const Provider = "anthropic"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider returns Provider.
func (Format) Provider() string { return Provider }

// Roots is none: an export is a download, wherever the user put it.
func (Format) Roots(env func(string) string, home string) []string { return nil }

// Bundles lists every conversations.json (and numbered part of one)
// under root, or root itself when it is a file.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.NamedFiles(ctx, Tool, root, importer.IsExportFile)
}

// Read reads one conversations.json, a conversation at a time.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	if b.Name() == "" {
		return nil, errors.New("claude-ai: empty bundle")
	}
	return importer.ReadExport(ctx, Tool, b.Name(), func(i int, elem []byte, res *importer.Result) error {
		return readConversation(b.Name(), i, elem, res)
	})
}
