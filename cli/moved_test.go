package cli

import "github.com/loomhq/loom/cli/command"

// The names the tests of this package use for what moved to the
// command packages.
var (
	usageErrorf  = command.UsageErrorf
	jsonString   = command.JSONString
	adoptProject = command.AdoptProject
)
