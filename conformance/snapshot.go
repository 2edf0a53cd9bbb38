package conformance

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// ReadSessions returns sessions in the order asked, each with the window
// of its messages Messages would return, trashed sessions included and
// ids that name nothing left out.
func testReadSessions(t *testing.T, open Opener) {
	st := open(t)
	a, b := newSession("alice", "cli:a"), newSession("alice", "cli:b")
	for turn := 1; turn <= 3; turn++ {
		mustAppend(t, st, a, turnMessages(turn)...)
	}
	mustAppend(t, st, b, turnMessages(1)...)
	if _, err := st.Delete(ctx(t), b.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := st.ReadSessions(ctx(t), []string{b.ID, "no-such-session", a.ID}, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Session.ID != b.ID || got[1].Session.ID != a.ID {
		t.Fatalf("ReadSessions(b, missing, a) = %d sessions, want b then a", len(got))
	}
	if got[0].Session.DeletedAt == nil || len(got[0].Messages) != 2 {
		t.Fatalf("trashed session read as %+v with %d messages", got[0].Session, len(got[0].Messages))
	}
	jsonEqual(t, "a's messages", got[1].Messages, mustMessages(t, st, a.ID, loom.MessageQuery{}))
	got, err = st.ReadSessions(ctx(t), []string{a.ID}, loom.MessageQuery{Limit: 2, Before: 6})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Session.MessageCount != 6 {
		t.Fatalf("windowed read = %+v", got)
	}
	checkSeqs(t, got[0].Messages, 4)
	if len(got[0].Messages) != 2 {
		t.Fatalf("windowed read holds %d messages, want 2", len(got[0].Messages))
	}
	if got, err := st.ReadSessions(ctx(t), nil, loom.MessageQuery{}); err != nil || len(got) != 0 {
		t.Fatalf("ReadSessions(none) = %d, %v", len(got), err)
	}
}

// A session read with its messages while another handle rewinds it and
// appends to it again is seen before or after each change, never half
// way: its message and turn counts always match the messages read with
// it.
func testReadSessionsDuringRewind(t *testing.T, open Opener) {
	writer, reader := open(t), open(t)
	s := newSession("alice", "cli:api")
	for turn := 1; turn <= 3; turn++ {
		mustAppend(t, writer, s, turnMessages(turn)...)
	}
	c, cancel := context.WithTimeout(ctx(t), 1500*time.Millisecond)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string
		reads    int
		rewinds  int
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
		cancel()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c.Err() == nil {
			if _, err := writer.Rewind(c, s.ID, loom.RewindOptions{Turn: 1}); err != nil {
				if c.Err() == nil {
					fail("rewind: %v", err)
				}
				return
			}
			x, err := writer.Session(c, s.ID)
			if err == nil {
				err = writer.Append(c, x, append(turnMessages(2), turnMessages(3)...)...)
			}
			if err != nil {
				if c.Err() == nil {
					fail("append: %v", err)
				}
				return
			}
			mu.Lock()
			rewinds++
			mu.Unlock()
		}
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.Err() == nil {
				got, err := reader.ReadSessions(c, []string{s.ID}, loom.MessageQuery{})
				if err != nil {
					if c.Err() == nil {
						fail("read: %v", err)
					}
					return
				}
				if len(got) != 1 {
					fail("read %d sessions, want 1", len(got))
					return
				}
				x, msgs := got[0].Session, got[0].Messages
				turns := 0
				if len(msgs) > 0 {
					turns = msgs[len(msgs)-1].Turn
				}
				if len(msgs) != x.MessageCount || turns != x.TurnCount {
					fail("session says %d messages in %d turns, read with %d messages in %d turns", x.MessageCount, x.TurnCount, len(msgs), turns)
					return
				}
				for i, m := range msgs {
					if m.Seq != int64(i+1) {
						fail("message %d has seq %d", i, m.Seq)
						return
					}
				}
				mu.Lock()
				reads++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(problems) > 0 {
		t.Fatalf("after %d rewinds and %d reads: %v", rewinds, reads, problems)
	}
	if rewinds == 0 || reads == 0 {
		t.Fatalf("%d rewinds and %d reads: the test raced nothing", rewinds, reads)
	}
	t.Logf("%d rewinds, %d reads", rewinds, reads)
}
