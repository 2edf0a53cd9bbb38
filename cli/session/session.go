// Package session is loom's session commands: list, show, resume, fork,
// rewind, rename, move, delete, restore, archive, prune, export, import
// (with the hook agents call), handoff and summarize.
package session

import (
	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
)

// NewCmdSession groups the session commands.
func NewCmdSession(inv *command.Invocation) *cobra.Command {
	return command.Group(&cobra.Command{
		Use:     "session <command>",
		Short:   "List, show, resume, fork, rewind, rename, archive, delete, export and import sessions",
		Aliases: []string{"sessions"},
		Example: `  loom session list --all-projects
  loom session show "flaky test" --full-history
  loom session fork 0196a3b2 --turn 3 --name "try another fix"`,
	},
		newCmdSessionList(inv, nil),
		newCmdSessionShow(inv, nil),
		newCmdSessionResume(inv, nil),
		newCmdSessionFork(inv, nil),
		newCmdSessionRewind(inv, nil),
		newCmdSessionRename(inv, nil),
		newCmdSessionMove(inv, nil),
		newCmdSessionDelete(inv, nil),
		newCmdSessionRestore(inv, nil),
		newCmdSessionArchive(inv, true, nil),
		newCmdSessionArchive(inv, false, nil),
		newCmdSessionPrune(inv, nil),
		newCmdSessionExport(inv, nil),
		newCmdSessionImport(inv, nil),
		newCmdSessionReimport(inv, nil),
		newCmdSessionHandoff(inv, nil),
		newCmdSessionRestoreTo(inv, nil),
		newCmdSessionSummarize(inv, nil),
	)
}
