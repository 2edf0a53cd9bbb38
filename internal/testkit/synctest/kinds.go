package synctest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/synclog"
)

// madeElsewhere are the kinds of record the walk of testEveryRecordKind
// does not make, each with the test of the suite (or of the engines)
// that makes it and sees it applied.
var madeElsewhere = map[synclog.Type]string{
	synclog.TypeFragment:     "EnableSyncSplitsLargeHistory (a record over the size a hub takes)",
	synclog.TypeRetired:      "SyncRehome (a host given up for a new id)",
	synclog.TypeOriginalKept: "the originals' tests of each engine that keeps them (conformance, syncrun)",
}

// KnownRecordKinds returns every kind of sync record this loom knows: the
// types that have a name.
func KnownRecordKinds() []synclog.Type {
	var out []synclog.Type
	for t := 1; t < 256; t++ {
		if k := synclog.Type(t); k.String() != fmt.Sprintf("type %d", t) {
			out = append(out, k)
		}
	}
	return out
}

// One walk of a session's life makes a record of each kind, with a
// secret in every text a kind carries, and each record goes through the
// places that decide by kind: the codec (a record decodes to what was
// encoded), applying (another machine then shows what the writer shows:
// the sessions' rows, messages, parts, usage, forks, trash and purge),
// and the redaction of `loom secrets redact` (no secret is left in any
// record, and the redacted records, applied, give the same sessions
// with the text redacted). A new kind of record fails here until the
// walk makes it or names the test that does, so that each switch on the
// kinds is looked at for it.
func testEveryRecordKind(t *testing.T, newStore Factory) {
	ctx := context.Background()
	a, b := pair(t, newStore)
	g := secretstest.New(70)
	var planted []string
	secret := func(kind string) string {
		s := g.Secret(kind)
		planted = append(planted, s.Value)
		return s.Text
	}

	walkEveryKind(t, ctx, a, secret)

	checkKindsAndCodec(t, a)

	// Applying: the other machine shows what the writer shows.
	recs := Pull(t, a, 0)
	ApplyAll(t, b, recs)
	view := SameView(t, a, b, "step", "purged")
	if len(view.Sessions) != 5 {
		t.Fatalf("%d sessions after applying, want the session, its fork, what its rewind moved out, the one in the trash and the import:\n%s", len(view.Sessions), DumpSessions(view.Sessions))
	}

	checkRedaction(t, newStore, recs, planted, view)
}

