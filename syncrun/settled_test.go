package syncrun_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/export"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/synclog"
	"github.com/loomhq/loom/syncrun"
)

// A session captured while its agent wrote it (an import after every
// line of a real Codex 0.39 rollout, testdata/agent-sessions) settles
// its times as the lines that complete a stored reply arrive, and the
// other machine sees them: after a sync, its export, times included,
// is the capturing machine's, which is a fresh import's of the whole
// file. The other machine syncs midway too, so the settled times reach
// messages and a session it held already.
func TestSettledTimesReachTheOtherMachine(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("../testdata/agent-sessions/codex/vibecodingtracker-codex.jsonl")
	if err != nil {
		t.Skip("no real session files here")
	}
	_, _, c := hubFor(t)
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	a, b := open(t, "a.db"), open(t, "b.db")
	if _, err := a.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	lines := strings.SplitAfter(string(data), "\n")
	for n := 1; n <= len(lines); n++ {
		if err := os.WriteFile(path, []byte(strings.Join(lines[:n], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		importertest.Import(t, a, codex.Format{}, path)
		if n%20 == 0 || n == len(lines) {
			for _, st := range []syncrun.Replica{a, b} {
				if _, err := syncrun.Sync(ctx, c, st, key); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// The capture settled both kinds of time, each in a record.
	log, err := a.SyncLog(ctx, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	completed, active := 0, 0
	for _, r := range log {
		p, err := synclog.Decode(r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := p.(*synclog.TimesSettled); ok {
			if s.CompletedAt != nil {
				completed++
			}
			if s.At != nil {
				active++
			}
		}
	}
	if completed == 0 || active == 0 {
		t.Errorf("%d records settle a message's completion and %d a session's activity, want some of each", completed, active)
	}
	fresh := open(t, "fresh.db")
	importertest.Import(t, fresh, codex.Format{}, path)
	want := exported(t, fresh)
	if got := exported(t, a); got != want {
		t.Fatalf("the capturing machine's export differs from a fresh import's:\n%s", firstDiff(got, want))
	}
	if got := exported(t, b); got != want {
		t.Errorf("the other machine's export differs from the capturing one's:\n%s", firstDiff(got, want))
	}
}

// exported is what loom session export --all --format jsonl writes of
// st's sessions of alice.
func exported(t *testing.T, st loom.Store) string {
	t.Helper()
	ctx := context.Background()
	all, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no sessions")
	}
	data, err := export.Load(ctx, st, export.Order(all))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := export.Write(&buf, export.JSONL, data); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// firstDiff shows where got first differs from want.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return "got  " + got[from:min(len(got), i+200)] + "\nwant " + want[from:min(len(want), i+200)]
}
