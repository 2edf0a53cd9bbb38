package conformance

import (
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// testSettledTimes: an import that reads again a file whose agent wrote
// more settles the times of what it stored (loom.SettledTimes): a
// message's completion and the session's last activity take the later
// times a reading of the whole file gives, in one transaction with the
// rest of the import, and never move back, so that a reading of less of
// the file, or a change made in loom since, is not undone.
func testSettledTimes(t *testing.T, open Opener) {
	st := open(t)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	x := newSession("alice", "codex:settle")
	x.Source = &loom.Source{Tool: "codex", Path: "/p/settle"}
	x.CreatedAt, x.UpdatedAt = at, at.Add(time.Minute)
	prompt, reply := text(loom.RoleUser, "run the tests"), text(loom.RoleAssistant, "running them")
	first := at.Add(time.Minute)
	prompt.ID, prompt.Seq, prompt.CreatedAt, prompt.CompletedAt, prompt.Parts[0].ID = "u1", 1, at, &at, "u1/0"
	reply.ID, reply.Seq, reply.CreatedAt, reply.CompletedAt, reply.Parts[0].ID = "a1", 2, at.Add(time.Minute), &first, "a1/0"
	if err := st.Import(ctx(t), []*loom.SessionData{{Session: x, Messages: []*loom.Message{prompt, reply}}}); err != nil {
		t.Fatal(err)
	}
	times := func() (done time.Time, active time.Time) {
		t.Helper()
		msgs, err := st.Messages(ctx(t), x.ID, loom.MessageQuery{})
		if err != nil || len(msgs) != 2 || msgs[1].CompletedAt == nil {
			t.Fatalf("messages %v, %v", msgs, err)
		}
		s, err := st.Session(ctx(t), x.ID)
		if err != nil {
			t.Fatal(err)
		}
		return *msgs[1].CompletedAt, s.UpdatedAt
	}
	settle := func(done, active *time.Time) {
		t.Helper()
		w := &loom.ImportWrite{Changes: []loom.ImportChange{{SessionID: x.ID, Seq: 2, Settled: &loom.SettledTimes{CompletedAt: done, UpdatedAt: active}}}}
		if err := st.ApplyImport(ctx(t), w); err != nil {
			t.Fatal(err)
		}
	}

	// The tool's result came four minutes later: both times move.
	done, active := at.Add(4*time.Minute+123*time.Millisecond), at.Add(5*time.Minute)
	settle(&done, &active)
	if d, u := times(); !d.Equal(done) || !u.Equal(active) {
		t.Fatalf("after settling: completed %v, updated %v; want %v, %v", d, u, done, active)
	}
	// Earlier times (a reading of less of the file) move nothing.
	before, earlier := at.Add(2*time.Minute), at.Add(3*time.Minute)
	settle(&before, &earlier)
	if d, u := times(); !d.Equal(done) || !u.Equal(active) {
		t.Errorf("settled back: completed %v, updated %v; want %v, %v", d, u, done, active)
	}
	// The session's time alone, as when a line completes no message.
	last := at.Add(6 * time.Minute)
	w := &loom.ImportWrite{Changes: []loom.ImportChange{{SessionID: x.ID, Settled: &loom.SettledTimes{UpdatedAt: &last}}}}
	if err := st.ApplyImport(ctx(t), w); err != nil {
		t.Fatal(err)
	}
	if d, u := times(); !d.Equal(done) || !u.Equal(last) {
		t.Errorf("after settling the session: completed %v, updated %v; want %v, %v", d, u, done, last)
	}
	// A message the session does not hold, or a change of nothing, is
	// refused, and the batch with it is not written.
	bad := &loom.ImportWrite{Changes: []loom.ImportChange{
		{SessionID: x.ID, Settled: &loom.SettledTimes{UpdatedAt: &last}},
		{SessionID: x.ID, Seq: 9, Settled: &loom.SettledTimes{CompletedAt: &last}}}}
	wantCode(t, st.ApplyImport(ctx(t), bad), loom.ENOTFOUND)
	wantCode(t, st.ApplyImport(ctx(t), &loom.ImportWrite{Changes: []loom.ImportChange{{SessionID: x.ID, Settled: &loom.SettledTimes{}}}}), loom.EINVALID)
}
