package main

import (
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/agents"
)

// benchFormats are the session formats the agents run imports.
func benchFormats() []importer.Format {
	return agents.Formats()
}
