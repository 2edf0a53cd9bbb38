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
	cmd := &cobra.Command{
		Use:     "session <command>",
		Short:   "List, show, resume, fork, rewind, rename, archive, delete, export and import sessions",
		Aliases: []string{"sessions"},
		Example: `  loom session list --all-projects
  loom session show "flaky test" --full-history
  loom session fork 0196a3b2 --turn 3 --name "try another fix"`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		newCmdSessionList(inv),
		newCmdSessionShow(inv),
		newCmdSessionResume(inv),
		newCmdSessionFork(inv),
		newCmdSessionRewind(inv),
		newCmdSessionRename(inv),
		newCmdSessionMove(inv),
		newCmdSessionDelete(inv),
		newCmdSessionRestore(inv),
		newCmdSessionArchive(inv, true),
		newCmdSessionArchive(inv, false),
		newCmdSessionPrune(inv),
		newCmdSessionExport(inv),
		newCmdSessionImport(inv),
		newCmdSessionHandoff(inv),
		newCmdSessionSummarize(inv, nil),
	)
	return cmd
}
