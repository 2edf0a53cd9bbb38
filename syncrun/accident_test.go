package syncrun_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/syncrun"
)

// machine is one machine's store in a random history: its file, open.
type machine struct {
	name, path string
	st         *sqlite.Store
}

func (m *machine) open(t *testing.T) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), m.path)
	if err != nil {
		t.Fatal(err)
	}
	m.st = st
}

// Random histories of machines that append turns and sync at random,
// with the accidents of users among them: a store restored from a backup
// taken earlier, and a store copied to a new machine that goes on beside
// the first. Whatever the order, once every machine has synced until
// nothing moves, they all hold the same sessions with the same messages,
// and every message that reached the hub, or that a store still held, is
// on every machine: nothing a user could have seen elsewhere is lost.
func TestAccidentsConverge(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 4
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { accidentHistory(t, uint64(seed)) })
	}
}

func accidentHistory(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 41))
	_, _, c := hubFor(t)
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var ms []*machine
	add := func(path string) *machine {
		m := &machine{name: fmt.Sprintf("m%d", len(ms)), path: path}
		m.open(t)
		if _, err := m.st.EnableSync(ctx); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
		return m
	}
	for range 2 {
		add(filepath.Join(dir, fmt.Sprintf("m%d.db", len(ms))))
	}
	t.Cleanup(func() {
		for _, m := range ms {
			m.st.Close()
		}
	})
	// safe is every message that reached the hub or that a store holds
	// at the end: the ones that must be everywhere.
	sent := map[string]bool{}
	said := map[*machine][]string{} // message ids a machine wrote, in order
	rehomes := 0
	syncOne := func(m *machine) {
		t.Helper()
		res, err := syncrun.Sync(ctx, c, m.st, key)
		if err != nil {
			t.Fatalf("%s: sync: %v", m.name, err)
		}
		if res.Rehomed != nil {
			rehomes++
		}
		for _, id := range said[m] {
			sent[id] = true
		}
	}
	backups := map[*machine]string{}
	n, restores, copies := 0, 0, 0
	for step := range 40 {
		m := ms[rng.IntN(len(ms))]
		switch r := rng.IntN(10); {
		case r < 5: // a turn in one of a few sessions
			k := rng.IntN(3)
			s := &loom.Session{UserID: "alice", Key: fmt.Sprintf("cli:%s-%d", m.name, k)}
			if got, err := m.st.Resolve(ctx, s.Key, loom.ResolveScope{UserID: "alice"}); err == nil {
				s = got
			}
			n++
			msg := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprintf("turn %d on %s at step %d", n, m.name, step)}}}
			if err := m.st.Append(ctx, s, msg); err != nil {
				t.Fatal(err)
			}
			said[m] = append(said[m], msg.ID)
		case r < 8:
			syncOne(m)
		case r < 9: // a backup now, or a restore of the last one
			m.st.Close()
			if b, ok := backups[m]; ok && rng.IntN(2) == 0 {
				storetest.CopyClosed(t, b, m.path)
				delete(backups, m)
				restores++
				said[m] = nil // what it wrote since is gone with the restore, unless sent
			} else {
				backups[m] = fmt.Sprintf("%s.backup%d", m.path, step)
				storetest.CopyClosed(t, m.path, backups[m])
			}
			m.open(t)
		default: // the store copied to a new machine, both used
			if len(ms) == 4 {
				continue
			}
			m.st.Close()
			path := filepath.Join(dir, fmt.Sprintf("m%d.db", len(ms)))
			storetest.CopyClosed(t, m.path, path)
			m.open(t)
			add(path)
			copies++
		}
	}
	// Every machine syncs until a round moves nothing.
	for round := 0; ; round++ {
		if round == 10 {
			t.Fatal("the machines do not settle in 10 rounds")
		}
		moved := false
		for _, m := range ms {
			res, err := syncrun.Sync(ctx, c, m.st, key)
			if err != nil {
				t.Fatalf("%s: final sync: %v", m.name, err)
			}
			moved = moved || res.Pushed+res.Pulled > 0 || res.Rehomed != nil
			if res.Rehomed != nil {
				rehomes++
			}
		}
		if !moved {
			break
		}
	}
	t.Logf("%d turns, %d restores, %d copies, %d new hosts", n, restores, copies, rehomes)
	views := make([]string, len(ms))
	for i, m := range ms {
		views[i] = viewOf(t, m.st, sent)
		if i > 0 && views[i] != views[0] {
			t.Fatalf("seed %d: %s and %s differ:\n%s\n---\n%s", seed, ms[0].name, m.name, views[0], views[i])
		}
	}
}

// viewOf returns every session of st with its messages' ids, sorted,
// failing when a message of want is in none of them.
func viewOf(t *testing.T, st *sqlite.Store, want map[string]bool) string {
	t.Helper()
	ctx := context.Background()
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	var lines []string
	for _, s := range ss {
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range msgs {
			ids = append(ids, m.ID)
			held[m.ID] = true
		}
		lines = append(lines, fmt.Sprintf("%s %s %s: %s", s.ID, s.Key, s.Kind, strings.Join(ids, " ")))
	}
	for id := range want {
		if !held[id] {
			t.Fatalf("message %s reached the hub and is not here:\n%s", id, strings.Join(lines, "\n"))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
