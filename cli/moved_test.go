package cli

import (
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/session"
)

// The names the tests of this package use for what moved to the
// command packages.
var (
	usageErrorf  = command.UsageErrorf
	jsonString   = command.JSONString
	adoptProject = command.AdoptProject
	drawBranches = session.DrawBranches
)

type (
	deleteReport = session.DeleteReport
	pruneReport  = session.PruneReport
	rewindResult = session.RewindResult
	treeRow      = session.TreeRow
)
