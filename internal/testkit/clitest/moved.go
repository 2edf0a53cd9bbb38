package clitest

import (
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/session"
)

// The names the tests of this package use for what moved to the
// command packages.
var (
	UsageErrorf  = command.UsageErrorf
	JsonString   = command.JSONString
	AdoptProject = command.AdoptProject
	DrawBranches = session.DrawBranches
)

type (
	DeleteReport = session.DeleteReport
	PruneReport  = session.PruneReport
	RewindResult = session.RewindResult
	TreeRow      = session.TreeRow
)
