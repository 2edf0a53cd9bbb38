package main

import (
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/opencode"
)

// benchFormats are the session formats the agents run imports.
func benchFormats() []importer.Format {
	return []importer.Format{claudecode.Format{}, codex.Format{}, gemini.Format{}, opencode.Format{}}
}
