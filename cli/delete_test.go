package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Deleting a session that a live process holds fails with exit 5 naming
// that process, unless --force.
func TestBinaryDeleteLockedSession(t *testing.T) {
	fx := newFixture(t)
	host, _ := os.Hostname()
	holder := fmt.Sprintf("process %d on %s", os.Getpid(), host)
	// This test process holds the lock, through a store handle of its
	// own, as a running chat would.
	st := fx.openStore(t)
	lease, err := st.Lock(context.Background(), fx.main.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())

	r := fx.exec(t, "", "session", "delete", fx.main.ID, "--yes")
	if r.code != ExitLocked || !strings.Contains(r.stderr, holder) || !strings.Contains(r.stderr, "--force") || len(lines(r.stderr)) != 1 {
		t.Fatalf("delete of a held session: exit %d, stderr %q; want 5 naming %s", r.code, r.stderr, holder)
	}
	// Several references: nothing is deleted when one is held.
	if r := fx.exec(t, "", "session", "delete", fx.twin1.ID, fx.main.ID, "--yes", "--purge"); r.code != ExitLocked {
		t.Fatalf("delete of a free and a held session: exit %d, %q", r.code, r.stderr)
	}
	fx.mustExec(t, "session", "show", fx.twin1.ID)
	fx.mustExec(t, "session", "show", fx.main.ID)

	// Forced: the session and its sub-agent session go.
	r = fx.exec(t, "", "session", "delete", fx.main.ID[:8], "--yes", "--force")
	if r.code != 0 {
		t.Fatalf("forced delete: exit %d, %q", r.code, r.stderr)
	}
	if r := fx.exec(t, "", "session", "show", fx.sub.ID); r.code != ExitNotFound {
		t.Fatalf("sub-agent session of a deleted session still shown: exit %d", r.code)
	}
	if r := fx.exec(t, "", "session", "show", fx.main.ID); r.code != ExitNotFound {
		t.Fatalf("deleted session still shown: exit %d", r.code)
	}
	lease.Release(context.Background())

	// A lock on a sub-agent session holds its parent: the store checks
	// the whole family in the delete's own transaction.
	fx.mustExec(t, "session", "restore", fx.main.ID)
	lease, err = st.Lock(context.Background(), fx.sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	r = fx.exec(t, "", "session", "delete", fx.main.ID, "--yes", "--purge")
	if r.code != ExitLocked || !strings.Contains(r.stderr, fx.sub.ID) || !strings.Contains(r.stderr, holder) {
		t.Fatalf("delete of a session whose sub-agent is held: exit %d, %q", r.code, r.stderr)
	}
	lease.Release(context.Background())

	// Released, no --force is needed.
	if r := fx.exec(t, "", "session", "delete", fx.main.ID, "--yes", "--purge"); r.code != 0 {
		t.Fatalf("purge: exit %d, %s", r.code, r.stderr)
	}
	if r := fx.exec(t, "", "session", "restore", fx.main.ID); r.code != ExitNotFound {
		t.Fatalf("restore after purge: exit %d", r.code)
	}
}
