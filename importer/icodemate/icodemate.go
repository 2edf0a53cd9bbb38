// Package icodemate reads the sessions of IcodeMate, a fork of opencode
// that keeps them in a database of opencode's schema,
// ~/.local/share/icodemate/icodemate.db (and opencode's storage tree
// beside it), for loom's importer: opencode's reader, under IcodeMate's
// name and in its place.
//
// The layout is agentsview's (kenn-io/agentsview at
// 538600744d1b87614d3746d36a0966c1f2ac1cad: internal/parser/types.go,
// its default directory .local/share/icodemate, and icodemate.go and
// opencode_provider.go, which read it with opencode's reader from
// icodemate.db); no public source or package of IcodeMate was found.
// testdata/icodemate.db is the database opencode 1.18.33 wrote
// (importer/opencode/testdata/real-1.18.33.db), named as IcodeMate
// names its own.
package icodemate

import (
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/opencode"
)

// Format reads IcodeMate's sessions: opencode's reader of
// icodemate.db. The zero value is ready to use.
type Format struct{ opencode.Format }

var _ importer.Format = Format{}

// Tool is IcodeMate's name in loom.
const Tool = "icodemate"

// fork is opencode's reader under IcodeMate's name, directory and
// database.
var fork = opencode.Fork(Tool, "icodemate", "icodemate.db", "build")

func init() { importer.Register(Format{fork}) }
