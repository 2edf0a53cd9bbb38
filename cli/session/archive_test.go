package session

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// Archive archives every session named, saying so a line each on a
// terminal, and none when a reference finds nothing; unarchive brings
// them back.
func TestSessionArchiveRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.poolTimeout(t)
	b := w.oldSpike(t)
	archiveOptions := func(archive bool, refs ...string) *ArchiveOptions {
		ios := terminal()
		sc := w.scope(ios)
		return &ArchiveOptions{StoredSessions: StoredSessions{IO: ios, Store: w.open, Resolve: sc.Resolve, DisplayID: sc.DisplayID}, Refs: refs, Archive: archive}
	}

	if err := archiveRun(t.Context(), archiveOptions(true, "pool timeout", "no such session")); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("archiving an unknown reference: %v, want ENOTFOUND", err)
	}
	if got := w.stored(t, a.ID); got.ArchivedAt != nil {
		t.Errorf("a reference that found nothing still archived %s", a.ID)
	}

	opts := archiveOptions(true, "pool timeout", b.ID)
	if err := archiveRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(opts.IO)
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "✓ Archived ") || !strings.HasSuffix(lines[0], ` "pool timeout"`) ||
		!strings.HasPrefix(lines[1], "✓ Archived ") {
		t.Errorf("archive:\n%s", out)
	}
	for _, s := range []*loom.Session{a, b} {
		if got := w.stored(t, s.ID); got.ArchivedAt == nil {
			t.Errorf("%s is not archived", s.ID)
		}
	}

	opts = archiveOptions(false, a.ID)
	opts.IO = piped()
	opts.JSON = true
	if err := archiveRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if got := printedJSON[[]*loom.Session](t, opts.IO); len(got) != 1 || got[0].ID != a.ID || got[0].ArchivedAt != nil {
		t.Errorf("unarchive --json: %+v", got)
	}
	if w.stored(t, a.ID).ArchivedAt != nil || w.stored(t, b.ID).ArchivedAt == nil {
		t.Errorf("unarchive %s changed the wrong sessions", a.ID)
	}
}

// archive and unarchive take references, at least one.
func TestNewCmdSessionArchiveOptions(t *testing.T) {
	t.Parallel()
	for _, archive := range []bool{true, false} {
		newCmd := func(inv *command.Invocation, runF func(*ArchiveOptions) error) *cobra.Command {
			return newCmdSessionArchive(inv, archive, runF)
		}
		got := cmdtest.Options(t, newCmd, "0196a3b2", "old spike")
		if got.Archive != archive || strings.Join(got.Refs, ",") != "0196a3b2,old spike" || got.Resolve == nil {
			t.Errorf("archive %v: options %+v", archive, got)
		}
		refused(t, cmdtest.Rejects(t, newCmd), "missing arguments")
	}
}
