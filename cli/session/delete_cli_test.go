package session_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// Deleting a session that a live process holds fails with exit 5 naming
// that process, unless --force; --json says what was deleted.
func TestBinaryDeleteLockedSession(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	host, _ := os.Hostname()
	holder := fmt.Sprintf("process %d on %s", os.Getpid(), host)
	// This test process holds the lock, through a store handle of its
	// own, as a running chat would.
	st := fx.OpenStore(t)
	lease, err := st.Lock(context.Background(), fx.Main.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())

	r := fx.Exec(t, "", "session", "delete", fx.Main.ID, "--yes")
	if r.Code != cli.ExitLocked || !strings.Contains(r.Stderr, holder) || !strings.Contains(r.Stderr, "--force") || len(clitest.Lines(r.Stderr)) != 1 {
		t.Fatalf("delete of a held session: exit %d, stderr %q; want 5 naming %s", r.Code, r.Stderr, holder)
	}
	// Several references: nothing is deleted when one is held.
	if r := fx.Exec(t, "", "session", "delete", fx.Twin1.ID, fx.Main.ID, "--yes", "--purge"); r.Code != cli.ExitLocked {
		t.Fatalf("delete of a free and a held session: exit %d, %q", r.Code, r.Stderr)
	}
	fx.MustExec(t, "session", "show", fx.Twin1.ID)
	fx.MustExec(t, "session", "show", fx.Main.ID)

	// Forced: the session and its sub-agent session go, and --json says
	// so with full ids.
	r = fx.Exec(t, "", "session", "delete", fx.Main.ID[:8], "--yes", "--force", "--json")
	if r.Code != 0 {
		t.Fatalf("forced delete: exit %d, %q", r.Code, r.Stderr)
	}
	rep := clitest.DecodeJSON[clitest.DeleteReport](t, r.Stdout)
	if rep.Purged || len(rep.Deleted) != 2 || rep.Deleted[0].ID != fx.Main.ID || rep.Deleted[1].ID != fx.Sub.ID ||
		rep.Deleted[0].Title != fx.Main.Title || rep.Deleted[1].Kind != loom.KindSubagent || rep.Deleted[0].DeletedAt == nil {
		t.Fatalf("delete --json = %s", r.Stdout)
	}
	if r := fx.Exec(t, "", "session", "show", fx.Main.ID); r.Code != cli.ExitNotFound {
		t.Fatalf("deleted session still shown: exit %d", r.Code)
	}
	lease.Release(context.Background())

	// A lock on a sub-agent session holds its parent: the store checks
	// the whole family in the delete's own transaction.
	fx.MustExec(t, "session", "restore", fx.Main.ID)
	lease, err = st.Lock(context.Background(), fx.Sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	r = fx.Exec(t, "", "session", "delete", fx.Main.ID, "--yes", "--purge")
	if r.Code != cli.ExitLocked || !strings.Contains(r.Stderr, fx.Sub.ID) || !strings.Contains(r.Stderr, holder) {
		t.Fatalf("delete of a session whose sub-agent is held: exit %d, %q", r.Code, r.Stderr)
	}
	lease.Release(context.Background())

	// Released, no --force is needed; --purge --json says so.
	r = fx.Exec(t, "", "session", "delete", fx.Main.ID, "--yes", "--purge", "--json")
	rep = clitest.DecodeJSON[clitest.DeleteReport](t, r.Stdout)
	if r.Code != 0 || !rep.Purged || len(rep.Deleted) != 2 || rep.Deleted[0].DeletedAt != nil {
		t.Fatalf("purge --json: exit %d, %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := fx.Exec(t, "", "session", "restore", fx.Main.ID); r.Code != cli.ExitNotFound {
		t.Fatalf("restore after purge: exit %d", r.Code)
	}
}

// --json on delete, restore and prune prints what each did.
func TestDeleteRestorePruneJSON(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	rep := clitest.DecodeJSON[clitest.DeleteReport](t, fx.MustRun(t, "session", "delete", fx.Web.ID, fx.Tg.ID, "--yes", "--json"))
	if rep.Purged || len(rep.Deleted) != 2 || rep.Deleted[0].ID != fx.Web.ID || rep.Deleted[1].ID != fx.Tg.ID {
		t.Fatalf("delete --json = %+v", rep)
	}
	restored := clitest.DecodeJSON[*loom.Session](t, fx.MustRun(t, "session", "restore", fx.Web.ID, "--json"))
	if restored.ID != fx.Web.ID || restored.DeletedAt != nil {
		t.Fatalf("restore --json = %+v", restored)
	}
	pr := clitest.DecodeJSON[clitest.PruneReport](t, fx.MustRun(t, "session", "prune", "--older-than", "1w", "--dry-run", "--json"))
	if !pr.DryRun || pr.Removed == nil || pr.Skipped == nil {
		t.Fatalf("prune --json = %+v", pr)
	}
}

// Age zero is a valid age: a dry run lists every session; a real prune
// still asks on a terminal and needs --yes when piped.
func TestPruneAgeZero(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	out := fx.MustRun(t, "session", "prune", "--older-than", "0s", "--dry-run")
	if n := len(clitest.Lines(out)); n != 4 {
		t.Fatalf("dry run at 0s lists %d sessions, want this project's 4 top-level ones:\n%s", n, out)
	}
	if r := fx.Run(t, "session", "prune", "--older-than", "0s"); r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "--yes") {
		t.Fatalf("prune at 0s when piped: exit %d, %q", r.Code, r.Stderr)
	}
	r := fx.RunWith(t, clitest.RunOpts{Tty: true, Stdin: "n\n"}, "session", "prune", "--older-than", "0s")
	if r.Code != cli.ExitError || !strings.Contains(r.Stdout, "Move 4 sessions to the trash? [y/N]") || !strings.Contains(r.Stderr, "Nothing pruned") {
		t.Fatalf("declined prune at 0s: %+v", r)
	}
	if r := fx.Run(t, "session", "prune", "--older-than", "-1d", "--dry-run"); r.Code != cli.ExitUsage {
		t.Fatalf("negative age: exit %d, %q", r.Code, r.Stderr)
	}
	if got := clitest.Lines(fx.MustRun(t, "session", "list")); len(got) != 5 {
		t.Fatalf("nothing should be pruned yet; list:\n%s", strings.Join(got, "\n"))
	}
}

func TestSessionDeleteRestore(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	if out := fx.MustRun(t, "session", "delete", fx.Main.ID[:8], "--yes"); out != "" {
		t.Fatalf("delete printed %q when piped", out)
	}
	out := fx.MustRun(t, "session", "list")
	if strings.Contains(out, fx.Main.ID) || strings.Contains(out, fx.Sub.ID) {
		t.Fatalf("deleted session (or its sub-agent) still listed:\n%s", out)
	}
	if r := fx.Run(t, "session", "show", fx.Main.ID); r.Code != cli.ExitNotFound ||
		!strings.Contains(r.Stderr, `session "Fix the flaky test" is in the trash since `) ||
		!strings.Contains(r.Stderr, "; loom session restore "+fx.Main.ID+" brings it back") {
		t.Fatalf("show of a deleted session: exit %d: %s", r.Code, r.Stderr)
	}
	// The trash is listed, with the sub-agent session, and only there.
	out = fx.MustRun(t, "session", "list", "--deleted", "-a")
	if !strings.Contains(out, fx.Main.ID) || !strings.Contains(out, fx.Sub.ID) || strings.Contains(out, fx.Web.ID) {
		t.Fatalf("session list --deleted:\n%s", out)
	}
	if trash := clitest.DecodeJSON[[]loom.Session](t, fx.MustRun(t, "session", "list", "--deleted", "-a", "--json")); len(trash) != 2 || trash[0].DeletedAt == nil {
		t.Fatalf("session list --deleted --json: %+v", trash)
	}
	if r := fx.Run(t, "session", "restore"); r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "loom session list --deleted") || len(clitest.Lines(r.Stderr)) != 1 {
		t.Fatalf("restore without a reference: exit %d: %q", r.Code, r.Stderr)
	}
	fx.MustRun(t, "session", "restore", "Fix the flaky test")
	if out := fx.MustRun(t, "session", "list", "--deleted", "-a"); out != "" {
		t.Fatalf("trash after restore:\n%s", out)
	}
	out = fx.MustRun(t, "session", "list")
	if !strings.Contains(out, fx.Main.ID) || !strings.Contains(out, fx.Sub.ID) {
		t.Fatalf("restore did not bring back the session and its sub-agent:\n%s", out)
	}

	// On a terminal it asks; anything but yes keeps the session.
	r := fx.RunWith(t, clitest.RunOpts{Tty: true, Stdin: "n\n"}, "session", "delete", fx.Web.ID)
	if r.Code != cli.ExitError || !strings.Contains(r.Stdout, "Move 1 session to the trash? [y/N]") || !strings.Contains(r.Stderr, "Nothing deleted") {
		t.Fatalf("declined delete: %+v", r)
	}
	fx.MustRun(t, "session", "show", fx.Web.ID)
	r = fx.RunWith(t, clitest.RunOpts{Tty: true, Stdin: "y\n"}, "session", "delete", fx.Web.ID, "Telegram chat", "--purge")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Delete 2 sessions for good?") {
		t.Fatalf("confirmed purge: %+v", r)
	}
	if r := fx.Run(t, "session", "restore", fx.Web.ID); r.Code != cli.ExitNotFound {
		t.Fatalf("restore after purge: exit %d", r.Code)
	}

	// One bad reference: nothing is deleted.
	if r := fx.Run(t, "session", "delete", fx.Twin1.ID, "no-such-session", "--yes"); r.Code != cli.ExitNotFound {
		t.Fatalf("exit %d", r.Code)
	}
	fx.MustRun(t, "session", "show", fx.Twin1.ID)
}

