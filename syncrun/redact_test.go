package syncrun_test

import (
	"context"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/synclog"
)

// redactLog rewrites st's sync log as loom secrets redact does, for
// every session, and returns how many rows it rewrote.
func redactLog(t *testing.T, st *sqlite.Store) int {
	t.Helper()
	d := secrets.Default()
	n, err := st.RedactLog(context.Background(), func(payloads [][]byte) ([][]byte, error) {
		return synclog.RedactEncoded(payloads, d, func(string) bool { return true })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// logHolds reports whether a record of st's own log holds text.
func logHolds(t *testing.T, st *sqlite.Store, text string) bool {
	t.Helper()
	recs, err := st.SyncLog(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		p, err := synclog.Decode(r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(messagesText(p), text) {
			return true
		}
	}
	return false
}

func messagesText(p synclog.Payload) string {
	var b strings.Builder
	switch p := p.(type) {
	case *synclog.MessagesAppended:
		for _, m := range p.Messages {
			b.WriteString(m.Text())
		}
	case *synclog.Imported:
		for _, sd := range p.Sessions {
			for _, m := range sd.Messages {
				b.WriteString(m.Text())
			}
		}
	}
	return b.String()
}

// A host whose log loom secrets redact rewrote (records the hub holds
// already, and one it does not) syncs on under its own host: it takes
// the hub's copies of the records rewritten as its own, sends the one
// not sent redacted, and neither rehomes nor reports junk. When the hub
// is lost, the new hub gets the records again from either machine (the
// other machine's kept copies are the originals, sealed): whichever
// sends first, both sync on, and a machine that joins gets every
// session.
func TestRedactedLogSyncsOn(t *testing.T) {
	ctx := context.Background()
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "AKIAQYLPMN5HHHFPZAM7"
	for _, first := range []string{"A", "B"} {
		t.Run("after a lost hub "+first+" syncs first", func(t *testing.T) {
			_, _, c := hubFor(t)
			a, b := open(t, "a.db"), open(t, "b.db")
			s := &loom.Session{UserID: "alice", Key: "cli:api"}
			say := func(text string) {
				t.Helper()
				if err := a.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}); err != nil {
					t.Fatal(err)
				}
			}
			say("the key is " + secret)
			say("and again " + secret)
			syncOnce(t, c, a, key)
			syncOnce(t, c, b, key)
			say("once more " + secret) // not sent yet

			if n := redactLog(t, a); n != 2 {
				t.Fatalf("rewrote %d records, want 2: the import sync was set up with, and the append after", n)
			}
			if logHolds(t, a, secret) {
				t.Fatal("the log still holds the secret")
			}
			if n := redactLog(t, a); n != 0 {
				t.Errorf("a second rewrite rewrote %d records", n)
			}
			res := syncOnce(t, c, a, key)
			if res.Rehomed != nil || res.Pushed != 1 {
				t.Fatalf("A's sync after the rewrite: %+v", res)
			}
			syncOnce(t, c, b, key)
			msgs, err := b.Messages(ctx, s.ID, loom.MessageQuery{})
			if err != nil || len(msgs) != 3 || strings.Contains(msgs[2].Text(), secret) || !strings.Contains(msgs[2].Text(), "[REDACTED:aws-access-key]") {
				t.Fatalf("B holds %d messages, the last %q, %v: want the one sent after the rewrite redacted", len(msgs), msgs[len(msgs)-1].Text(), err)
			}

			// The hub is lost: a fresh one.
			_, _, c2 := hubFor(t)
			order := []*sqlite.Store{a, b}
			if first == "B" {
				order = []*sqlite.Store{b, a}
			}
			for range 2 {
				for _, st := range order {
					if res := syncOnce(t, c2, st, key); res.Rehomed != nil {
						t.Fatalf("a sync after the hub was lost rehomed: %+v", res)
					}
				}
			}
			joined := open(t, "c.db")
			syncOnce(t, c2, joined, key)
			if msgs, err := joined.Messages(ctx, s.ID, loom.MessageQuery{}); err != nil || len(msgs) != 3 {
				t.Fatalf("a machine that joined holds %d messages, %v", len(msgs), err)
			}
			say("after the new hub")
			if res := syncOnce(t, c2, a, key); res.Rehomed != nil || res.Pushed != 1 {
				t.Fatalf("A's next sync: %+v", res)
			}
			if res := syncOnce(t, c2, joined, key); res.Pulled != 1 {
				t.Fatalf("the joined machine's next sync: %+v", res)
			}
		})
	}
}