// walkEveryKind walks a session's life on a, making a record of each kind
// the walk makes, with a secret (from secret) in every text a kind
// carries.
func walkEveryKind(t *testing.T, ctx context.Context, a Store, secret func(kind string) string) {
	s := &loom.Session{UserID: "alice", Key: "cli:kinds", Title: "deploy " + secret("github-token")}
	Say(t, a, s, loom.RoleUser, "ship it with "+secret("aws-access-key"))
	call := loom.Part{Type: loom.PartTool, CallID: "c1", Name: "bash", Status: loom.ToolRunning, Input: json.RawMessage(`{"cmd":"env"}`)}
	a1 := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{call}}
	if err := a.Append(ctx, s, a1); err != nil {
		t.Fatal(err)
	}
	call = a1.Parts[0]
	out, _ := json.Marshal("TOKEN=" + secret("github-token"))
	call.Status, call.Output = loom.ToolCompleted, out
	if err := a.UpdatePart(ctx, s.ID, a1.Seq, call); err != nil {
		t.Fatal(err)
	}
	if err := a.UpdateUsage(ctx, s.ID, a1.Seq, loom.Usage{InputTokens: 70, OutputTokens: 7}); err != nil {
		t.Fatal(err)
	}
	Say(t, a, s, loom.RoleUser, "and the next step")
	Say(t, a, s, loom.RoleAssistant, "done")
	title := "deploy with " + secret("slack-token")
	if _, err := a.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	fork, err := a.Fork(ctx, s.ID, loom.ForkOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Rewind(ctx, s.ID, loom.RewindOptions{Turn: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Delete(ctx, fork.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Restore(ctx, fork.ID); err != nil {
		t.Fatal(err)
	}
	gone := &loom.Session{UserID: "alice", Key: "cli:gone"}
	Say(t, a, gone, loom.RoleUser, "soon purged")
	if _, err := a.Delete(ctx, gone.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	trashed := &loom.Session{UserID: "alice", Key: "cli:trashed"}
	Say(t, a, trashed, loom.RoleUser, "left in the trash")
	if _, err := a.Delete(ctx, trashed.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	now := loom.Now().UTC().Truncate(1e6)
	imp := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "alice", Kind: loom.KindMain, Title: "imported", CreatedAt: now, UpdatedAt: now,
		Source: &loom.Source{Tool: "claude", Path: "/kinds.jsonl"}},
		Messages: []*loom.Message{{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: now,
			Parts: []loom.Part{{ID: "p1", Type: loom.PartText, Text: "use " + secret("openai-api-key")}}}}}
	if err := a.Import(ctx, []*loom.SessionData{imp}); err != nil {
		t.Fatal(err)
	}
	// Read again once its agent wrote more: the times settle.
	done, active := now.Add(2e9), now.Add(3e9)
	settle := loom.ImportWrite{Changes: []loom.ImportChange{{SessionID: imp.Session.ID, Seq: 1,
		Settled: &loom.SettledTimes{CompletedAt: &done, UpdatedAt: &active}}}}
	if err := a.ApplyImport(ctx, &settle); err != nil {
		t.Fatal(err)
	}
}

// checkKindsAndCodec: a's log holds a record of every known kind (but
// those madeElsewhere), and each decodes to what was encoded.
func checkKindsAndCodec(t *testing.T, a Store) {
	log := SyncLog(t, a)
	made := map[synclog.Type]int{}
	for _, r := range log {
		made[r.Decoded.Type()]++
	}
	for _, k := range KnownRecordKinds() {
		if where, ok := madeElsewhere[k]; ok {
			if made[k] > 0 {
				t.Errorf("the walk made a %s record, which madeElsewhere says %s makes: take it out of madeElsewhere", k, where)
			}
			continue
		}
		if made[k] == 0 {
			t.Errorf("no %s record: a new kind of record; make one in this walk (or name the test that makes it in madeElsewhere), and look at every switch on the kinds for it (synclog's newPayload and Redact, sessionstore's applyChange, localIn, workedIn, touchedIn, madeIn, onCopy, rescueUnseen and Rehome)", k)
		}
	}

	// The codec: each record decodes to what was encoded.
	for _, r := range log {
		enc, err := synclog.Encode(r.Decoded)
		if err != nil {
			t.Fatalf("encode record %d (%s): %v", r.Index, r.Decoded.Type(), err)
		}
		dec, err := synclog.Decode(enc)
		if err != nil {
			t.Fatalf("decode record %d (%s): %v", r.Index, r.Decoded.Type(), err)
		}
		if !reflect.DeepEqual(dec, r.Decoded) {
			t.Errorf("record %d (%s) is not what it was after encoding and decoding:\n%s\n%s", r.Index, r.Decoded.Type(), mustJSON(r.Decoded), mustJSON(dec))
		}
	}
}

func checkRedaction(t *testing.T, newStore Factory, recs []Pulled, planted []string, view View) {
	// Redaction: no secret is left in any record, every kind that
	// carried one says it replaced it, and the redacted records applied
	// on a third machine give the same sessions and messages, redacted.
	d := secrets.Default()
	all := func(string) bool { return true }
	carried := map[synclog.Type]bool{}
	redacted := make([]Pulled, len(recs))
	for i, r := range recs {
		enc, err := synclog.Encode(r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		p, err := synclog.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		before := mustJSON(p)
		holds := secretstest.HoldsAny(before, planted) != ""
		did := synclog.Redact(p, d, all)
		if holds {
			carried[p.Type()] = true
		}
		if did != holds {
			t.Errorf("redacting record %d (%s), holding a secret %v: reported %v", r.Header.Index, p.Type(), holds, did)
		}
		if v := secretstest.HoldsAny(mustJSON(p), planted); v != "" {
			t.Errorf("record %d (%s) still holds %q after redaction", r.Header.Index, p.Type(), v)
		}
		redacted[i] = Pulled{r.Header, p}
	}
	for _, k := range []synclog.Type{synclog.TypeSessionCreated, synclog.TypeMessagesAppended, synclog.TypePartUpdated,
		synclog.TypeSessionChanged, synclog.TypeForked, synclog.TypeRewound, synclog.TypeImported} {
		if !carried[k] {
			t.Errorf("no %s record carried a secret: the walk no longer tries the redaction of that kind", k)
		}
	}
	c := Synced(t, newStore, loom.Now)
	ApplyAll(t, c, redacted)
	got := ViewOf(t, c)
	if v := secretstest.HoldsAny(mustJSON(got), planted); v != "" {
		t.Errorf("a machine that applied the redacted records holds %q", v)
	}
	if len(got.Sessions) != len(view.Sessions) {
		t.Fatalf("%d sessions from the redacted records, want %d:\n%s", len(got.Sessions), len(view.Sessions), DumpSessions(got.Sessions))
	}
	for i, s := range view.Sessions {
		r := got.Sessions[i]
		if r.ID != s.ID || r.Kind != s.Kind || r.ParentID != s.ParentID || r.MessageCount != s.MessageCount || (r.DeletedAt == nil) != (s.DeletedAt == nil) {
			t.Errorf("session %s from the redacted records differs beyond its text:\n%s\n%s", s.ID, mustJSON(r), mustJSON(s))
		}
		if len(got.Messages[s.ID]) != len(view.Messages[s.ID]) {
			t.Errorf("session %s: %d messages from the redacted records, want %d", s.ID, len(got.Messages[s.ID]), len(view.Messages[s.ID]))
		}
	}
}
