package synctest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Hub syncs a machine's store once with the hub that one test's
// machines share, as syncrun.Sync does (the store's sync set up), and
// returns how many records it pushed.
type Hub func(ctx context.Context, st Store) (pushed int, err error)

// Network returns, for one test, how to make its machines' stores and
// the hub they sync through.
type Network func(t *testing.T) (Factory, Hub)

// RunConcurrent runs the tests of machines acting on one session at
// once and then syncing (the table of docs/sync.md, and the purge's
// races) over the machines and hubs net makes.
func RunConcurrent(t *testing.T, net Network) {
	tests := []struct {
		name string
		fn   func(t *testing.T, net Network)
	}{
		{"ConcurrentActions", testConcurrentActions},
		{"ForkThenRewind", testForkThenRewind},
		{"RescueLeavesWithItsSync", testRescueLeavesWithItsSync},
		{"PurgeRacingAnAppendOneRound", testPurgeRacingAnAppendOneRound},
		{"PurgeRacingAToolCall", testPurgeRacingAToolCall},
		{"PurgeKeptUntilItsSync", testPurgeKeptUntilItsSync},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, net) })
	}
}

// syncOnce sets sync up on st the first time, then syncs it with c, as
// syncrun.Once does, and returns how many records it pushed.
func syncOnce(t *testing.T, c Hub, st Store) int {
	t.Helper()
	ctx := context.Background()
	if _, err := st.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	pushed, err := c(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return pushed
}

// What two machines' concurrent actions on one session come to (the
// table in docs/sync.md, "Two machines act on one session at once"): a
// session S of two turns that every machine holds; machine A does one
// action and machine B another before either syncs; then they sync, in
// one order and in the other, with a third machine C that only syncs, or
// without it. After the syncs the table names (one sync of each machine
// after both actions have reached the hub), every machine holds the same sessions, in the same state, with
// the same messages; and no prompt any machine stored is lost, unless a
// machine purged it having seen it and nobody else did anything with the
// session but delete, prune or purge it too.
func testConcurrentActions(t *testing.T, net Network) {
	actions := []string{"append", "delete", "purge", "restore", "archive", "prune", "rename", "rewind", "fork", "empty trash"}
	for _, a := range actions {
		for _, b := range actions {
			if b < a {
				continue // the table is symmetric: (b, a) is (a, b) with the machines' names swapped
			}
			t.Run(a+" vs "+b, func(t *testing.T) {
				t.Parallel()
				for _, order := range []string{"AB", "BA", "ABC", "CBA"} {
					t.Run(order, func(t *testing.T) { concurrentPair(t, net, a, b, order) })
				}
			})
		}
	}
}

// One machine forks S and then rewinds it before the fork: the fork
// follows the turns the rewind moves, on that machine as on the others.
func testForkThenRewind(t *testing.T, net Network) {
	ctx := context.Background()
	newStore, c := net(t)
	a, b := newStore(t, loom.Now), newStore(t, loom.Now)
	for _, st := range []Store{a, b} {
		if _, err := st.EnableSync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := &loom.Session{UserID: "alice", Key: "cli:s", Title: "S"}
	for i := range 4 {
		if err := a.Append(ctx, s, &loom.Message{Role: []string{loom.RoleUser, loom.RoleAssistant}[i%2], Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprint("message ", i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := doAction(ctx, a, s.ID, "fork", 'A'); err != nil {
		t.Fatal(err)
	}
	if err := doAction(ctx, a, s.ID, "rewind", 'A'); err != nil {
		t.Fatal(err)
	}
	for _, st := range []Store{a, b, a} {
		if _, err := c(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	va, vb := stateOf(t, a), stateOf(t, b)
	rewound := ""
	for _, l := range strings.Split(va, "\n") {
		if id, rest, _ := strings.Cut(l, " "); strings.HasPrefix(rest, `"S (rewound)" `) {
			rewound = id
		}
	}
	if va != vb || rewound == "" || !strings.Contains(va, `"fork on A" fork parent=`+rewound+" ") {
		t.Fatalf("the machines differ, or the fork did not follow the rewound turns to %q:\n%s\n---\n%s", rewound, va, vb)
	}
}

// A purge on one machine while another appends: the sync that applies
// the purge on the appending machine makes the rescued copy and sends it
// at once, so it survives that machine being lost right after.
func testRescueLeavesWithItsSync(t *testing.T, net Network) {
	ctx, c, a, b, late, s := purgeRace(t, net, "the first prompt")
	syncOnce(t, c, a)
	if err := doAction(ctx, b, s.ID, "append", 'B'); err != nil {
		t.Fatal(err)
	}
	if pushed := syncOnce(t, c, b); pushed < 2 {
		t.Fatalf("B's sync sent %d records: its turn, then the copy it rescued, were due", pushed)
	}
	// B is lost: it syncs no more.
	syncOnce(t, c, late)
	got := prompts(t, late)
	slices.Sort(got)
	if !slices.Equal(got, []string{"the first prompt", "user on B"}) || !strings.Contains(stateOf(t, late), `"S (recovered)"`) {
		t.Fatalf("a machine that joins after B is lost holds %q:\n%s", got, stateOf(t, late))
	}
}

// A purge on A races an append on B, and B syncs first: B, A, B, then
// a new machine C, each syncing once after the other's action has
// reached the hub (B's first sync is the one that sends its turn). A
// applies B's turn after its own purge, which had not seen it: it makes
// the copy B makes when it applies the purge, under the same id, so
// every machine ends with one "S (recovered)" holding B's turn, A
// without syncing again.
func testPurgeRacingAnAppendOneRound(t *testing.T, net Network) {
	ctx, c, a, b, late, s := purgeRace(t, net, "user 0 of S", "assistant 0 of S", "user 1 of S", "assistant 1 of S")
	if err := doAction(ctx, b, s.ID, "append", 'B'); err != nil {
		t.Fatal(err)
	}
	for _, st := range []Store{b, a, b, late} {
		syncOnce(t, c, st)
	}
	want := []string{"user 0 of S", "user 1 of S", "user on B"}
	views := map[string]string{}
	for name, st := range map[string]Store{"A": a, "B": b, "C": late} {
		views[name] = stateOf(t, st)
		got := prompts(t, st)
		slices.Sort(got)
		if !slices.Equal(got, want) || strings.Count(views[name], `"S (recovered)"`) != 1 {
			t.Fatalf("%s holds the prompts %q, want %q in one \"S (recovered)\":\n%s", name, got, want, views[name])
		}
	}
	if views["A"] != views["C"] || views["B"] != views["C"] {
		t.Fatalf("the machines differ:\nA:\n%s\nB:\n%s\nC:\n%s", views["A"], views["B"], views["C"])
	}
}

// A purge on A races a tool call on B that finishes after A has made
// the copy of B's turn: the tool's result reaches that copy on every
// machine, whichever copy of the turn a machine got first.
func testPurgeRacingAToolCall(t *testing.T, net Network) {
	ctx, c, a, b, late, s := purgeRace(t, net, "list files")
	call := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c1", Name: "bash", Status: loom.ToolRunning, Input: json.RawMessage(`{"cmd":"ls"}`)}}}
	onB, err := b.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append(ctx, onB, call); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, c, b)
	syncOnce(t, c, a) // A makes the copy, the call running
	done := call.Parts[0]
	done.Status, done.Output = loom.ToolCompleted, json.RawMessage(`"README.md"`)
	if err := b.UpdatePart(ctx, s.ID, call.Seq, done); err != nil {
		t.Fatal(err)
	}
	for _, st := range []Store{b, late, a} {
		syncOnce(t, c, st)
	}
	for name, st := range map[string]Store{"A": a, "B": b, "C": late} {
		var status []string
		for _, x := range sessionsOf(t, st) {
			msgs, err := st.Messages(ctx, x.ID, loom.MessageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				for _, p := range m.Parts {
					if p.Type == loom.PartTool {
						status = append(status, fmt.Sprintf("%q: %s", x.Title, p.Status))
					}
				}
			}
		}
		if want := []string{`"S (recovered)": ` + string(loom.ToolCompleted)}; !slices.Equal(status, want) {
			t.Fatalf("%s holds the tool call as %q, want %q:\n%s", name, status, want, stateOf(t, st))
		}
	}
}

// A purge keeps what it took until the sync that sends it has pulled,
// and no longer, and not at all for a session longer than a record
// holds: of three sessions purged, one before a sync and two after, one
// of them of 1,001 messages, the store keeps the second's messages
// alone.
func testPurgeKeptUntilItsSync(t *testing.T, net Network) {
	ctx, c, a, _, _, _ := purgeRace(t, net, "the first session's prompt")
	syncOnce(t, c, a)
	mark, err := a.SyncLast(ctx) // the first purge's index and before
	if err != nil {
		t.Fatal(err)
	}
	s := &loom.Session{UserID: "alice", Key: "cli:second", Title: "second"}
	if err := a.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "the second session's prompt"}}}); err != nil {
		t.Fatal(err)
	}
	if err := doAction(ctx, a, s.ID, "purge", 'A'); err != nil {
		t.Fatal(err)
	}
	// A session longer than a record holds is not kept: what a purge
	// keeps is bounded.
	long := &loom.Session{UserID: "alice", Key: "cli:long", Title: "long"}
	msgs := make([]*loom.Message, 1001)
	for i := range msgs {
		msgs[i] = &loom.Message{Role: []string{loom.RoleUser, loom.RoleAssistant}[i%2], Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprint("message ", i)}}}
	}
	if err := a.Append(ctx, long, msgs...); err != nil {
		t.Fatal(err)
	}
	if err := doAction(ctx, a, long.ID, "purge", 'A'); err != nil {
		t.Fatal(err)
	}
	if n, err := a.SyncForgetPurged(ctx, mark); err != nil || n != 0 {
		t.Fatalf("the store still kept %d sessions' messages of the purges its sync sent (%v)", n, err)
	}
	if n, err := a.SyncForgetPurged(ctx, math.MaxInt64); err != nil || n != 1 {
		t.Fatalf("the store kept %d purged sessions' messages (%v), want the second's alone: the sync lets the first's go, and the long one is not kept", n, err)
	}
}

// purgeRace starts a hub and three machines, a and b with sync set up
// and holding session S of texts (a user's and an assistant's messages
// in turn), and late none; then a purges S.
func purgeRace(t *testing.T, net Network, texts ...string) (context.Context, Hub, Store, Store, Store, *loom.Session) {
	t.Helper()
	ctx := context.Background()
	newStore, c := net(t)
	a, b, late := newStore(t, loom.Now), newStore(t, loom.Now), newStore(t, loom.Now)
	s := &loom.Session{UserID: "alice", Key: "cli:s", Title: "S"}
	for i, text := range texts {
		role := []string{loom.RoleUser, loom.RoleAssistant}[i%2]
		if err := a.Append(ctx, s, &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	syncOnce(t, c, a)
	syncOnce(t, c, b)
	if err := doAction(ctx, a, s.ID, "purge", 'A'); err != nil {
		t.Fatal(err)
	}
	return ctx, c, a, b, late, s
}

// prompts returns the text of every user message st holds, in any
// session, the trash's and the archive's included.
func prompts(t *testing.T, st Store) []string {
	t.Helper()
	var out []string
	for _, s := range sessionsOf(t, st) {
		msgs, err := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.Role == loom.RoleUser {
				out = append(out, m.Text())
			}
		}
	}
	return out
}

// sessionsOf returns every session of user alice in st, live, archived
// and in the trash.
func sessionsOf(t *testing.T, st Store) []*loom.Session {
	return sessionsOfUser(t, st, "alice")
}

// sessionsOfUser returns every session of user in st, live, archived
// and in the trash.
func sessionsOfUser(t *testing.T, st Store, user string) []*loom.Session {
	t.Helper()
	var out []*loom.Session
	for _, deleted := range []bool{false, true} {
		ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: user, Archived: loom.WithArchived, Deleted: deleted})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ss...)
	}
	return out
}

// stateOf returns every session of st as it shows to user alice
// (StateOf).
func stateOf(t *testing.T, st Store) string {
	return StateOf(t, st, "alice")
}

// StateOf returns every session of user in st as it shows to the user:
// its title, kind, parent, whether it is archived or in the trash, and
// its messages, sorted by id. Two machines that agree return the same.
func StateOf(t *testing.T, st Store, user string) string {
	t.Helper()
	var lines []string
	for _, s := range sessionsOfUser(t, st, user) {
		msgs, err := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, m := range msgs {
			texts = append(texts, m.Text())
		}
		id := s.ID
		if strings.HasSuffix(s.Title, "(recovered)") {
			id = "copy" // a rescued copy's id is new on the host that made it, the same everywhere after
		}
		lines = append(lines, fmt.Sprintf("%s %q %s parent=%s archived=%v trash=%v %d messages %d turns updated %s: %s", id, s.Title, s.Kind, s.ParentID,
			s.ArchivedAt != nil, s.DeletedAt != nil, s.MessageCount, s.TurnCount, s.UpdatedAt.Format(time.RFC3339Nano), strings.Join(texts, " | ")))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
