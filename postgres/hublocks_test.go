package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/postgres"
)

// Two stores on one schema are two hub processes: a user's push places
// are counted over both; a store that goes away (as a killed process's
// connections do) gives its places back; another schema's users are
// apart; a user's lock makes the other process wait until it is given
// back.
func TestHubLocksAcrossProcesses(t *testing.T) {
	dsn := freshSchema(t)
	a, b := open(t, dsn), openOwn(t, dsn)
	other := open(t, freshSchema(t))
	ctx := context.Background()

	take := func(st *postgres.Store, user string) (func(), bool) {
		t.Helper()
		rel, ok, err := st.TakePush(ctx, "sync", user, 2)
		if err != nil {
			t.Fatal(err)
		}
		return rel, ok
	}
	relA, ok1 := take(a, "alice")
	relB, ok2 := take(b, "alice")
	if !ok1 || !ok2 {
		t.Fatal("alice's two places, one on each process, were refused")
	}
	if _, ok := take(a, "alice"); ok {
		t.Fatal("a third push of alice's was let in: the places are counted per process")
	}
	if rel, ok := take(b, "bob"); !ok {
		t.Fatal("bob was refused for alice's pushes")
	} else {
		rel()
	}
	if rel, ok := take(other, "alice"); !ok {
		t.Fatal("alice of another schema was refused for this one's")
	} else {
		rel()
	}
	if rel, ok, err := a.TakePush(ctx, "team", "alice", 2); err != nil || !ok {
		t.Fatalf("alice's team push was refused for her sync pushes: %v", err)
	} else {
		rel()
	}
	relA()
	relA() // a second release is nothing
	rel3, ok := take(a, "alice")
	if !ok {
		t.Fatal("a place given back was not free again")
	}
	// b's connection goes away holding a place, as a killed process's
	// does: the place is free at once.
	_, pool := server(t)
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks,
		(SELECT hashtextextended('loom hub ' || $1 || ' push sync 1 alice', 0)) AS k (h)
		WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND classid::bigint = (k.h >> 32) & 4294967295 AND objid::bigint = k.h & 4294967295`, schemaOf(t, dsn)); err != nil {
		t.Fatal(err)
	}
	rel4, ok := take(a, "alice")
	for !ok {
		// The server frees a terminated backend's locks as it exits.
		time.Sleep(20 * time.Millisecond)
		rel4, ok = take(a, "alice")
	}
	relB() // on a connection that is gone: nothing to give back
	rel3()
	rel4()

	// A user's lock: b2 waits on a's until a gives it back.
	b2 := openOwn(t, dsn)
	unlock, err := a.LockUser(ctx, "sync key", "carol")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := b2.LockUser(ctx, "sync key", "carol")
		if err == nil {
			u()
		}
		got <- err
	}()
	for !waitsOn(t, dsn, "user sync key carol") {
		select {
		case err := <-got:
			t.Fatalf("the second process took carol's lock while the first held it (%v)", err)
		default:
		}
		time.Sleep(20 * time.Millisecond)
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// A wait cut by its context gives up with an error.
	unlock, _ = a.LockUser(ctx, "sync key", "carol")
	defer unlock()
	cut, cancel := context.WithCancel(ctx)
	go func() {
		for !waitsOn(t, dsn, "user sync key carol") {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	if _, err := b2.LockUser(cut, "sync key", "carol"); err == nil {
		t.Fatal("a lock wait whose context ended took the lock")
	}
}

// openOwn opens a store on dsn that the test closes itself (or at its
// end).
func openOwn(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// waitsOn reports whether a connection waits for the hub lock name of
// dsn's schema.
func waitsOn(t *testing.T, dsn, name string) bool {
	_, pool := server(t)
	var waiting bool
	if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_locks,
		(SELECT hashtextextended('loom hub ' || $1 || ' ' || $2, 0)) AS k (h)
		WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
		AND classid::bigint = (k.h >> 32) & 4294967295 AND objid::bigint = k.h & 4294967295)`,
		schemaOf(t, dsn), name).Scan(&waiting); err != nil {
		t.Error(err)
		return true
	}
	return waiting
}

// schemaOf is the schema of a URL freshSchema made.
func schemaOf(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("search_path")
}

