package synctest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// concurrentPair runs action a on machine A and b on B, then syncs the
// machines order names (C takes part when named) in two rounds.
func concurrentPair(t *testing.T, net Network, a, b, order string) {
	ctx := context.Background()
	newStore, c := net(t)
	ms := map[byte]Store{}
	late := map[byte]time.Duration{}
	for _, name := range []byte("ABC") {
		if name == 'C' && !strings.Contains(order, "C") {
			continue
		}
		// Every machine lives 9 days ago, until the actions are done:
		// then 9 days pass, and the trash of a machine that empties
		// it is old.
		late[name] = -9 * 24 * time.Hour
		st := newStore(t, func() time.Time { return time.Now().Add(late[name]) })
		if _, err := st.EnableSync(ctx); err != nil {
			t.Fatal(err)
		}
		ms[name] = st
	}
	sync := func(name byte) {
		t.Helper()
		if _, err := c(ctx, ms[name]); err != nil {
			t.Fatalf("%c: sync: %v", name, err)
		}
	}
	all := []byte("AB")
	if ms['C'] != nil {
		all = append(all, 'C')
	}
	s := sessionOnEvery(t, ctx, ms, all, a, b, sync)
	// The actions, neither machine having seen the other's.
	for i, act := range []string{a, b} {
		name := []byte("AB")[i]
		if act == "empty trash" {
			late[name] = 0
		}
		if err := doAction(ctx, ms[name], s.ID, act, name); err != nil {
			t.Skipf("%s on %c: %v (not an action this state allows)", act, name, err)
		}
	}
	for _, name := range all {
		late[name] = 0
	}
	// What every machine holds now: the prompts that must not be lost.
	held := map[string]bool{}
	for _, name := range all {
		for _, p := range prompts(t, ms[name]) {
			held[p] = true
		}
	}
	// One sync of each machine after both actions have reached the hub:
	// the machines in order, then again those that synced before the
	// last of A and B to sync. A machine that purged S makes the copy
	// of a turn its purge had not seen, which it applies in that sync,
	// as the turn's machine does when it applies the purge (rescueID).
	last := max(strings.IndexByte(order, 'A'), strings.IndexByte(order, 'B'))
	for _, name := range []byte(order + order[:last]) {
		sync(name)
	}
	if rescuesLater(a, b) {
		// A copy of a restore, rename, archive, fork or rewind reaches
		// the purging machine in its next sync.
		for _, name := range []byte(order) {
			sync(name)
		}
	}
	views := samePairViews(t, ms, all, a, b)
	nothingLost(t, ms, all, a, b, held, views)
}

