package sessionstore_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// A fork made on one machine is the same fork on another: its row as
// made, reading its parent's messages up to where it was made, though the
// parent grew and changed since; a fork of a parent not here yet waits.
func TestMemApplySyncForks(t *testing.T) {
	ctx := context.Background()
	a, b, c := clockedPair(t)
	s := &loom.Session{UserID: "alice", Model: "sonnet"}
	say(t, a, s, loom.RoleUser, "first zebra")
	say(t, a, s, loom.RoleAssistant, "first answer")
	say(t, a, s, loom.RoleUser, "second zebra")
	ai, bi := exchange(t, a, b, 0, 0, false)
	c.tick()
	fork, err := a.Fork(ctx, s.ID, loom.ForkOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.tick()
	model := "opus"
	if _, err := b.UpdateSession(ctx, s.ID, loom.SessionUpdate{Model: &model}); err != nil {
		t.Fatal(err)
	}
	cur, _ := b.Session(ctx, s.ID)
	say(t, b, cur, loom.RoleAssistant, "second answer")
	exchange(t, a, b, ai, bi, true)
	v := sameView(t, a, b)
	if len(v.Messages[fork.ID]) != 2 || len(v.Messages[s.ID]) != 4 {
		t.Fatalf("the fork holds %d messages and its parent %d; want 2 and 4", len(v.Messages[fork.ID]), len(v.Messages[s.ID]))
	}
	f, _ := b.Session(ctx, fork.ID)
	if f.Model != "sonnet" || f.ParentID != s.ID || f.Kind != loom.KindFork {
		t.Fatalf("fork on b: model %q, parent %s, kind %s", f.Model, f.ParentID, f.Kind)
	}

	var forked pulled
	for _, r := range pull(t, a, 0) {
		if r.p.Type() == synclog.TypeForked {
			forked = r
		}
	}
	orphan := *forked.p.(*synclog.Forked)
	row := *orphan.Session
	row.ID, row.ParentID = loom.NewID(), loom.NewID()
	orphan.Session = &row
	h := synclog.Header{Host: synclog.NewHostID(), Index: 1, HLC: forked.h.HLC, KeyID: forked.h.KeyID}
	if err := b.ApplySync(ctx, h, &orphan); !errors.Is(err, sessionstore.ErrWaits) {
		t.Fatalf("a fork of a session not here: %v, want ErrSyncWaits", err)
	}
}

// A rewind made on one machine is the same rewind on another: the
// session keeps its first turns and writes on under the same store, the
// later turns are in a fork with the same id and title, and counters and
// usage split the same way; turns either machine adds after it follow on
// both.
func TestMemApplySyncRewinds(t *testing.T) {
	ctx := context.Background()
	a, b, c := clockedPair(t)
	s := &loom.Session{UserID: "alice", Title: "plan"}
	for i, text := range []string{"first zebra", "second zebra", "third zebra"} {
		c.tick()
		say(t, a, s, loom.RoleUser, text)
		answer := &loom.Message{Role: loom.RoleAssistant, Usage: loom.Usage{InputTokens: 10 * int64(i+1), OutputTokens: int64(i + 1), APICalls: 1},
			Parts: []loom.Part{{Type: loom.PartText, Text: "answer " + text}}}
		if err := a.Append(ctx, s, answer); err != nil {
			t.Fatal(err)
		}
	}
	ai, bi := exchange(t, a, b, 0, 0, false)
	c.tick()
	fork, err := a.Rewind(ctx, s.ID, loom.RewindOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.tick()
	cur, _ := a.Session(ctx, s.ID)
	say(t, a, cur, loom.RoleUser, "a new second giraffe")
	recs := pull(t, a, ai)
	applyAll(t, b, recs)
	v := sameView(t, a, b)
	if len(v.Messages[s.ID]) != 3 || len(v.Messages[fork.ID]) != 6 {
		t.Fatalf("the session holds %d messages and the fork %d; want 3 and 6", len(v.Messages[s.ID]), len(v.Messages[fork.ID]))
	}
	f, _ := b.Session(ctx, fork.ID)
	if f.Title != "plan (rewound)" || f.ParentID != s.ID || f.Usage.InputTokens != 50 {
		t.Fatalf("fork on b: title %q, parent %s, input tokens %d; want plan (rewound), %s, 50", f.Title, f.ParentID, f.Usage.InputTokens, s.ID)
	}
	applyAll(t, b, recs)
	if got := viewOf(t, b); !reflect.DeepEqual(got, v) {
		t.Fatal("applying the records again changed the store")
	}

	// B writes on in the rewound session: A applies it where B wrote it.
	c.tick()
	cur, _ = b.Session(ctx, s.ID)
	say(t, b, cur, loom.RoleAssistant, "a giraffe answer")
	exchange(t, a, b, ai+int64(len(recs)), bi, false)
	if v := sameView(t, a, b); len(v.Messages[s.ID]) != 4 {
		t.Fatalf("the session holds %d messages, want 4", len(v.Messages[s.ID]))
	}
}
