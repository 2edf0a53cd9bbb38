package teamrun

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/team"
)

// sent is what a machine published, opened again.
type sent struct {
	recs []*Payload
}

// publishClient is one member's machine of a one-member team whose records
// are kept in memory instead of on a hub, over an SQLite store whose
// project "api" is shared.
func publishClient(t testing.TB) (*Client, *Verified, Stores, *sent) {
	t.Helper()
	ctx := context.Background()
	id, err := team.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	tid, _ := team.NewTeamID()
	b, ring, err := team.Create(tid, "core", "alice", "alice", id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	st, err := team.Verify(tid, id.Fingerprint(), [][]byte{b})
	if err != nil {
		t.Fatal(err)
	}
	own, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "own.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close() })
	out := &sent{}
	e := &Client{Local: Local{Dir: t.TempDir()}}
	e.put = func(ctx context.Context, _ string, recs []team.Record) error {
		for _, r := range recs {
			_, payload, err := team.OpenRecord(st, ring, r)
			if err != nil {
				return err
			}
			var p Payload
			if err := json.Unmarshal(payload, &p); err != nil {
				return err
			}
			out.recs = append(out.recs, &p)
		}
		return nil
	}
	s := &State{ID: tid, Name: "core", Me: "alice", Keys: ring, Shares: map[string]team.Project{"p1": {ID: "p1", Name: "api", Mode: team.ModeContent}},
		Sent: map[string]*Sent{}, Applied: map[string]int64{}}
	v := &Verified{State: st, Local: s, Me: id}
	return e, v, Stores{Own: own, User: "alice", Detector: secrets.Default()}, out
}

// openTeamStore opens the store where st keeps its teammates' sessions,
// as a member's machine does, closed when the test ends.
func openTeamStore(t testing.TB, st *Stores) *sqlite.Store {
	t.Helper()
	ts, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "team.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	st.Team = ts
	return ts
}

// session makes a session of n messages in the shared project.
func sessionData(id string, n int) *loom.SessionData {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	sd := &loom.SessionData{Session: &loom.Session{ID: id, Key: "cli:api:" + id[len(id)-6:], Title: "t " + id[len(id)-6:], UserID: "alice", Surface: "cli", Kind: "main",
		Project: loom.Project{ID: "p1", Name: "api"}, CreatedAt: at, UpdatedAt: at}}
	for i := 1; i <= n; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		sd.Messages = append(sd.Messages, &loom.Message{ID: fmt.Sprintf("01960000-0000-7000-8%s-%012d", id[len(id)-3:], i), SessionID: id, Seq: int64(i), Role: role, CreatedAt: at,
			Parts: []loom.Part{{ID: fmt.Sprintf("p%d", i), Type: "text", Text: fmt.Sprintf("message %d of the deploy of %s", i, id[:8])}}})
	}
	return sd
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("0196a3b2-1c4e-7d3f-9a2b-%012d", i+1)
	}
	return out
}

