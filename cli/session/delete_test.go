package session

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

func (w *world) deleteOptions(ios *term.IOStreams, refs ...string) *DeleteOptions {
	sc := w.scope(ios)
	return &DeleteOptions{StoredSessions: StoredSessions{IO: ios, Store: w.open, Resolve: sc.Resolve, DisplayID: sc.DisplayID}, Refs: refs, Yes: true}
}

func (w *world) restoreOptions(ios *term.IOStreams, ref string) *RestoreOptions {
	sc := w.scope(ios)
	return &RestoreOptions{IO: ios, Store: w.open, ResolveIn: sc.ResolveIn, DisplayID: sc.DisplayID, Ref: ref}
}

// trashed reports whether session id is in the trash, and fails the
// test when it is gone for good.
func (w *world) trashed(t *testing.T, id string) bool {
	t.Helper()
	return w.stored(t, id).DeletedAt != nil
}

// Delete moves sessions to the trash, saying how to bring each back, and
// restore brings one back; a session in the trash is not restored
// twice.
func TestSessionDeleteRunAndRestore(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.poolTimeout(t)
	b := w.oldSpike(t)

	ios := terminal()
	if err := deleteRun(t.Context(), w.deleteOptions(ios, "pool timeout", b.ID, a.ID)); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(ios)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "✓ Moved ") ||
		!strings.HasSuffix(lines[0], ` "pool timeout" to the trash; loom session restore `+a.ID+" brings it back") {
		t.Errorf("delete (a session named twice is deleted once):\n%s", out)
	}
	if !w.trashed(t, a.ID) || !w.trashed(t, b.ID) {
		t.Errorf("after delete: %s in the trash %v, %s %v", a.ID, w.trashed(t, a.ID), b.ID, w.trashed(t, b.ID))
	}

	ios = terminal()
	if err := restoreRun(t.Context(), w.restoreOptions(ios, "pool timeout")); err != nil {
		t.Fatal(err)
	}
	if out, _ := outputs(ios); !strings.HasPrefix(out, "✓ Restored ") || !strings.HasSuffix(out, ` "pool timeout"`+"\n") {
		t.Errorf("restore: %q", out)
	}
	if w.trashed(t, a.ID) || !w.trashed(t, b.ID) {
		t.Errorf("after restore: %s in the trash %v, %s %v; want only %s", a.ID, w.trashed(t, a.ID), b.ID, w.trashed(t, b.ID), b.ID)
	}
	err := restoreRun(t.Context(), w.restoreOptions(piped(), a.ID))
	if loom.ErrorCode(err) != loom.ENOTFOUND || !strings.Contains(err.Error(), "no session in the trash matches") {
		t.Errorf("restoring a live session: %v", err)
	}
}

// --purge removes sessions for good, and --json says which; a session
// another process holds is refused unless --force, before anything is
// deleted.
func TestSessionDeleteRunPurgeAndLocks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.poolTimeout(t)
	b := w.oldSpike(t)
	lease, err := w.st.Lock(t.Context(), b.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lease.Release(t.Context()) })

	opts := w.deleteOptions(piped(), a.ID, b.ID)
	opts.Purge = true
	err = deleteRun(t.Context(), opts)
	if loom.ErrorCode(err) != loom.ELOCKED || !strings.Contains(err.Error(), "--force deletes it anyway") {
		t.Errorf("deleting a held session: %v, want ELOCKED saying --force", err)
	}
	if w.trashed(t, a.ID) {
		t.Errorf("a refused delete deleted %s", a.ID)
	}

	ios := piped()
	opts = w.deleteOptions(ios, a.ID, b.ID)
	opts.Purge, opts.Force, opts.JSON = true, true, true
	if err := deleteRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if rep := printedJSON[DeleteReport](t, ios); !rep.Purged || len(rep.Deleted) != 2 || rep.Deleted[0].ID != a.ID || rep.Deleted[1].ID != b.ID {
		t.Errorf("--purge --force --json: %+v", rep)
	}
	for _, s := range []*loom.Session{a, b} {
		if _, err := w.st.Session(t.Context(), s.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
			t.Errorf("purged %s is still there: %v", s.ID, err)
		}
	}
}

