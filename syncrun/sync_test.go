package syncrun_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/synclog"
	"github.com/loomhq/loom/syncrun"
)

func open(t *testing.T, name string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// hubFor starts a real hub (loom serve's handler over a SQLite store)
// and returns it with a client of user alice's.
func hubFor(t *testing.T) (*sqlite.Store, *httptest.Server, *hub.Client) {
	t.Helper()
	st := open(t, "hub.db")
	ts := httptest.NewServer(server.New(server.Config{Store: st, Tokens: st}))
	t.Cleanup(ts.Close)
	_, secret, err := st.CreateToken(context.Background(), "alice", "laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	return st, ts, &hub.Client{URL: ts.URL, Token: secret}
}

// syncing returns a new sync key, a function that appends a message
// to a new session of key k in a store, and stores of the given names
// with sync set up.
func syncing(t *testing.T, names ...string) (envelope.Key, func(st *sqlite.Store, k string), []*sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	hi := func(st *sqlite.Store, k string) {
		t.Helper()
		if err := st.Append(ctx, &loom.Session{UserID: "alice", Key: k}, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "hi " + k}}}); err != nil {
			t.Fatal(err)
		}
	}
	var out []*sqlite.Store
	for _, name := range names {
		st := open(t, name)
		if _, err := st.EnableSync(ctx); err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	return key, hi, out
}

// keysOf returns the keys of alice's sessions in st, sorted.
func keysOf(t *testing.T, st *sqlite.Store) []string {
	t.Helper()
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, s := range ss {
		keys = append(keys, s.Key)
	}
	slices.Sort(keys)
	return keys
}

// A host's log goes to the hub sealed, and comes back to another host
// opened, record for record; pushing again sends nothing more; the hub's
// file holds no plaintext of it.
func TestPushAndPull(t *testing.T) {
	ctx := context.Background()
	hubStore, _, c := hubFor(t)
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	a := open(t, "a.db")
	self, err := a.EnableSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &loom.Session{UserID: "alice", Key: "cli:api"}
	for _, text := range []string{"zanzibar marker question", "an answer", "another question"} {
		if err := a.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := syncrun.Push(ctx, c, a, key); err != nil || n != 4 {
		t.Fatalf("push = %d records, %v; want the session and its 3 appends", n, err)
	}
	if n, err := syncrun.Push(ctx, c, a, key); err != nil || n != 0 {
		t.Fatalf("a second push = %d records, %v; want none", n, err)
	}
	local, err := a.SyncLog(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []synclog.Payload
	res, err := syncrun.Pull(ctx, c, "", nil, key, func(h synclog.Header, p synclog.Payload) error {
		if h.Host != self || h.Index != int64(len(got)+1) || h.HLC != local[len(got)].HLC {
			t.Errorf("record %d pulled with header %s", len(got)+1, h)
		}
		got = append(got, p)
		return nil
	})
	if err != nil || res.Applied != 4 || len(res.Waiting) != 0 {
		t.Fatalf("pull = %+v, %v", res, err)
	}
	if m := got[1].(*synclog.MessagesAppended); m.SessionID != s.ID || m.Messages[0].Text() != "zanzibar marker question" {
		t.Errorf("second record pulled = %+v", m)
	}
	// A host pulls only others' records, and only those after what it
	// applied.
	if res, err := syncrun.Pull(ctx, c, self, nil, key, func(synclog.Header, synclog.Payload) error { return nil }); err != nil || res.Applied != 0 {
		t.Errorf("pulling as the pushing host = %+v, %v", res, err)
	}
	if res, err := syncrun.Pull(ctx, c, "", synclog.Vector{self: 3}, key, func(synclog.Header, synclog.Payload) error { return nil }); err != nil || res.Applied != 1 {
		t.Errorf("pulling after record 3 = %+v, %v", res, err)
	}
	hubStore.Close()
	for _, f := range []string{"hub.db", "hub.db-wal"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(hubStore.Path()), f))
		if f == "hub.db" && (err != nil || len(b) == 0) {
			t.Fatalf("the hub's file is not there to read: %v", err)
		}
		if strings.Contains(string(b), "zanzibar") {
			t.Errorf("the hub's %s holds the plaintext", f)
		}
	}
}