func TestPublishSendsWhatChanged(t *testing.T) {
	ctx := context.Background()
	e, v, st, out := publishClient(t)
	sid := ids(2)
	if err := st.Own.Import(ctx, []*loom.SessionData{sessionData(sid[0], 120), sessionData(sid[1], 4)}); err != nil {
		t.Fatal(err)
	}
	publish := func() (*Sync, []*Payload) {
		t.Helper()
		n := len(out.recs)
		res := &Sync{}
		if err := e.publish(ctx, v, st, res); err != nil {
			t.Fatal(err)
		}
		return res, out.recs[n:]
	}
	if res, recs := publish(); len(recs) != 2 || res.Sessions != 2 || res.Updated != 0 {
		t.Fatalf("the first sync: %+v, %d records", res, len(recs))
	}
	if res, recs := publish(); len(recs) != 0 || res.Sessions != 0 {
		t.Fatalf("a sync with nothing changed: %+v, %d records", res, len(recs))
	}
	// A part updated in message 73 (block 2 of 50) sends that block's
	// messages again, and nothing else.
	if err := st.Own.UpdatePart(ctx, sid[0], 73, loom.Part{ID: "p73", Type: "text", Text: "message 73, edited"}); err != nil {
		t.Fatal(err)
	}
	res, recs := publish()
	if len(recs) != 1 || res.Updated != 1 || recs[0].Op != "" || len(recs[0].Messages) != 50 || recs[0].Messages[0].Seq != 51 || recs[0].Messages[22].Parts[0].Text != "message 73, edited" {
		t.Fatalf("after a part update: %+v, %d records", res, len(recs))
	}
	// Usage set later, and a rename.
	if err := st.Own.UpdateUsage(ctx, sid[1], 2, loom.Usage{InputTokens: 10, OutputTokens: 5}); err != nil {
		t.Fatal(err)
	}
	title := "renamed"
	if _, err := st.Own.UpdateSession(ctx, sid[0], loom.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	res, recs = publish()
	if len(recs) != 2 || res.Updated != 2 {
		t.Fatalf("after a usage update and a rename: %+v, %d records", res, len(recs))
	}
	for _, r := range recs {
		switch r.Session.ID {
		case sid[0]:
			if r.Session.Title != "renamed" || len(r.Messages) != 0 {
				t.Fatalf("the rename's record: %q, %d messages", r.Session.Title, len(r.Messages))
			}
		case sid[1]:
			if len(r.Messages) != 4 || r.Messages[1].Usage.InputTokens != 10 {
				t.Fatalf("the usage update's record: %d messages", len(r.Messages))
			}
		}
	}
	// A secret the store holds goes through the gate before it is sent
	// again.
	secret := "ghp_" + "R8w2kQ7mZ1xV4nB6cT9yL3pD5sF0hJ2gA7eK"
	if err := st.Own.UpdatePart(ctx, sid[1], 3, loom.Part{ID: "p3", Type: "text", Text: "the token is " + secret}); err != nil {
		t.Fatal(err)
	}
	res, recs = publish()
	if len(recs) != 1 || res.Redacted == 0 {
		t.Fatalf("after a secret: %+v, %d records", res, len(recs))
	}
	if b, _ := json.Marshal(recs); strings.Contains(string(b), secret) {
		t.Fatal("a record sent after publish holds the secret")
	}
	// Deleted: a deletion, once.
	if _, err := st.Own.Delete(ctx, sid[1], loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, recs = publish()
	if len(recs) != 1 || recs[0].Op != OpDelete || recs[0].Session.ID != sid[1] || res.Deleted != 1 || len(recs[0].Messages) != 0 {
		t.Fatalf("after a deletion: %+v, %d records", res, len(recs))
	}
	if _, recs := publish(); len(recs) != 0 {
		t.Fatalf("the deletion sent again: %d records", len(recs))
	}
}

// BenchmarkPublishUnchanged is a sync's comparison of a shared project
// with what was sent of it when nothing changed: 200 sessions of 100
// messages.
func BenchmarkPublishUnchanged(b *testing.B) {
	ctx := context.Background()
	e, v, st, out := publishClient(b)
	var data []*loom.SessionData
	for _, id := range ids(200) {
		data = append(data, sessionData(id, 100))
	}
	if err := st.Own.Import(ctx, data); err != nil {
		b.Fatal(err)
	}
	if err := e.publish(ctx, v, st, &Sync{}); err != nil {
		b.Fatal(err)
	}
	n := len(out.recs)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.publish(ctx, v, st, &Sync{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if len(out.recs) != n {
		b.Fatalf("an unchanged project sent %d records", len(out.recs)-n)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/20000, "µs/message")
}

// TestApplyReplaceKeepsSubagents: a session sent whole again (after a
// rewind) replaces the teammate's copy, whose sub-agent sessions stay;
// a deletion removes the copy; another member's record of the same id
// changes nothing.
func TestApplyReplaceKeepsSubagents(t *testing.T) {
	ctx := context.Background()
	_, v, st, _ := publishClient(t)
	ts := openTeamStore(t, &st)
	sid := ids(2)
	parent, child := sessionData(sid[0], 6), sessionData(sid[1], 2)
	child.Session.Kind, child.Session.ParentID = loom.KindSubagent, sid[0]
	hd := &team.Header{Author: v.Me.Fingerprint()}
	applyPl := func(pl *Payload) bool {
		t.Helper()
		b, _ := json.Marshal(pl)
		changed, err := apply(ctx, st, v, hd, b)
		if err != nil {
			t.Fatal(err)
		}
		return changed
	}
	applyPl(Outgoing(team.ModeContent, parent.Session, parent.Messages))
	applyPl(Outgoing(team.ModeContent, child.Session, child.Messages))
	rewound := sessionData(sid[0], 2)
	rewound.Messages[1].Parts[0].Text = "taken back here"
	pl := Outgoing(team.ModeContent, rewound.Session, rewound.Messages)
	pl.Op = OpReplace
	if !applyPl(pl) {
		t.Fatal("a replace reported no change")
	}
	got, err := ts.Session(ctx, sid[0])
	if err != nil || got.MessageCount != 2 {
		t.Fatalf("the replaced copy: %v %+v", err, got)
	}
	msgs, _ := ts.Messages(ctx, sid[0], loom.MessageQuery{})
	if msgs[1].Parts[0].Text != "taken back here" {
		t.Fatalf("the replaced copy's text: %q", msgs[1].Parts[0].Text)
	}
	if c, err := ts.Session(ctx, sid[1]); err != nil || c.ParentID != sid[0] || c.MessageCount != 2 {
		t.Fatalf("the sub-agent session after the replace: %v %+v", err, c)
	}
	// Another member's record for this id is not applied: it is set
	// aside, saying whose the session is.
	other := &team.Header{Author: "nobody"}
	b, _ := json.Marshal(&Payload{Op: OpDelete, Session: &loom.Session{ID: sid[0], Key: "cli:x"}})
	v.Past["nobody"] = &team.Member{Name: "mallory"}
	if changed, err := apply(ctx, st, v, other, b); !recordsFault(err) || !strings.Contains(err.Error(), "is alice's: a record of mallory's does not change it") || changed {
		t.Fatalf("another member's deletion: %v %v", changed, err)
	}
	if _, err := ts.Session(ctx, sid[0]); err != nil {
		t.Fatalf("alice's session after mallory's deletion: %v", err)
	}
	if !applyPl(&Payload{Op: OpDelete, Session: &loom.Session{ID: sid[0], Key: "cli:x"}}) {
		t.Fatal("a deletion reported no change")
	}
	if _, err := ts.Session(ctx, sid[0]); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("the deleted copy: %v", err)
	}
}

// TestIdleSyncRedactsNothing: the secrets a sync reports redacted are
// those of what it sent: a sync that sends nothing reports none, though
// the session it compares holds a secret in its title and text.
func TestIdleSyncRedactsNothing(t *testing.T) {
	ctx := context.Background()
	e, v, st, out := publishClient(t)
	secret := secretstest.New(81).Secret("github-token")
	sd := sessionData(ids(1)[0], 2)
	sd.Session.Title = "deploy with " + secret.Text
	sd.Messages[0].Parts[0].Text = "use " + secret.Text
	if err := st.Own.Import(ctx, []*loom.SessionData{sd}); err != nil {
		t.Fatal(err)
	}
	first := &Sync{}
	if err := e.publish(ctx, v, st, first); err != nil {
		t.Fatal(err)
	}
	if len(out.recs) != 1 || first.Redacted == 0 || strings.Contains(out.recs[0].Session.Title, secret.Value) {
		t.Fatalf("the first sync: %+v", first)
	}
	idle := &Sync{}
	if err := e.publish(ctx, v, st, idle); err != nil {
		t.Fatal(err)
	}
	if len(out.recs) != 1 || idle.Redacted != 0 {
		t.Fatalf("an idle sync: %d records, %d secrets redacted", len(out.recs)-1, idle.Redacted)
	}
}