// sessionOnEvery writes S, two turns, on A and syncs it to every machine
// of all, in the trash where action a or b needs it there.
func sessionOnEvery(t *testing.T, ctx context.Context, ms map[byte]Store, all []byte, a, b string, sync func(name byte)) *loom.Session {
	// S, two turns, on every machine.
	s := &loom.Session{UserID: "alice", Key: "cli:s", Title: "S"}
	for i := range 2 {
		for _, role := range []string{loom.RoleUser, loom.RoleAssistant} {
			if err := ms['A'].Append(ctx, s, &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprintf("%s %d of S", role, i)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	trashed := slices.Contains([]string{a, b}, "restore") || slices.Contains([]string{a, b}, "empty trash")
	if trashed {
		// A restore, or a purge of old trash, needs S in the trash:
		// deleted on A, everywhere.
		if _, err := ms['A'].Delete(ctx, s.ID, loom.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		for _, name := range all {
			sync(name)
		}
	}
	return s
}

// samePairViews checks that every machine of all shows what A shows, and
// that the rows the docs name for a on A and b on B come to what they say;
// it returns each machine's view.
func samePairViews(t *testing.T, ms map[byte]Store, all []byte, a, b string) map[byte]string {
	views := map[byte]string{}
	for _, name := range all {
		views[name] = stateOf(t, ms[name])
		if views[name] != views['A'] {
			t.Fatalf("after the syncs, A and %c differ:\nA:\n%s\n%c:\n%s", name, views['A'], name, views[name])
		}
	}
	// What the rows the docs name come to.
	for _, w := range []struct {
		a, b, want string
	}{
		{"archive", "prune", `"S" main parent= archived=true trash=false`},
		{"archive", "delete", `"S" main parent= archived=true trash=false`},
		{"archive", "purge", `copy "S (recovered)" main parent= archived=true trash=false`},
		{"purge", "restore", `copy "S (recovered)" main parent= archived=false trash=false`},
		{"empty trash", "restore", `copy "S (recovered)" main parent= archived=false trash=false`},
		{"purge", "rename", `copy "S renamed on B (recovered)"`},
		{"append", "purge", `copy "S (recovered)"`},
		{"fork", "purge", `copy "fork on A (recovered)"`},
		{"purge", "rewind", `copy "S (rewound) (recovered)"`},
	} {
		if w.a == a && w.b == b && !strings.Contains(views['A'], w.want) {
			t.Fatalf("%s on A and %s on B: want %s, have\n%s", a, b, w.want, views['A'])
		}
	}
	return views
}

// nothingLost checks that no machine lost a prompt of held, unless a and b
// are both final and one of them purges.
func nothingLost(t *testing.T, ms map[byte]Store, all []byte, a, b string, held map[string]bool, views map[byte]string) {
	final := []string{"delete", "prune", "purge", "empty trash"}
	mayLose := (slices.Contains([]string{a, b}, "purge") || slices.Contains([]string{a, b}, "empty trash")) &&
		slices.Contains(final, a) && slices.Contains(final, b)
	if mayLose {
		return
	}
	for _, name := range all {
		got := prompts(t, ms[name])
		for p := range held {
			if !slices.Contains(got, p) {
				t.Fatalf("%c lost the prompt %q:\n%s", name, p, views[name])
			}
		}
	}
}

// rescuesLater reports whether actions a and b are a purge and a change
// that the purging machine, applying it after its purge, does not copy
// itself: its copy comes from the other machine, a sync later.
func rescuesLater(a, b string) bool {
	purge := func(x string) bool { return x == "purge" || x == "empty trash" }
	later := func(x string) bool {
		return slices.Contains([]string{"restore", "rename", "archive", "fork", "rewind"}, x)
	}
	return purge(a) && later(b) || purge(b) && later(a)
}

// doAction does act on session id in st, as machine name.
func doAction(ctx context.Context, st Store, id, act string, name byte) error {
	switch act {
	case "append":
		s, err := st.Session(ctx, id)
		if err != nil {
			return err
		}
		for _, role := range []string{loom.RoleUser, loom.RoleAssistant} {
			if err := st.Append(ctx, s, &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprintf("%s on %c", role, name)}}}); err != nil {
				return err
			}
		}
		return nil
	case "delete":
		_, err := st.Delete(ctx, id, loom.DeleteOptions{})
		return err
	case "purge":
		_, err := st.Delete(ctx, id, loom.DeleteOptions{Purge: true})
		return err
	case "restore":
		return st.Restore(ctx, id)
	case "empty trash":
		// Any delete or prune empties the trash of what is older than
		// loom.TrashTTL; this one prunes nothing else.
		if _, err := st.Prune(ctx, loom.PruneOptions{UserID: "alice", OlderThan: 365 * 24 * time.Hour}); err != nil {
			return err
		}
		if _, err := st.Session(ctx, id); loom.ErrorCode(err) != loom.ENOTFOUND {
			return fmt.Errorf("the trash kept S: %v", err)
		}
		return nil
	case "archive":
		yes := true
		_, err := st.UpdateSession(ctx, id, loom.SessionUpdate{Archived: &yes})
		return err
	case "prune":
		res, err := st.Prune(ctx, loom.PruneOptions{UserID: "alice"})
		if err == nil && len(res.Removed) == 0 {
			err = fmt.Errorf("prune took nothing")
		}
		return err
	case "rename":
		title := fmt.Sprintf("S renamed on %c", name)
		_, err := st.UpdateSession(ctx, id, loom.SessionUpdate{Title: &title})
		return err
	case "rewind":
		_, err := st.Rewind(ctx, id, loom.RewindOptions{Turn: 1})
		return err
	case "fork":
		_, err := st.Fork(ctx, id, loom.ForkOptions{Title: fmt.Sprintf("fork on %c", name)})
		return err
	}
	return fmt.Errorf("no action %s", act)
}
