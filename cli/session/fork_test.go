package session

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// Fork makes a session of the turns asked for, titled as --name says,
// and prints its id; a turn the session does not have forks nothing.
func TestSessionForkRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.poolTimeout(t, laterTurns...)

	ios := terminal()
	opts := &ForkOptions{OneSession: OneSession{IO: ios, StoreSession: w.openSession(ios), DisplayID: w.scope(ios).DisplayID,
		Ref: "pool timeout"}, Turn: 2, HasTurn: true, Name: "try another fix"}
	if err := forkRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut := outputs(ios)
	id := strings.TrimSuffix(out, "\n")
	fork := w.stored(t, id)
	if fork.ParentID != s.ID || fork.ForkTurn != 2 || fork.Title != "try another fix" || fork.MessageCount != 4 {
		t.Errorf("fork: parent %s at turn %d, %q, %d messages; want %s at 2, \"try another fix\", 4",
			fork.ParentID, fork.ForkTurn, fork.Title, fork.MessageCount, s.ID)
	}
	if !strings.HasPrefix(errOut, "Forked ") || !strings.Contains(errOut, ` at turn 2 of 3 into "try another fix".`) {
		t.Errorf("stderr %q", errOut)
	}

	ios = piped()
	opts = &ForkOptions{OneSession: OneSession{IO: ios, StoreSession: w.openSession(ios), DisplayID: w.scope(ios).DisplayID, Ref: s.ID}, Turn: 4, HasTurn: true}
	refused(t, forkRun(t.Context(), opts), "cannot fork at turn 4")
	if all, err := w.st.Sessions(t.Context(), loom.SessionFilter{UserID: "local"}); err != nil || len(all) != 2 {
		t.Errorf("after a refused fork: %d sessions (%v), want 2", len(all), err)
	}
}

// The command fills its options from its flags, and refuses a turn
// below 1 and a title that cannot be one.
func TestNewCmdSessionForkOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionFork, "flaky test", "--turn", "3", "--name", "try the other fix")
	if got.Ref != "flaky test" || got.Turn != 3 || !got.HasTurn || got.Name != "try the other fix" || got.StoreSession == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdSessionFork, "0196a3b2"); got.HasTurn || got.Turn != 0 || got.Name != "" {
		t.Errorf("without --turn: %+v", got)
	}
	// -n as on chat and run.
	if got := cmdtest.Options(t, newCmdSessionFork, "0196a3b2", "-t", "2", "-n", "short"); got.Name != "short" || got.Turn != 2 {
		t.Errorf("-t 2 -n short: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionFork, "0196a3b2", "-t", "0"), "--turn must be 1 or more")
	refused(t, cmdtest.Rejects(t, newCmdSessionFork, "0196a3b2", "--name", "two\nlines"), "--name: ")
}
