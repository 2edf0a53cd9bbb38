package session

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// Rename gives the session its title, which then finds it, and says so
// on a terminal; --json prints the session renamed.
func TestSessionRenameRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.session(t, w.api, "cli:api", "why does the pool", "why does the pool time out", "the idle timeout")

	ios := terminal()
	opts := &RenameOptions{OneSession: OneSession{IO: ios, StoreSession: w.openSession(ios), DisplayID: w.scope(ios).DisplayID, Ref: "cli:api"}, Title: "pool timeout"}
	if err := renameRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(ios)
	if !strings.HasPrefix(out, "✓ Renamed ") || !strings.HasSuffix(out, ` from "why does the pool" to "pool timeout"`+"\n") {
		t.Errorf("output %q", out)
	}
	if got, err := w.scope(ios).Resolve(t.Context(), w.st, "pool timeout"); err != nil || got.ID != s.ID {
		t.Errorf("the new title finds %v (%v), want %s", got, err, s.ID)
	}

	ios = piped()
	opts = &RenameOptions{OneSession: OneSession{IO: ios, StoreSession: w.openSession(ios), Ref: s.ID, JSON: true}, Title: "pool timeout fixed"}
	if err := renameRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if got := printedJSON[loom.Session](t, ios); got.ID != s.ID || got.Title != "pool timeout fixed" {
		t.Errorf("--json: %+v", got)
	}
}

// The command takes a reference and a title, trimmed, and refuses an
// empty title.
func TestNewCmdSessionRenameOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionRename, "0196a3b2", "  flaky test hunt ")
	if got.Ref != "0196a3b2" || got.Title != "flaky test hunt" || got.StoreSession == nil {
		t.Errorf("options: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionRename, "0196a3b2", "  "), "the title must not be empty")
	refused(t, cmdtest.Rejects(t, newCmdSessionRename, "0196a3b2"), "missing arguments")
}
