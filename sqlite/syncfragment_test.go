package sqlite_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/synctest"
	"github.com/loomhq/loom/synclog"
)

// A message too large for one record (a pasted log of random text that
// compresses to more than the hub takes) is written as fragments of one
// stamp, and applies whole on the other store once the last arrives,
// also when they arrive over several pulls.
func TestSyncFragments(t *testing.T) {
	ctx := context.Background()
	a, b := syncPair(t)
	raw := make([]byte, 18<<20)
	rand.Read(raw)
	paste := base64.StdEncoding.EncodeToString(raw) // 24 MiB, ~18 MiB compressed
	s := &loom.Session{UserID: "alice", Key: "cli:paste"}
	if err := a.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: paste}}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, s, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "that is a long log"}}}); err != nil {
		t.Fatal(err)
	}
	recs := synctest.Pull(t, a, 0)
	frags := 0
	for _, r := range recs {
		if f, ok := r.Payload.(*synclog.Fragment); ok {
			frags++
			if len(f.Data) > synclog.FragmentSize || f.Of < 2 {
				t.Fatalf("fragment %d of %d of %d bytes", f.Part, f.Of, len(f.Data))
			}
		} else if b, err := synclog.Encode(r.Payload); err != nil || len(b) > synclog.MaxRecord {
			t.Fatalf("record %d (%s) is %d bytes, %v", r.Header.Index, r.Payload.Type(), len(b), err)
		}
	}
	if frags < 2 {
		t.Fatalf("%d fragments in %d records", frags, len(recs))
	}
	// The records are the session made, the first message's fragments
	// and the second message. Up to the first fragment, the session is
	// there without messages.
	synctest.ApplyAll(t, b, recs[:2])
	if ss, _ := b.Sessions(ctx, loom.SessionFilter{UserID: "alice"}); len(ss) != 1 || ss[0].MessageCount != 0 {
		t.Fatalf("after the first fragment: %+v", ss)
	}
	synctest.ApplyAll(t, b, recs[2:])
	got, err := b.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil || len(got) != 2 || got[0].Text() != paste || got[1].Text() != "that is a long log" {
		t.Fatalf("b holds %d messages, %v", len(got), err)
	}
}
