package syncrun_test

import (
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/internal/testkit/synctest"
	"github.com/loomhq/loom/sqlite"
)

// A store the previous version of loom wrote opens with this one and
// syncs on: testdata/store-8f30b07.db.gz was written by loom at 8f30b07,
// the commit before the engine's transaction was cut by role and the
// sync log became sessionstore's to build (two Claude Code sessions of
// ../shared/testdata/agent-sessions imported, sync set up and two
// records sent, then a rename, a fork, an archive and a trash not yet
// sent). Its log's records, written by that version, reach a new
// machine, which ends with the same sessions; a change made there comes
// back.
func TestStoreOfThePreviousVersionSyncs(t *testing.T) {
	ctx := context.Background()
	_, _, c := hubFor(t)
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "previous.db")
	gunzip(t, filepath.Join("testdata", "store-8f30b07.db.gz"), path)
	old, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { old.Close() })
	host, err := old.SyncHost(ctx)
	if err != nil || host == "" {
		t.Fatalf("the previous version's store has no host: %q, %v", host, err)
	}
	if res := syncOnce(t, c, old, key); res.Pushed != 6 {
		t.Fatalf("the previous version's store sent %d records, want its log's 6", res.Pushed)
	}
	b := open(t, "b.db")
	syncOnce(t, c, b, key)
	want := synctest.StateOf(t, old, "local")
	if got := synctest.StateOf(t, b, "local"); got != want {
		t.Fatalf("the new machine holds:\n%s\nthe previous version's store:\n%s", got, want)
	}
	for _, s := range []string{`"renamed before the cut"`, " fork parent=", "archived=true", "trash=true"} {
		if !strings.Contains(want, s) {
			t.Errorf("the sessions lack %s:\n%s", s, want)
		}
	}
	list, err := b.Sessions(ctx, loom.SessionFilter{UserID: "local", Archived: loom.WithArchived})
	if err != nil || len(list) == 0 {
		t.Fatalf("the new machine lists %d sessions of user local: %v", len(list), err)
	}
	title := "renamed on the new machine"
	if _, err := b.UpdateSession(ctx, list[0].ID, loom.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, c, b, key)
	syncOnce(t, c, old, key)
	if got, want := synctest.StateOf(t, old, "local"), synctest.StateOf(t, b, "local"); got != want || !strings.Contains(got, title) {
		t.Fatalf("after the new machine's change the stores differ:\n%s\n---\n%s", got, want)
	}
}

// gunzip writes the gzip file src, uncompressed, to dst.
func gunzip(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
