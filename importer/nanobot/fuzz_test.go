package nanobot

import (
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session's file: no panic, bounded
// time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, file, "s/cli_default.jsonl")
}
