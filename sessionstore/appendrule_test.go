package sessionstore

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// appendOf returns an append record of messages with ids ids from seq
// first on, after message prev.
func appendOf(first int64, prev string, ids ...string) *synclog.MessagesAppended {
	p := &synclog.MessagesAppended{SessionID: sessionID, FirstSeq: first, PrevID: prev, At: t0}
	for i, id := range ids {
		p.Messages = append(p.Messages, &loom.Message{ID: id, Seq: first + int64(i)})
	}
	return p
}

func TestPlanAppend(t *testing.T) {
	sa, sb := stampAt(10, hostA), stampAt(20, hostB)
	e := func(id string, s synclog.Stamp) Entry { return Entry{ID: id, Stamp: s} }
	for _, tc := range []struct {
		name string
		w    AppendWindow
		s    synclog.Stamp
		rec  *synclog.MessagesAppended
		want Plan
	}{
		{"a new session's first messages", AppendWindow{}, sa, appendOf(1, "", "m1", "m2"),
			Plan{Action: appendAfter}},
		{"after the last message", AppendWindow{Count: 2, Prev: "m2"}, sa, appendOf(3, "m2", "m3"),
			Plan{Action: appendAfter}},
		{"again: nothing to do", AppendWindow{Count: 3, Prev: "m2", Next: []Entry{e("m3", sa)}}, sa, appendOf(3, "m2", "m3"),
			Plan{Action: Applied, Skip: 1}},
		{"partly there", AppendWindow{Count: 3, Prev: "m2", Next: []Entry{e("m3", sa)}}, sa, appendOf(3, "m2", "m3", "m4"),
			Plan{Action: appendAfter, Skip: 1}},
		{"the message it follows is not here yet", AppendWindow{Count: 1}, sb, appendOf(3, "m2", "b3"),
			Plan{Action: Elsewhere}},
		{"it follows another message here", AppendWindow{Count: 4, Prev: "x2"}, sb, appendOf(3, "m2", "b3"),
			Plan{Action: Elsewhere}},
		{"concurrent append, the one here came first", AppendWindow{Count: 3, Prev: "m2", Next: []Entry{e("a3", sa)}}, sb, appendOf(3, "m2", "b3", "b4"),
			Plan{Action: ForkIncoming, At: 3, Fork: conflictForkID("b3", 3, sb)}},
		{"concurrent append, the incoming came first", AppendWindow{Count: 4, Prev: "m2", Next: []Entry{e("b3", sb), e("b4", sb)}}, sa, appendOf(3, "m2", "a3"),
			Plan{Action: MoveLocal, At: 3, Fork: conflictForkID("b3", 3, sb)}},
		{"diverging after a message both have", AppendWindow{Count: 4, Prev: "m2", Next: []Entry{e("m3", sa), e("b4", sb)}}, sa, appendOf(3, "m2", "m3", "a4"),
			Plan{Action: MoveLocal, Skip: 1, At: 4, Fork: conflictForkID("b4", 4, sb)}},
		{"the same stamp: the lower id first", AppendWindow{Count: 3, Prev: "m2", Next: []Entry{e("x3", sa)}}, sa, appendOf(3, "m2", "w3"),
			Plan{Action: MoveLocal, At: 3, Fork: conflictForkID("x3", 3, sa)}},
		{"a first message where the session has one", AppendWindow{Count: 1, Next: []Entry{e("a1", sa)}}, sb, appendOf(1, "", "b1"),
			Plan{Action: ForkIncoming, At: 1, Fork: conflictForkID("b1", 1, sb)}},
	} {
		if got := PlanAppend(tc.w, tc.s, tc.rec); got != tc.want {
			t.Errorf("%s: PlanAppend = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// Conflict fork ids are loom ids, the same on every host, sorted by the
// time of the record they come from, and different for different
// messages.
func TestConflictForkID(t *testing.T) {
	s := stampAt(5, hostA)
	id := conflictForkID("m3", 3, s)
	if err := loom.ValidID(id); err != nil {
		t.Fatal(err)
	}
	if again := conflictForkID("m3", 3, s); again != id {
		t.Fatalf("%s then %s", id, again)
	}
	u := uuid.MustParse(id)
	if u.Version() != 7 || u.Variant() != uuid.RFC4122 {
		t.Errorf("version %d variant %v", u.Version(), u.Variant())
	}
	sec, nsec := u.Time().UnixTime()
	if got := time.Unix(sec, nsec).UTC(); !got.Equal(s.HLC.Wall()) {
		t.Errorf("id time %s, want %s", got, s.HLC.Wall())
	}
	seen := map[string]bool{id: true}
	for _, other := range []string{conflictForkID("m4", 3, s), conflictForkID("m3", 4, s),
		conflictForkID("m3", 3, stampAt(6, hostA)), conflictForkID("m3", 3, stampAt(5, hostB))} {
		if seen[other] {
			t.Errorf("two forks share id %s", other)
		}
		seen[other] = true
	}
	if later := conflictForkID("m3", 3, stampAt(1000, hostA)); later <= id {
		t.Errorf("a later fork's id %s sorts before %s", later, id)
	}
	// Each machine makes the fork itself: machines on different versions
	// must give it the id earlier versions gave.
	old := synclog.Stamp{HLC: synclog.HLC(1770802200000<<16 | 7), Host: "h1"}
	if got, want := conflictForkID("b3", 3, old), "019c4c09-3dc0-71b7-9853-bda708ef3ce9"; got != want {
		t.Errorf("ConflictForkID = %s, earlier versions gave %s", got, want)
	}
}

func TestNewerPart(t *testing.T) {
	tool := func(status, errText string) loom.Part {
		return loom.Part{ID: "p", Type: loom.PartTool, CallID: "c", Name: "read_file", Status: status, Error: errText}
	}
	running, done, failed := tool(loom.ToolRunning, ""), tool(loom.ToolCompleted, ""), tool(loom.ToolError, "exit status 1")
	interrupted := tool(loom.ToolError, loom.Interrupted)
	early, late := stampAt(1, hostA), stampAt(2, hostB)
	for _, tc := range []struct {
		name      string
		cur, next loom.Part
		cs, ns    synclog.Stamp
		want      bool
	}{
		{"a later running update", running, running, early, late, true},
		{"an earlier update", done, done, late, early, false},
		{"the result after running", running, done, early, late, true},
		{"the result, stamped before a repair", interrupted, done, late, early, true},
		{"a repair after the result", done, interrupted, early, late, false},
		{"a tool's own error after a repair", interrupted, failed, early, late, true},
		{"a repair over a running call", running, interrupted, late, early, true},
		{"running never hides a result", done, running, early, late, false},
		{"text: the later wins", loom.Part{Type: loom.PartText}, loom.Part{Type: loom.PartText}, early, late, true},
	} {
		if got := newerPart(tc.cur, tc.cs, tc.next, tc.ns); got != tc.want {
			t.Errorf("%s: NewerPart = %v", tc.name, got)
		}
	}
}

func TestActionString(t *testing.T) {
	if got := MoveLocal.String(); got != "move local" {
		t.Errorf("String = %q", got)
	}
	if got := Action(0).String(); got != "action 0" {
		t.Errorf("String = %q", got)
	}
}
