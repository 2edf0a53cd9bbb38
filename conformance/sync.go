package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// syncRec is record i of host, its body saying so.
func syncRec(host string, i int64) loom.SyncRecord {
	return loom.SyncRecord{Host: host, Index: i, Header: []byte(fmt.Sprintf(`{"t":"m","i":%d}`, i)), Body: []byte(fmt.Sprintf("sealed %s %d", host, i))}
}

func syncRecs(host string, from, to int64) []loom.SyncRecord {
	var out []loom.SyncRecord
	for i := from; i <= to; i++ {
		out = append(out, syncRec(host, i))
	}
	return out
}

func mustPut(t *testing.T, st loom.SyncStore, user string, recs []loom.SyncRecord, want int) {
	t.Helper()
	n, err := st.PutSyncRecords(ctx(t), user, recs)
	if err != nil {
		t.Fatalf("put %d records: %v", len(recs), err)
	}
	if n != want {
		t.Fatalf("put %d records: stored %d, want %d", len(recs), n, want)
	}
}

// wantLog checks that user's log of host holds records from to to, as
// syncRec makes them, read page by page.
func wantLog(t *testing.T, st loom.SyncStore, user, host string, from, to int64) {
	t.Helper()
	var got []loom.SyncRecord
	after := from - 1
	for {
		page, err := st.SyncRecords(ctx(t), user, host, after, 7)
		if err != nil {
			t.Fatalf("records of %s after %d: %v", host, after, err)
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
		after = page[len(page)-1].Index
	}
	if int64(len(got)) != to-from+1 {
		t.Fatalf("log of %s holds %d records from %d, want %d to %d", host, len(got), from, from, to)
	}
	for i, r := range got {
		w := syncRec(host, from+int64(i))
		if r.Host != host || r.Index != w.Index || !bytes.Equal(r.Header, w.Header) || !bytes.Equal(r.Body, w.Body) {
			t.Fatalf("record %d of %s reads %q %q at %d, want %q %q", w.Index, host, r.Header, r.Body, r.Index, w.Header, w.Body)
		}
	}
}

// testSync: the hub's record logs. Records round trip byte for byte,
// putting again is idempotent, a different record where one is held is a
// conflict, a gap is refused, nothing of a refused batch is stored, one
// user never sees another's records, pages follow after and limit and
// stop at MaxSyncPageBytes, the hosts' summary counts what is held, the
// limits hold, concurrent pushes of one host serialise, and a cancelled
// context stops every call.
func testSync(t *testing.T, open Opener) {
	st := open(t)
	h1, h2 := loom.NewID(), loom.NewID()

	t.Run("RoundTrip", func(t *testing.T) { testSyncRoundTrip(t, st, open, h1, h2) })
	t.Run("Idempotent", func(t *testing.T) { testSyncIdempotent(t, st) })
	t.Run("Conflict", func(t *testing.T) { testSyncConflict(t, st) })
	t.Run("Gap", func(t *testing.T) { testSyncGap(t, st) })
	t.Run("Users", func(t *testing.T) { testSyncUsers(t, st, h1) })
	t.Run("Paging", func(t *testing.T) { testSyncPaging(t, st) })
	t.Run("PageBytes", func(t *testing.T) { testSyncPageBytes(t, st) })
	t.Run("Limits", func(t *testing.T) { testSyncLimits(t, st) })
	t.Run("ConcurrentPushes", func(t *testing.T) { testSyncConcurrentPushes(t, st, open) })
	t.Run("Cancelled", func(t *testing.T) { testSyncCancelled(t, st, h1) })
}

func testSyncRoundTrip(t *testing.T, st loom.SyncStore, open Opener, h1, h2 string) {
	start := time.Now().Truncate(time.Millisecond)
	batch := syncRecs(h1, 1, 3)
	batch[1].Header = nil // a record may have no header
	batch = append(batch, syncRecs(h2, 1, 2)...)
	batch = append(batch, loom.SyncRecord{Host: h2, Index: 3, Header: []byte{0, 0xff, 1}, Body: []byte{0, 1, 2, 0xfe, 0xff, 0}})
	mustPut(t, st, "alice", batch, 6)
	got, err := open(t).SyncRecords(ctx(t), "alice", h2, 0, 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("records of h2 from another handle: %d, %v", len(got), err)
	}
	last := got[2]
	if last.Host != h2 || last.Index != 3 || !bytes.Equal(last.Header, batch[5].Header) || !bytes.Equal(last.Body, batch[5].Body) {
		t.Fatalf("binary record reads %+v, want %+v", last, batch[5])
	}
	if last.ReceivedAt.Before(start) || last.ReceivedAt.After(time.Now()) {
		t.Errorf("received at %v, not during the put (from %v)", last.ReceivedAt, start)
	}
	got, _ = st.SyncRecords(ctx(t), "alice", h1, 0, 0)
	if len(got) != 3 || len(got[1].Header) != 0 || !bytes.Equal(got[1].Body, batch[1].Body) {
		t.Fatalf("records of h1: %+v", got)
	}
	wantSyncHosts(t, st, "alice", map[string]int64{h1: 3, h2: 3})
}

func testSyncIdempotent(t *testing.T, st loom.SyncStore) {
	h := loom.NewID()
	mustPut(t, st, "alice", syncRecs(h, 1, 5), 5)
	mustPut(t, st, "alice", syncRecs(h, 1, 5), 0)
	// A resumed push that sends again what was stored before it broke.
	mustPut(t, st, "alice", syncRecs(h, 3, 8), 3)
	// Out of order, and a record twice in one batch.
	batch := append(syncRecs(h, 9, 11), syncRec(h, 9), syncRec(h, 4))
	batch[0], batch[2] = batch[2], batch[0]
	mustPut(t, st, "alice", batch, 3)
	wantLog(t, st, "alice", h, 1, 11)
	wantSyncHosts(t, st, "alice", map[string]int64{h: 11})
}

func testSyncConflict(t *testing.T, st loom.SyncStore) {
	h := loom.NewID()
	mustPut(t, st, "alice", syncRecs(h, 1, 3), 3)
	for _, tc := range []struct {
		name   string
		change func(r *loom.SyncRecord)
	}{
		{"header", func(r *loom.SyncRecord) { r.Header = []byte("{}") }},
		{"no header", func(r *loom.SyncRecord) { r.Header = nil }},
	} {
		other := syncRec(h, 2)
		tc.change(&other)
		// The new record 4 of the batch is not stored either.
		_, err := st.PutSyncRecords(ctx(t), "alice", []loom.SyncRecord{syncRec(h, 4), other})
		wantCode(t, err, loom.ECONFLICT)
		if msg := loom.ErrorMessage(err); !strings.Contains(msg, h) || !strings.Contains(msg, "record 2") {
			t.Errorf("a different %s: %q does not name host and record", tc.name, msg)
		}
	}
	_, err := st.PutSyncRecords(ctx(t), "alice", []loom.SyncRecord{syncRec(h, 4), {Host: h, Index: 4, Body: []byte("x")}})
	wantCode(t, err, loom.ECONFLICT)
	wantLog(t, st, "alice", h, 1, 3)
	// The same header with another body is the same record sealed
	// again (two processes of one machine pushing at once): it adds
	// nothing, and the first is kept.
	again := syncRec(h, 2)
	again.Body = []byte("another")
	mustPut(t, st, "alice", []loom.SyncRecord{again, syncRec(h, 4)}, 1)
	wantLog(t, st, "alice", h, 1, 4)
}

func testSyncGap(t *testing.T, st loom.SyncStore) {
	h := loom.NewID()
	_, err := st.PutSyncRecords(ctx(t), "alice", syncRecs(h, 2, 3))
	wantCode(t, err, loom.EINVALID)
	mustPut(t, st, "alice", syncRecs(h, 1, 5), 5)
	_, err = st.PutSyncRecords(ctx(t), "alice", []loom.SyncRecord{syncRec(h, 6), syncRec(h, 8)})
	wantCode(t, err, loom.EINVALID)
	if msg := loom.ErrorMessage(err); !strings.Contains(msg, "host "+h+" has records up to 6; record 8 would leave a gap") {
		t.Errorf("gap refused with %q", msg)
	}
	// Record 6 of the refused batch was not stored; another host's
	// records in the batch neither.
	other := loom.NewID()
	_, err = st.PutSyncRecords(ctx(t), "alice", append(syncRecs(other, 1, 2), syncRec(h, 7)))
	wantCode(t, err, loom.EINVALID)
	wantLog(t, st, "alice", h, 1, 5)
	wantSyncHosts(t, st, "alice", map[string]int64{h: 5, other: -1})
}

func testSyncUsers(t *testing.T, st loom.SyncStore, h1 string) {
	h := loom.NewID()
	mustPut(t, st, "alice", syncRecs(h, 1, 3), 3)
	// Bob's log of the same host id is his own: no conflict, no gap.
	bob := []loom.SyncRecord{{Host: h, Index: 1, Body: []byte("bob's")}}
	mustPut(t, st, "bob", bob, 1)
	got, err := st.SyncRecords(ctx(t), "bob", h, 0, 0)
	if err != nil || len(got) != 1 || string(got[0].Body) != "bob's" {
		t.Fatalf("bob's records: %+v, %v", got, err)
	}
	wantLog(t, st, "alice", h, 1, 3)
	wantSyncHosts(t, st, "bob", map[string]int64{h: 1, h1: -1})
	for _, user := range []string{"carol", "Bob", "bob "} {
		if got, err := st.SyncRecords(ctx(t), user, h, 0, 0); err != nil || len(got) != 0 {
			t.Errorf("records of %q: %d, %v; want none", user, len(got), err)
		}
		if hosts, err := st.SyncHosts(ctx(t), user); err != nil || len(hosts) != 0 {
			t.Errorf("hosts of %q: %+v, %v; want none", user, hosts, err)
		}
	}
}

func testSyncPaging(t *testing.T, st loom.SyncStore) {
	h := loom.NewID()
	mustPut(t, st, "alice", syncRecs(h, 1, 25), 25)
	for _, tc := range []struct {
		after          int64
		limit          int
		first, howMany int64
	}{{0, 10, 1, 10}, {10, 10, 11, 10}, {20, 10, 21, 5}, {25, 10, 0, 0}, {99, 0, 0, 0}, {0, 0, 1, 25}, {24, 1, 25, 1}} {
		got, err := st.SyncRecords(ctx(t), "alice", h, tc.after, tc.limit)
		if err != nil || int64(len(got)) != tc.howMany || len(got) > 0 && got[0].Index != tc.first {
			t.Fatalf("after %d limit %d: %d records from %v, %v; want %d from %d", tc.after, tc.limit, len(got), first(got), err, tc.howMany, tc.first)
		}
		for i, r := range got {
			if r.Index != tc.first+int64(i) {
				t.Fatalf("after %d: record %d has index %d", tc.after, i, r.Index)
			}
		}
	}
	for _, tc := range []struct {
		host  string
		after int64
		limit int
	}{{h, -1, 10}, {h, 0, -1}, {h, 0, loom.MaxSyncBatch + 1}, {"", 0, 10}, {"host-1", 0, 10}, {strings.ToUpper(h), 0, 10}} {
		_, err := st.SyncRecords(ctx(t), "alice", tc.host, tc.after, tc.limit)
		wantCode(t, err, loom.EINVALID)
	}
	_, err := st.SyncRecords(ctx(t), "", h, 0, 10)
	wantCode(t, err, loom.EINVALID)
	_, err = st.SyncHosts(ctx(t), "")
	wantCode(t, err, loom.EINVALID)
}

func testSyncPageBytes(t *testing.T, st loom.SyncStore) {
	h := loom.NewID()
	big := func(i int64, size int) loom.SyncRecord {
		return loom.SyncRecord{Host: h, Index: i, Body: bytes.Repeat([]byte{byte(i)}, size)}
	}
	third := loom.MaxSyncPageBytes / 3
	mustPut(t, st, "alice", []loom.SyncRecord{big(1, third), big(2, third), big(3, third), big(4, third+1)}, 4)
	// A record larger than a page comes alone.
	mustPut(t, st, "alice", []loom.SyncRecord{big(5, loom.MaxSyncPageBytes+1), big(6, 10)}, 2)
	var pages [][]int64
	for after := int64(0); ; {
		got, err := st.SyncRecords(ctx(t), "alice", h, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		var idxs []int64
		for _, r := range got {
			if len(r.Body) == 0 || r.Body[0] != byte(r.Index) {
				t.Fatalf("record %d reads another's body", r.Index)
			}
			idxs = append(idxs, r.Index)
		}
		pages = append(pages, idxs)
		after = got[len(got)-1].Index
	}
	jsonEqual(t, "pages", pages, [][]int64{{1, 2, 3}, {4}, {5}, {6}})
	hosts, err := st.SyncHosts(ctx(t), "alice")
	if i := slices.IndexFunc(hosts, func(x loom.SyncHost) bool { return x.Host == h }); err != nil || i < 0 {
		t.Errorf("hosts = %v, %v; want %s among them", hosts, err, h)
	} else if want := int64(4*third + 1 + loom.MaxSyncPageBytes + 1 + 10); hosts[i].Bytes != want {
		t.Errorf("host holds %d bytes, want %d", hosts[i].Bytes, want)
	}
}

func testSyncLimits(t *testing.T, st loom.SyncStore) {
	h := loom.NewID()
	rec := func(i int64, header, body int) loom.SyncRecord {
		return loom.SyncRecord{Host: h, Index: i, Header: make([]byte, header), Body: make([]byte, body)}
	}
	mustPut(t, st, "alice", []loom.SyncRecord{rec(1, loom.MaxSyncHeader, loom.MaxSyncBody)}, 1)
	many := syncRecs(h, 2, loom.MaxSyncBatch+1)
	mustPut(t, st, "alice", many, loom.MaxSyncBatch)
	for name, batch := range map[string][]loom.SyncRecord{
		"header":      {rec(1002, loom.MaxSyncHeader+1, 10)},
		"body":        {rec(1002, 0, loom.MaxSyncBody+1)},
		"records":     syncRecs(h, 1002, 1002+loom.MaxSyncBatch),
		"batch bytes": {rec(1002, 0, loom.MaxSyncBody), rec(1003, 0, loom.MaxSyncBody), rec(1004, 0, loom.MaxSyncBody), rec(1005, 0, loom.MaxSyncBody), rec(1006, 0, 1)},
		"empty body":  {rec(1002, 10, 0)},
		"index 0":     {{Host: h, Index: 0, Body: []byte("x")}},
		"index -1":    {{Host: h, Index: -1, Body: []byte("x")}},
		"host":        {{Host: "laptop", Index: 1, Body: []byte("x")}},
		"host case":   {{Host: strings.ToUpper(loom.NewID()), Index: 1, Body: []byte("x")}},
		"no host":     {{Index: 1, Body: []byte("x")}},
	} {
		if _, err := st.PutSyncRecords(ctx(t), "alice", batch); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	for _, user := range []string{"", "a\x00b", "\xff"} {
		_, err := st.PutSyncRecords(ctx(t), user, syncRecs(h, 1002, 1002))
		wantCode(t, err, loom.EINVALID)
	}
	mustPut(t, st, "alice", nil, 0)
	wantSyncHosts(t, st, "alice", map[string]int64{h: 1001})
}

func testSyncConcurrentPushes(t *testing.T, st loom.SyncStore, open Opener) {
	// Four handles push the same log at once, in small batches, as
	// clients retrying a push that seemed lost would.
	const pushers, records, batch = 4, 200, 5
	h := loom.NewID()
	var handles []loom.SyncStore
	for range pushers {
		handles = append(handles, open(t))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	start := make(chan struct{})
	errs := make(chan error, pushers)
	for _, other := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for from := int64(1); from <= records; from += batch {
				n, err := other.PutSyncRecords(ctx(t), "alice", syncRecs(h, from, from+batch-1))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a concurrent push: %v", err)
	}
	if total != records {
		t.Errorf("concurrent pushes stored %d records in all, want %d", total, records)
	}
	wantLog(t, st, "alice", h, 1, records)
	wantSyncHosts(t, st, "alice", map[string]int64{h: records})
}

func testSyncCancelled(t *testing.T, st loom.SyncStore, h1 string) {
	h := loom.NewID()
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.PutSyncRecords(c, "alice", syncRecs(h, 1, 3)); !errors.Is(err, context.Canceled) {
		t.Errorf("put with a cancelled context: %v", err)
	}
	if _, err := st.SyncRecords(c, "alice", h1, 0, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("records with a cancelled context: %v", err)
	}
	if _, err := st.SyncHosts(c, "alice"); !errors.Is(err, context.Canceled) {
		t.Errorf("hosts with a cancelled context: %v", err)
	}
	wantSyncHosts(t, st, "alice", map[string]int64{h: -1})
}

// wantSyncHosts checks user's hosts summary for the hosts in want: the
// last index of each (which, logs being gap-free, is its record count),
// or -1 for a host the user must not have. Bytes are checked against
// the records read back.
func wantSyncHosts(t *testing.T, st loom.SyncStore, user string, want map[string]int64) {
	t.Helper()
	hosts, err := st.SyncHosts(ctx(t), user)
	if err != nil {
		t.Fatalf("hosts of %s: %v", user, err)
	}
	byHost := map[string]loom.SyncHost{}
	for i, h := range hosts {
		if i > 0 && hosts[i-1].Host >= h.Host {
			t.Errorf("hosts not in id order: %s before %s", hosts[i-1].Host, h.Host)
		}
		byHost[h.Host] = h
	}
	for host, last := range want {
		h, ok := byHost[host]
		if last < 0 {
			if ok {
				t.Errorf("%s has host %s: %+v", user, host, h)
			}
			continue
		}
		if !ok || h.Last != last || h.Records != last || h.UpdatedAt.IsZero() {
			t.Errorf("%s's host %s: %+v, want last and records %d", user, host, h, last)
			continue
		}
		var size int64
		for after := int64(0); after < last; {
			page, err := st.SyncRecords(ctx(t), user, host, after, 0)
			if err != nil || len(page) == 0 {
				t.Fatalf("records of %s after %d: %d, %v", host, after, len(page), err)
			}
			for _, r := range page {
				size += int64(len(r.Header) + len(r.Body))
				if r.ReceivedAt.After(h.UpdatedAt) {
					t.Errorf("record %d received at %v, after its host's update %v", r.Index, r.ReceivedAt, h.UpdatedAt)
				}
			}
			after = page[len(page)-1].Index
		}
		if h.Bytes != size {
			t.Errorf("%s's host %s holds %d bytes, summary says %d", user, host, size, h.Bytes)
		}
	}
}

func first(recs []loom.SyncRecord) any {
	if len(recs) == 0 {
		return nil
	}
	return recs[0].Index
}