func TestSessionPrune(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	// The fixture's sessions were written around base; prune runs on the
	// fixture's clock, a few minutes later.
	r := fx.Run(t, "session", "prune", "--older-than", "1w", "--yes")
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "No sessions older than 1w") {
		t.Fatalf("nothing to prune: %+v", r)
	}
	fx.Clock = clitest.Base.Add(40 * 24 * time.Hour)
	out := fx.MustRun(t, "session", "prune", "--older-than", "30d", "--dry-run")
	if n := len(clitest.Lines(out)); n != 4 {
		t.Fatalf("dry run lists %d sessions, want this project's 4 top-level ones:\n%s", n, out)
	}
	if strings.Contains(out, fx.Sub.ID) || strings.Contains(out, fx.Web.ID) {
		t.Fatalf("dry run lists a sub-agent or another project:\n%s", out)
	}
	if got := clitest.Lines(fx.MustRun(t, "session", "list")); len(got) != 5 {
		t.Fatal("dry run removed sessions")
	}
	rep := clitest.DecodeJSON[clitest.PruneReport](t, fx.MustRun(t, "session", "prune", "--older-than", "4w", "--yes", "--json"))
	if rep.DryRun || len(rep.Removed) != 4 || len(rep.Skipped) != 0 {
		t.Fatalf("prune report = %+v", rep)
	}
	if got := fx.MustRun(t, "session", "list"); got != "" {
		t.Fatalf("pruned sessions still listed:\n%s", got)
	}
	if got := fx.MustRun(t, "session", "list", "--all-projects"); !strings.Contains(got, fx.Web.ID) {
		t.Fatalf("prune reached another project")
	}
	fx.MustRun(t, "session", "restore", fx.Main.ID)
	if got := fx.MustRun(t, "session", "list"); !strings.Contains(got, fx.Main.ID) {
		t.Fatal("pruned session not restorable")
	}
}