// A record that waits for another host's holds back its host's records
// while the others' apply, and applies once what it waits for has; one
// whose wait no record ends is reported, and the rest applied.
func TestPullWaits(t *testing.T) {
	ctx := context.Background()
	_, _, c := hubFor(t)
	key, _ := envelope.NewKey()
	hosts := make([]synclog.HostID, 2)
	for i, name := range []string{"a.db", "b.db"} {
		st := open(t, name)
		var err error
		if hosts[i], err = st.EnableSync(ctx); err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			if err := st.Append(ctx, &loom.Session{UserID: "alice", Key: fmt.Sprintf("cli:%s-%d", name, j)}, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "hi"}}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := syncrun.Push(ctx, c, st, key); err != nil {
			t.Fatal(err)
		}
	}
	// a is the host the hub lists first, so its records come first.
	listed, err := c.Own().Hosts(ctx)
	if err != nil || len(listed) != 2 {
		t.Fatalf("hosts = %v, %v", listed, err)
	}
	a, b := synclog.HostID(listed[0].Host), hosts[0]
	if b == a {
		b = hosts[1]
	}
	// Each host logged 4 records (two sessions made, two appends). a's
	// first record waits for b's last.
	var order []string
	done := map[synclog.HostID]int64{}
	waited := 0
	res, err := syncrun.Pull(ctx, c, "", nil, key, func(h synclog.Header, p synclog.Payload) error {
		if h.Host == a && h.Index == 1 && done[b] < 4 {
			waited++
			return fmt.Errorf("%w: for %s", synclog.ErrWait, b)
		}
		done[h.Host] = h.Index
		order = append(order, fmt.Sprintf("%s/%d", h.Host, h.Index))
		return nil
	})
	var want []string
	for _, h := range []synclog.HostID{b, a} {
		for i := range 4 {
			want = append(want, fmt.Sprintf("%s/%d", h, i+1))
		}
	}
	if err != nil || res.Applied != 8 || len(res.Waiting) != 0 || !slices.Equal(order, want) || waited == 0 {
		t.Errorf("pull = %+v, %v, applied %v after %d waits; want %v after a wait", res, err, order, waited, want)
	}
	// A wait nothing ends: the others' records apply, and the host's
	// first waiting record is reported with the reason.
	res, err = syncrun.Pull(ctx, c, "", nil, key, func(h synclog.Header, p synclog.Payload) error {
		if h.Host == a && h.Index == 2 {
			return fmt.Errorf("%w: the message it follows is not here", synclog.ErrWait)
		}
		return nil
	})
	if err != nil || res.Applied != 5 || len(res.Waiting) != 1 || res.Waiting[0] != (syncrun.Waiting{Host: string(a), Index: 2, Reason: "sync record waits: the message it follows is not here"}) {
		t.Errorf("pull with a record that waits for good = %+v, %v", res, err)
	}
	// Any other error of apply stops the pull.
	if _, err := syncrun.Pull(ctx, c, "", nil, key, func(synclog.Header, synclog.Payload) error { return errors.New("disk full") }); err == nil || err.Error() != "disk full" {
		t.Errorf("pull whose apply fails = %v", err)
	}
}

// A wrong key, a hub that is down and a bad token are each one clear
// error.
func TestPullErrors(t *testing.T) {
	ctx := context.Background()
	_, ts, c := hubFor(t)
	key, _ := envelope.NewKey()
	other, _ := envelope.NewKey()
	a := open(t, "a.db")
	if _, err := a.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, &loom.Session{UserID: "alice", Key: "cli:x"}, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := syncrun.Push(ctx, c, open(t, "nosync.db"), key); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("push of a store without sync: %v", err)
	}
	if _, err := syncrun.Push(ctx, c, a, key); err != nil {
		t.Fatal(err)
	}
	_, err := syncrun.Pull(ctx, c, "", nil, other, func(synclog.Header, synclog.Payload) error { return nil })
	if !errors.Is(err, envelope.ErrWrongKey) || !strings.Contains(err.Error(), other.ID()) {
		t.Errorf("pull with another key: %v", err)
	}
	bad := &hub.Client{URL: ts.URL, Token: "loom_nonsense"}
	if _, err := bad.Own().Hosts(ctx); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("a bad token: %v", err)
	}
	ts.Close()
	if _, err := syncrun.Push(ctx, c, a, key); !errors.Is(err, hub.ErrUnreachable) || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("push to a hub that is down: %v", err)
	}
}