// On a terminal without --yes, delete lists the sessions and asks; no
// deletes nothing and exits 1.
func TestSessionDeleteRunAsks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.poolTimeout(t)
	ios := terminal()
	ios.SetStdinTTY(true)
	ios.In = strings.NewReader("n\n")
	opts := w.deleteOptions(ios, a.ID)
	opts.Yes = false
	err := deleteRun(t.Context(), opts)
	var se *command.SilentError
	if !errors.As(err, &se) || command.ExitCode(err) != command.ExitError {
		t.Errorf("answering no: %v, want exit 1 without a message", err)
	}
	out, errOut := outputs(ios)
	if !strings.Contains(out, a.ID+`  "pool timeout"  2 messages`) || !strings.Contains(out, "Move 1 session to the trash? [y/N] ") || errOut != "Nothing deleted.\n" {
		t.Errorf("asked:\n%s\nstderr %q", out, errOut)
	}
	if w.trashed(t, a.ID) {
		t.Errorf("answering no deleted %s", a.ID)
	}
}

// Prune moves the project's sessions not updated for the age given to
// the trash; --dry-run says which and changes nothing.
func TestSessionPruneRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.poolTimeout(t)
	b := w.oldSpike(t)
	web := w.session(t, w.web, "cli:web", "web pool", "the web pool too", "fixed")
	pruneOptions := func(ios *term.IOStreams) *PruneOptions {
		return &PruneOptions{IO: ios, Store: w.open, Project: func() (loom.Project, error) { return w.api, nil },
			Now: time.Now, User: "local", Age: "0s", Yes: true}
	}

	ios := piped()
	opts := pruneOptions(ios)
	opts.OlderThan, opts.Age = time.Hour, "1h"
	if err := pruneRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out, errOut := outputs(ios); out != "" || errOut != "No sessions older than 1h to prune.\n" {
		t.Errorf("--older-than 1h: %q, stderr %q", out, errOut)
	}

	ios = piped()
	opts = pruneOptions(ios)
	opts.DryRun, opts.JSON = true, true
	if err := pruneRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	rep := printedJSON[PruneReport](t, ios)
	if got := sortedIDs(rep.Removed...); !rep.DryRun || !slices.Equal(got, sortedIDs(a, b)) {
		t.Errorf("--dry-run --json: would remove %v, want %v", got, sortedIDs(a, b))
	}
	if w.trashed(t, a.ID) || w.trashed(t, b.ID) {
		t.Errorf("--dry-run pruned")
	}

	ios = piped()
	if err := pruneRun(t.Context(), pruneOptions(ios)); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(ios)
	if got := strings.Fields(out); !slices.Equal(sortedIDs(a, b), slices.Sorted(slices.Values(got))) {
		t.Errorf("prune printed %q, want the ids of %s and %s", out, a.ID, b.ID)
	}
	if !w.trashed(t, a.ID) || !w.trashed(t, b.ID) || w.trashed(t, web.ID) {
		t.Errorf("prune of api: api's in the trash %v %v, web's %v", w.trashed(t, a.ID), w.trashed(t, b.ID), w.trashed(t, web.ID))
	}
}

// delete, restore and prune fill their options from their flags, and
// refuse what they cannot do off a terminal without --yes.
func TestNewCmdSessionDeleteRestorePruneOptions(t *testing.T) {
	t.Parallel()
	del := cmdtest.Options(t, newCmdSessionDelete, "old experiment", "0196f00d", "-y", "--purge", "--force")
	if strings.Join(del.Refs, ",") != "old experiment,0196f00d" || !del.Yes || !del.Purge || !del.Force || del.Resolve == nil {
		t.Errorf("delete: %+v", del)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionDelete, "0196a3b2"), "--yes is required to delete when not on a terminal")
	refused(t, cmdtest.Rejects(t, newCmdSessionDelete, "--yes"), "missing arguments")

	if got := cmdtest.Options(t, newCmdSessionRestore, "flaky test"); got.Ref != "flaky test" || got.ResolveIn == nil {
		t.Errorf("restore: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionRestore), "name the session to bring back")

	prune := cmdtest.Options(t, newCmdSessionPrune, "--older-than", "1d12h", "--dry-run", "-a")
	if prune.OlderThan != 36*time.Hour || prune.Age != "1d12h" || !prune.DryRun || !prune.AllProjects || prune.Yes || prune.User != "local" {
		t.Errorf("prune: %+v", prune)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionPrune, "--dry-run"), "--older-than is required")
	refused(t, cmdtest.Rejects(t, newCmdSessionPrune, "--older-than", "soon", "--yes"), "--older-than: ")
	refused(t, cmdtest.Rejects(t, newCmdSessionPrune, "--older-than", "30d"), "--yes (or --dry-run) is required")
}
