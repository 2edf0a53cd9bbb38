package session

import (
	"testing"

	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// Rewind takes the session back to the end of the turn asked for and
// keeps the rest in a fork; off a terminal without --turn it asks for
// the turn and changes nothing.
func TestSessionRewindRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.poolTimeout(t, laterTurns...)

	ios := piped()
	opts := &RewindOptions{OneSession: OneSession{IO: ios, StoreSession: w.openSession(ios), DisplayID: w.scope(ios).DisplayID, Ref: "pool timeout"}}
	refused(t, rewindRun(t.Context(), opts), "give the turn to go back to with --turn N (1 to 2)")
	if got := w.stored(t, s.ID); got.TurnCount != 3 {
		t.Errorf("a refused rewind left %d turns, want 3", got.TurnCount)
	}

	opts.Turn, opts.HasTurn, opts.JSON = 1, true, true
	if err := rewindRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	res := printedJSON[RewindResult](t, ios)
	if res.Session.ID != s.ID || res.Session.TurnCount != 1 || res.Fork.TurnCount != 3 || res.Fork.ParentID != s.ID {
		t.Errorf("--json: session %s with %d turns, fork of %s with %d; want %s with 1, a fork of it with 3",
			res.Session.ID, res.Session.TurnCount, res.Fork.ParentID, res.Fork.TurnCount, s.ID)
	}
	if got, fork := w.stored(t, s.ID), w.stored(t, res.Fork.ID); got.MessageCount != 2 || got.Key != "cli:api" || fork.MessageCount != 6 {
		t.Errorf("stored: the session has %d messages (key %s), the fork %d; want 2 (cli:api), 6", got.MessageCount, got.Key, fork.MessageCount)
	}

	one := w.oldSpike(t)
	opts = &RewindOptions{OneSession: OneSession{IO: piped(), StoreSession: w.openSession(ios), Ref: one.ID}, Turn: 1, HasTurn: true}
	refused(t, rewindRun(t.Context(), opts), "there is nothing to rewind")
}

// The command fills its options from its flags and refuses a turn
// below 1.
func TestNewCmdSessionRewindOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionRewind, "0196a3b2", "-t", "3")
	if got.Ref != "0196a3b2" || got.Turn != 3 || !got.HasTurn || got.StoreSession == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdSessionRewind, "flaky test"); got.HasTurn {
		t.Errorf("without --turn: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionRewind, "0196a3b2", "--turn", "0"), "--turn must be 1 or more")
	refused(t, cmdtest.Rejects(t, newCmdSessionRewind), "missing arguments")
}