// A team's writers with their last indexes, read off the index, are
// those the counting read finds, whatever order the records came in.
func TestTeamLasts(t *testing.T) {
	st := open(t, freshSchema(t))
	ctx := context.Background()
	var recs []loom.SyncRecord
	for h, n := range map[string]int64{"b-host": 3, "a-host": 1, "c-host": 7} {
		for i := n; i >= 1; i-- {
			recs = append(recs, loom.SyncRecord{Host: h, Index: i, Epoch: 1, Header: []byte("h"), Body: []byte("sealed")})
		}
	}
	if _, err := st.PutTeamRecords(ctx, "t1", recs); err != nil {
		t.Fatal(err)
	}
	st.PutTeamRecords(ctx, "t2", []loom.SyncRecord{{Host: "z-host", Index: 9, Epoch: 1, Header: []byte("h"), Body: []byte("x")}})
	counted, err := st.TeamHosts(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	lasts, err := st.TeamLasts(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(lasts) != 3 || len(counted) != 3 {
		t.Fatalf("writers: %+v, counted %+v", lasts, counted)
	}
	for i := range lasts {
		if lasts[i].Host != counted[i].Host || lasts[i].Last != counted[i].Last || lasts[i].Records != 0 {
			t.Fatalf("writer %d: %+v, counted %+v", i, lasts[i], counted[i])
		}
	}
	if none, err := st.TeamLasts(ctx, "t3"); err != nil || len(none) != 0 {
		t.Fatalf("a team without records: %+v %v", none, err)
	}
}

// A team's session tags keep their first owner, a key's heads only move
// forward, and a refused claim files nothing; a claim filed before is
// no change.
func TestClaimTeamRecords(t *testing.T) {
	st := open(t, freshSchema(t))
	ctx := context.Background()
	alice := loom.TeamClaim{Index: 1, Session: "s1", Owner: "alice", Author: "alice-desk", Seq: 5}
	if err := st.ClaimTeamRecords(ctx, "t1", []loom.TeamClaim{alice, {Index: 2, Session: "s2", Owner: "alice", Author: "alice-laptop", Seq: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := st.ClaimTeamRecords(ctx, "t1", []loom.TeamClaim{alice}); err != nil {
		t.Fatalf("a claim filed again: %v", err)
	}
	var ce *loom.TeamClaimError
	bob := loom.TeamClaim{Index: 1, Session: "s1", Owner: "bob", Author: "bob-desk", Seq: 9}
	if err := st.ClaimTeamRecords(ctx, "t1", []loom.TeamClaim{bob}); !errors.As(err, &ce) || ce.Owner != "alice" {
		t.Fatalf("bob's claim of alice's session: %v", err)
	}
	// Refused, bob's claim filed neither his head nor anything else.
	if err := st.ClaimTeamRecords(ctx, "t1", []loom.TeamClaim{{Index: 2, Session: "s3", Owner: "bob", Author: "bob-desk", Seq: 1}}); err != nil {
		t.Fatalf("bob's head after a refused claim: %v", err)
	}
	back := loom.TeamClaim{Index: 3, Session: "s4", Owner: "alice", Author: "alice-desk", Seq: 4}
	if err := st.ClaimTeamRecords(ctx, "t1", []loom.TeamClaim{back}); !errors.As(err, &ce) || ce.Owner != "" || ce.Prior != 5 {
		t.Fatalf("a head older than the key's: %v", err)
	}
	if err := st.ClaimTeamRecords(ctx, "t1", []loom.TeamClaim{{Index: 3, Session: "s4", Owner: "bob", Author: "bob-desk", Seq: 2}}); err != nil {
		t.Fatalf("s4 after alice's refused claim of it: %v", err)
	}
	// Another team's tags are its own.
	if err := st.ClaimTeamRecords(ctx, "t2", []loom.TeamClaim{bob}); err != nil {
		t.Fatalf("another team's session s1: %v", err)
	}
	// A claim its session's first record proves (the hub read it) is
	// filed over the row: s4 is alice's again, and bob's claim refused.
	proven := loom.TeamClaim{Index: 4, Session: "s4", Owner: "alice", Author: "alice-desk", Seq: 6, Proven: true}
	if err := st.ClaimTeamRecords(ctx, "t1", []loom.TeamClaim{proven}); err != nil {
		t.Fatalf("a proven claim over another's row: %v", err)
	}
	if err := st.ClaimTeamRecords(ctx, "t1", []loom.TeamClaim{{Index: 3, Session: "s4", Owner: "bob", Author: "bob-desk", Seq: 2}}); !errors.As(err, &ce) || ce.Owner != "alice" {
		t.Fatalf("bob's claim of s4 after alice's proven claim: %v", err)
	}
}

// A team's records by the session tag their header names, first
// received first: a header naming none, or another team's, is not one.
func TestTeamSessionRecords(t *testing.T) {
	st := open(t, freshSchema(t))
	ctx := context.Background()
	tag := strings.Repeat("ab", 16)
	rec := func(host string, idx int64, session string) loom.SyncRecord {
		return loom.SyncRecord{Host: host, Index: idx, Epoch: 1, Header: []byte(`{"team":"t1","host":"` + host + `","index":1,"epoch":1,"author":"a","session":"` + session + `"}`), Body: []byte("b")}
	}
	for _, put := range [][]loom.SyncRecord{{rec("w2", 1, tag), rec("w2", 2, "")}, {rec("w1", 1, tag), rec("w1", 2, strings.Repeat("cd", 16))}} {
		if _, err := st.PutTeamRecords(ctx, "t1", put); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.PutTeamRecords(ctx, "t2", []loom.SyncRecord{rec("w0", 1, tag)}); err != nil {
		t.Fatal(err)
	}
	got, err := st.TeamSessionRecords(ctx, "t1", tag, 8)
	if err != nil || len(got) != 2 || got[0].Host != "w2" || got[1].Host != "w1" {
		t.Fatalf("records of the tag: %+v %v", got, err)
	}
	if got, err := st.TeamSessionRecords(ctx, "t1", tag, 1); err != nil || len(got) != 1 || got[0].Host != "w2" {
		t.Fatalf("the first record of the tag: %+v %v", got, err)
	}
}

// A team writer's sums are loom.TeamRecordSum of each record as the
// table holds it: a row the operator edits by hand sums anew, one he
// deletes is gone from them, and their digest tells both apart.
func TestTeamSums(t *testing.T) {
	dsn := freshSchema(t)
	st := open(t, dsn)
	ctx := context.Background()
	var recs []loom.SyncRecord
	for i := int64(1); i <= 4; i++ {
		recs = append(recs, loom.SyncRecord{Host: "w", Index: i, Epoch: 1, Header: []byte(fmt.Sprintf("h%d", i)), Body: []byte(fmt.Sprintf("sealed %d", i))})
	}
	st.PutTeamRecords(ctx, "t1", append(recs, loom.SyncRecord{Host: "other", Index: 1, Epoch: 1, Header: []byte("h"), Body: []byte("x")}))
	want := make([]loom.TeamSum, len(recs))
	for i, r := range recs {
		want[i] = loom.TeamSum{Index: r.Index, Sum: loom.TeamRecordSum(r.Header, r.Body)}
	}
	sums := func(after int64) []loom.TeamSum {
		t.Helper()
		got, err := st.TeamSums(ctx, "t1", "w", after)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := sums(0); loom.TeamSumsDigest(got) != loom.TeamSumsDigest(want) {
		t.Fatalf("sums %x, want %x", got, want)
	}
	if got := sums(2); len(got) != 2 || got[0].Index != 3 || loom.TeamSumsDigest(got) != loom.TeamSumsDigest(want[2:]) {
		t.Fatalf("sums after 2: %x", got)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// The same bytes, one moved from the body to the header.
	if _, err := pool.Exec(ctx, `UPDATE team_records SET header = 'h2s', body = 'ealed 2' WHERE team_id = 't1' AND host_id = 'w' AND idx = 2`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM team_records WHERE team_id = 't1' AND host_id = 'w' AND idx = 4`); err != nil {
		t.Fatal(err)
	}
	got := sums(0)
	if len(got) != 3 || bytes.Equal(got[1].Sum, want[1].Sum) || !bytes.Equal(got[0].Sum, want[0].Sum) || loom.TeamSumsDigest(got) == loom.TeamSumsDigest(want[:3]) {
		t.Fatalf("sums after the operator's edits: %x", got)
	}
}
