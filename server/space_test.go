package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/synclog"
	"github.com/loomhq/loom/team"
)

// recordSpace is one record space of a hub as a test drives it over
// HTTP: the root of its endpoints, and records of one writer of it as
// its rightful writer makes them.
type recordSpace struct {
	name string
	root string
	host string
	rec  func(t *testing.T, i int64, size int) map[string]any
}

// TestOneRecordPath: a user's own space and a team's are served by one
// implementation, so what a hub does with records is the same in both:
// the same bounds on a push (413 for a header, a body or a batch over
// its limit, 400 for a record at index 0), the same idempotent put (a
// push sent again stores nothing and says the same last index), the
// same pages (cut at the count asked and at loom.MaxSyncPageBytes, with
// more set while the hub holds records after the page), and the same
// list of writers. Both spaces on one hub on PostgreSQL, through its
// HTTP API as a client sends it.
func TestOneRecordPath(t *testing.T) {
	ctx := context.Background()
	st, err := postgres.Open(ctx, hubSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := httptest.NewServer(server.New(server.Config{Store: st, Tokens: st}))
	t.Cleanup(ts.Close)
	_, alice, err := st.CreateToken(ctx, "alice", "sync", 0)
	if err != nil {
		t.Fatal(err)
	}

	// Alice's own space: a host of hers, records sealed (as the hub sees
	// them) under her sync key.
	own := loom.NewID()
	ownSpace := recordSpace{name: "own", root: "/api/v1/sync", host: own, rec: func(t *testing.T, i int64, size int) map[string]any {
		h := synclog.Header{Host: synclog.HostID(own), Index: i, HLC: synclog.HLC(i << 16), KeyID: "00000000000000a1"}
		b, _ := h.MarshalBinary()
		return map[string]any{"host": own, "index": i, "header": b, "body": bytes.Repeat([]byte{byte(i)}, size)}
	}}

	// A team alice makes on the hub; its records, hers, signed by her
	// key under a writer id bound to it.
	teamID, err := team.NewTeamID()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := team.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	entry, ring, err := team.Create(teamID, "one", "alice", "alice", admin, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := &hub.Client{URL: ts.URL, Token: alice}
	if err := c.AppendTeamEntry(ctx, teamID, 1, entry); err != nil {
		t.Fatal(err)
	}
	chain := &team.State{Team: teamID}
	if err := chain.Apply("", entry); err != nil {
		t.Fatal(err)
	}
	writer := team.NewWriter(admin.Fingerprint())
	teamSpace := recordSpace{name: "team", root: hub.TeamPath(teamID), host: writer, rec: func(t *testing.T, i int64, size int) map[string]any {
		h := team.Header{Team: teamID, Host: writer, Index: i, Epoch: 1, Author: admin.Fingerprint(), ChainSeq: chain.Seq, ChainHead: chain.Head, Session: strings.Repeat("0", 32)}
		r, err := team.SealRecord(h, ring, admin, bytes.Repeat([]byte{byte(i)}, size))
		if err != nil {
			t.Fatal(err)
		}
		return map[string]any{"host": r.Host, "index": r.Index, "epoch": r.Epoch, "header": r.Header, "body": r.Body}
	}}

	send := func(t *testing.T, method, path string, body any) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, ts.URL+path, rd)
		req.Header.Set("Authorization", "Bearer "+alice)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	for _, sp := range []recordSpace{ownSpace, teamSpace} {
		t.Run(sp.name, func(t *testing.T) {
			push := func(recs ...map[string]any) (int, hub.Pushed, string) {
				t.Helper()
				status, b := send(t, http.MethodPost, sp.root+"/records", map[string]any{"records": recs})
				var out hub.Pushed
				json.Unmarshal(b, &out)
				return status, out, string(b)
			}
			page := func(after int64, limit int) (indexes []int64, more bool) {
				t.Helper()
				status, b := send(t, http.MethodGet, fmt.Sprintf("%s/records?host=%s&after=%d&limit=%d", sp.root, sp.host, after, limit), nil)
				var out hub.Page
				if err := json.Unmarshal(b, &out); status != http.StatusOK || err != nil {
					t.Fatalf("page after %d: %d %s", after, status, b)
				}
				for _, r := range out.Records {
					indexes = append(indexes, r.Index)
				}
				return indexes, out.More
			}
			var five []map[string]any
			for i := range int64(5) {
				five = append(five, sp.rec(t, i+1, 100))
			}

			// Bounds, before anything is stored.
			bigHeader := sp.rec(t, 1, 100)
			bigHeader["header"] = make([]byte, loom.MaxSyncHeader+1)
			bigBody := sp.rec(t, 1, 100)
			bigBody["body"] = make([]byte, loom.MaxSyncBody+1)
			var many []map[string]any
			for range loom.MaxSyncBatch + 1 {
				many = append(many, five[0])
			}
			at0 := sp.rec(t, 1, 100)
			at0["index"] = 0
			for _, c := range []struct {
				what   string
				recs   []map[string]any
				status int
			}{
				{"a header over its limit", []map[string]any{bigHeader}, http.StatusRequestEntityTooLarge},
				{"a body over its limit", []map[string]any{bigBody}, http.StatusRequestEntityTooLarge},
				{"a batch over its count", many, http.StatusRequestEntityTooLarge},
				{"a record at index 0", []map[string]any{at0}, http.StatusBadRequest},
			} {
				if status, _, b := push(c.recs...); status != c.status {
					t.Fatalf("%s: %d %.200s, want %d", c.what, status, b, c.status)
				}
			}

			// An idempotent put, which says the last index held.
			for try, want := range []int{5, 0} {
				status, out, b := push(five...)
				if status != http.StatusOK || out.Stored != want || out.Last[sp.host] != 5 {
					t.Fatalf("push %d of records 1 to 5: %d %s, want %d stored and last 5", try+1, status, b, want)
				}
			}

			// Pages cut at the count asked, and more while more is held.
			for _, c := range []struct {
				after int64
				limit int
				want  string
				more  bool
			}{{0, 2, "[1 2]", true}, {2, 2, "[3 4]", true}, {4, 2, "[5]", false}, {5, 2, "[]", false}} {
				got, more := page(c.after, c.limit)
				if fmt.Sprint(got) != c.want && !(c.want == "[]" && got == nil) || more != c.more {
					t.Fatalf("page after %d of %d: %v more %v, want %s more %v", c.after, c.limit, got, more, c.want, c.more)
				}
			}

			// A page is cut at MaxSyncPageBytes: three records of 3 MiB
			// come two to a page.
			var big []map[string]any
			for i := int64(6); i <= 8; i++ {
				big = append(big, sp.rec(t, i, 3<<20))
			}
			if status, out, b := push(big...); status != http.StatusOK || out.Stored != 3 || out.Last[sp.host] != 8 {
				t.Fatalf("push of three records of 3 MiB: %d %.200s", status, b)
			}
			if got, more := page(5, 100); fmt.Sprint(got) != "[6 7]" || !more {
				t.Fatalf("the page of three records of 3 MiB: %v more %v, want [6 7] and more", got, more)
			}
			if got, more := page(7, 100); fmt.Sprint(got) != "[8]" || more {
				t.Fatalf("the page after it: %v more %v, want [8] and no more", got, more)
			}

			// The writers of the space.
			status, b := send(t, http.MethodGet, sp.root+"/hosts", nil)
			var hosts hub.Hosts
			json.Unmarshal(b, &hosts)
			if status != http.StatusOK || len(hosts.Hosts) != 1 || hosts.Hosts[0].Host != sp.host || hosts.Hosts[0].Last != 8 {
				t.Fatalf("the space's writers: %d %s", status, b)
			}
			if !strings.Contains(string(b), `"key_id"`) {
				t.Fatalf("a hosts answer without its key_id: %s", b)
			}
		})
	}
}