// Someone with a token but not the key puts junk at a host's next index:
// the other machines set it aside, naming it, and apply the rest; the
// host itself sees a record it did not write, takes
// a new host id, sends its own records again and says that its old log
// stops before the junk, so that the others' syncs succeed again.
func TestJunkAtAHostsIndex(t *testing.T) {
	ctx := context.Background()
	_, _, c := hubFor(t)
	key, hi, m := syncing(t, "a.db", "b.db", "reader.db")
	a, b, reader := m[0], m[1], m[2]
	hi(a, "cli:a1")
	hi(b, "cli:b1")
	for _, st := range []*sqlite.Store{a, b} {
		if _, err := syncrun.Sync(ctx, c, st, key); err != nil {
			t.Fatal(err)
		}
	}
	hostA, _ := a.SyncHost(ctx)
	last, _ := a.SyncLast(ctx)
	hi(a, "cli:a2") // records last+1 and last+2 here (made, appended), not on the hub yet
	junk := loom.SyncRecord{Host: string(hostA), Index: int64(last + 1), Header: []byte("junk"), Body: []byte("junk")}
	if _, err := c.Own().Put(ctx, []loom.SyncRecord{junk}); err != nil {
		t.Fatal(err)
	}
	hi(b, "cli:b2")
	// The junk is set aside, said once with whose host and index, and
	// stops nothing: the sync succeeds (docs/sync.md, "No record stops
	// a sync").
	junkAside := func(res syncrun.Result) bool {
		return len(res.SetAside) == 1 && res.SetAside[0].Host == string(hostA) && res.SetAside[0].Index == last+1 && res.SetAside[0].Author == ""
	}
	if res, err := syncrun.Sync(ctx, c, b, key); err != nil || res.Pushed == 0 || !junkAside(res) {
		t.Fatalf("b's sync past the junk = %+v, %v", res, err)
	}

	// The reader applies all of b's records and a's before the junk.
	res, err := syncrun.Sync(ctx, c, reader, key)
	if err != nil || !junkAside(res) {
		t.Fatalf("a pull past junk = %+v, %v", res, err)
	}
	list := func(st *sqlite.Store) []string { return keysOf(t, st) }
	if got := list(reader); !slices.Equal(got, []string{"cli:a1", "cli:b1", "cli:b2"}) {
		t.Fatalf("the reader holds %v", got)
	}

	// a finds a record at its index that it did not write, which no
	// machine with the key wrote: it keeps its own under a new host and
	// writes that its old host's log stops before the junk.
	res, err = syncrun.Sync(ctx, c, a, key)
	if err != nil || res.Rehomed == nil || res.Rehomed.Old != hostA || res.Rehomed.Shared != last || res.Rehomed.Moved != 2 || res.Pushed != 3 {
		t.Fatalf("a's sync after the junk = %+v (rehomed %+v), %v", res, res.Rehomed, err)
	}
	// The others get a2 from a's new host, and from then on stop a's old
	// host's log before the junk: their syncs succeed, now and after.
	for _, st := range []*sqlite.Store{b, reader} {
		for range 2 {
			if _, err := syncrun.Sync(ctx, c, st, key); err != nil {
				t.Fatalf("a sync past the junk, once a retired its host: %v", err)
			}
		}
		if got := list(st); !slices.Equal(got, []string{"cli:a1", "cli:a2", "cli:b1", "cli:b2"}) {
			t.Fatalf("a store holds %v", got)
		}
	}
	if got := list(a); !slices.Equal(got, []string{"cli:a1", "cli:a2", "cli:b1", "cli:b2"}) {
		t.Fatalf("a holds %v", got)
	}
}
