package session

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

// OneSession is what a command that changes the one session REF names
// works with (rename, fork, rewind): each of their options holds it.
type OneSession struct {
	IO *term.IOStreams
	// StoreSession opens the store to change the session ref names, and
	// finds it.
	StoreSession func(ctx context.Context, ref string) (loom.Engine, *loom.Session, error)
	// DisplayID is an id as a terminal shows it: a prefix that finds it
	// back (command.Scope.DisplayID).
	DisplayID func(ctx context.Context, st loom.Store, id string) string
	JSON      bool

	Ref string
}

// newOneSession fills a OneSession from the invocation; Ref and JSON
// are set when the command runs.
func newOneSession(inv *command.Invocation) OneSession {
	return OneSession{IO: inv.IO, StoreSession: inv.StoreSession, DisplayID: inv.Scope().DisplayID}
}

// turnGiven says whether --turn was given, and refuses a turn below 1:
// a session's turns count from 1.
func turnGiven(cmd *cobra.Command, turn int) (bool, error) {
	if !cmd.Flags().Changed("turn") {
		return false, nil
	}
	if turn < 1 {
		return true, command.UsageErrorf("--turn must be 1 or more")
	}
	return true, nil
}

// StoredSessions is what a command that changes sessions found by
// reference works with (archive, delete, move, summarize): each of their
// options holds it.
type StoredSessions struct {
	IO *term.IOStreams
	// Store opens the store to change sessions in it.
	Store func(context.Context) (loom.Engine, error)
	// Resolve finds the live session a reference names.
	Resolve func(ctx context.Context, st loom.Reader, ref string) (*loom.Session, error)
	// DisplayID is an id as a terminal shows it: a prefix that finds it
	// back (command.Scope.DisplayID).
	DisplayID func(ctx context.Context, st loom.Store, id string) string
	JSON      bool
}

// newStoredSessions fills a StoredSessions from the invocation; JSON is
// set when the command runs.
func newStoredSessions(inv *command.Invocation) StoredSessions {
	return StoredSessions{IO: inv.IO, Store: inv.Store, Resolve: inv.Scope().Resolve, DisplayID: inv.Scope().DisplayID}
}

// resolveAll finds the session each reference names, in order, before
// anything changes: a typo in the third leaves the first two as they
// were.
func (o *StoredSessions) resolveAll(ctx context.Context, st loom.Reader, refs []string) ([]*loom.Session, error) {
	sessions := make([]*loom.Session, 0, len(refs))
	for _, ref := range refs {
		s, err := o.Resolve(ctx, st, ref)
		if err != nil {
			return nil, err
		}
		sessions = append(sessions, s)
	}
	return sessions, nil
}
