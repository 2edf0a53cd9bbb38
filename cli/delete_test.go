package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Deleting a session that a live process holds fails with exit 5 naming
// that process, unless --force; --json says what was deleted.
func TestBinaryDeleteLockedSession(t *testing.T) {
	t.Parallel()
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

	// Forced: the session and its sub-agent session go, and --json says
	// so with full ids.
	r = fx.exec(t, "", "session", "delete", fx.main.ID[:8], "--yes", "--force", "--json")
	if r.code != 0 {
		t.Fatalf("forced delete: exit %d, %q", r.code, r.stderr)
	}
	rep := decodeJSON[deleteReport](t, r.stdout)
	if rep.Purged || len(rep.Deleted) != 2 || rep.Deleted[0].ID != fx.main.ID || rep.Deleted[1].ID != fx.sub.ID ||
		rep.Deleted[0].Title != fx.main.Title || rep.Deleted[1].Kind != loom.KindSubagent || rep.Deleted[0].DeletedAt == nil {
		t.Fatalf("delete --json = %s", r.stdout)
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

	// Released, no --force is needed; --purge --json says so.
	r = fx.exec(t, "", "session", "delete", fx.main.ID, "--yes", "--purge", "--json")
	rep = decodeJSON[deleteReport](t, r.stdout)
	if r.code != 0 || !rep.Purged || len(rep.Deleted) != 2 || rep.Deleted[0].DeletedAt != nil {
		t.Fatalf("purge --json: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	if r := fx.exec(t, "", "session", "restore", fx.main.ID); r.code != ExitNotFound {
		t.Fatalf("restore after purge: exit %d", r.code)
	}
}

// --json on delete, restore and prune prints what each did.
func TestDeleteRestorePruneJSON(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	rep := decodeJSON[deleteReport](t, fx.mustRun(t, "session", "delete", fx.web.ID, fx.tg.ID, "--yes", "--json"))
	if rep.Purged || len(rep.Deleted) != 2 || rep.Deleted[0].ID != fx.web.ID || rep.Deleted[1].ID != fx.tg.ID {
		t.Fatalf("delete --json = %+v", rep)
	}
	restored := decodeJSON[*loom.Session](t, fx.mustRun(t, "session", "restore", fx.web.ID, "--json"))
	if restored.ID != fx.web.ID || restored.DeletedAt != nil {
		t.Fatalf("restore --json = %+v", restored)
	}
	pr := decodeJSON[pruneReport](t, fx.mustRun(t, "session", "prune", "--older-than", "1w", "--dry-run", "--json"))
	if !pr.DryRun || pr.Removed == nil || pr.Skipped == nil {
		t.Fatalf("prune --json = %+v", pr)
	}
}

// Age zero is a valid age: a dry run lists every session; a real prune
// still asks on a terminal and needs --yes when piped.
func TestPruneAgeZero(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	out := fx.mustRun(t, "session", "prune", "--older-than", "0s", "--dry-run")
	if n := len(lines(out)); n != 4 {
		t.Fatalf("dry run at 0s lists %d sessions, want this project's 4 top-level ones:\n%s", n, out)
	}
	if r := fx.run(t, "session", "prune", "--older-than", "0s"); r.code != ExitUsage || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("prune at 0s when piped: exit %d, %q", r.code, r.stderr)
	}
	r := fx.runWith(t, runOpts{tty: true, stdin: "n\n"}, "session", "prune", "--older-than", "0s")
	if r.code != ExitError || !strings.Contains(r.stdout, "Move 4 sessions to the trash? [y/N]") || !strings.Contains(r.stderr, "Nothing pruned") {
		t.Fatalf("declined prune at 0s: %+v", r)
	}
	if r := fx.run(t, "session", "prune", "--older-than", "-1d", "--dry-run"); r.code != ExitUsage {
		t.Fatalf("negative age: exit %d, %q", r.code, r.stderr)
	}
	if got := lines(fx.mustRun(t, "session", "list")); len(got) != 5 {
		t.Fatalf("nothing should be pruned yet; list:\n%s", strings.Join(got, "\n"))
	}
}

func TestSessionDeleteRestore(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	if out := fx.mustRun(t, "session", "delete", fx.main.ID[:8], "--yes"); out != "" {
		t.Fatalf("delete printed %q when piped", out)
	}
	out := fx.mustRun(t, "session", "list")
	if strings.Contains(out, fx.main.ID) || strings.Contains(out, fx.sub.ID) {
		t.Fatalf("deleted session (or its sub-agent) still listed:\n%s", out)
	}
	if r := fx.run(t, "session", "show", fx.main.ID); r.code != ExitNotFound ||
		!strings.Contains(r.stderr, `session "Fix the flaky test" is in the trash since `) ||
		!strings.Contains(r.stderr, "; loom session restore "+fx.main.ID+" brings it back") {
		t.Fatalf("show of a deleted session: exit %d: %s", r.code, r.stderr)
	}
	// The trash is listed, with the sub-agent session, and only there.
	out = fx.mustRun(t, "session", "list", "--deleted", "-a")
	if !strings.Contains(out, fx.main.ID) || !strings.Contains(out, fx.sub.ID) || strings.Contains(out, fx.web.ID) {
		t.Fatalf("session list --deleted:\n%s", out)
	}
	if trash := decodeJSON[[]loom.Session](t, fx.mustRun(t, "session", "list", "--deleted", "-a", "--json")); len(trash) != 2 || trash[0].DeletedAt == nil {
		t.Fatalf("session list --deleted --json: %+v", trash)
	}
	if r := fx.run(t, "session", "restore"); r.code != ExitUsage || !strings.Contains(r.stderr, "loom session list --deleted") || len(lines(r.stderr)) != 1 {
		t.Fatalf("restore without a reference: exit %d: %q", r.code, r.stderr)
	}
	fx.mustRun(t, "session", "restore", "Fix the flaky test")
	if out := fx.mustRun(t, "session", "list", "--deleted", "-a"); out != "" {
		t.Fatalf("trash after restore:\n%s", out)
	}
	out = fx.mustRun(t, "session", "list")
	if !strings.Contains(out, fx.main.ID) || !strings.Contains(out, fx.sub.ID) {
		t.Fatalf("restore did not bring back the session and its sub-agent:\n%s", out)
	}

	// On a terminal it asks; anything but yes keeps the session.
	r := fx.runWith(t, runOpts{tty: true, stdin: "n\n"}, "session", "delete", fx.web.ID)
	if r.code != ExitError || !strings.Contains(r.stdout, "Move 1 session to the trash? [y/N]") || !strings.Contains(r.stderr, "Nothing deleted") {
		t.Fatalf("declined delete: %+v", r)
	}
	fx.mustRun(t, "session", "show", fx.web.ID)
	r = fx.runWith(t, runOpts{tty: true, stdin: "y\n"}, "session", "delete", fx.web.ID, "Telegram chat", "--purge")
	if r.code != 0 || !strings.Contains(r.stdout, "Delete 2 sessions for good?") {
		t.Fatalf("confirmed purge: %+v", r)
	}
	if r := fx.run(t, "session", "restore", fx.web.ID); r.code != ExitNotFound {
		t.Fatalf("restore after purge: exit %d", r.code)
	}

	// One bad reference: nothing is deleted.
	if r := fx.run(t, "session", "delete", fx.twin1.ID, "no-such-session", "--yes"); r.code != ExitNotFound {
		t.Fatalf("exit %d", r.code)
	}
	fx.mustRun(t, "session", "show", fx.twin1.ID)
}

func TestSessionPrune(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	// The fixture's sessions were written around base; prune runs on the
	// fixture's clock, a few minutes later.
	r := fx.run(t, "session", "prune", "--older-than", "1w", "--yes")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "No sessions older than 1w") {
		t.Fatalf("nothing to prune: %+v", r)
	}
	fx.clock = base.Add(40 * 24 * time.Hour)
	out := fx.mustRun(t, "session", "prune", "--older-than", "30d", "--dry-run")
	if n := len(lines(out)); n != 4 {
		t.Fatalf("dry run lists %d sessions, want this project's 4 top-level ones:\n%s", n, out)
	}
	if strings.Contains(out, fx.sub.ID) || strings.Contains(out, fx.web.ID) {
		t.Fatalf("dry run lists a sub-agent or another project:\n%s", out)
	}
	if got := lines(fx.mustRun(t, "session", "list")); len(got) != 5 {
		t.Fatal("dry run removed sessions")
	}
	rep := decodeJSON[pruneReport](t, fx.mustRun(t, "session", "prune", "--older-than", "4w", "--yes", "--json"))
	if rep.DryRun || len(rep.Removed) != 4 || len(rep.Skipped) != 0 {
		t.Fatalf("prune report = %+v", rep)
	}
	if got := fx.mustRun(t, "session", "list"); got != "" {
		t.Fatalf("pruned sessions still listed:\n%s", got)
	}
	if got := fx.mustRun(t, "session", "list", "--all-projects"); !strings.Contains(got, fx.web.ID) {
		t.Fatalf("prune reached another project")
	}
	fx.mustRun(t, "session", "restore", fx.main.ID)
	if got := fx.mustRun(t, "session", "list"); !strings.Contains(got, fx.main.ID) {
		t.Fatal("pruned session not restorable")
	}
}
