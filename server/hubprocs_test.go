package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/synclog"
)

// hubSchema makes a fresh schema on the test PostgreSQL server, dropped
// when the test ends, and returns a URL that uses it; without a server
// the test is skipped (outside CI).
func hubSchema(t *testing.T) string {
	t.Helper()
	base := os.Getenv("LOOM_TEST_POSTGRES")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, base)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("PostgreSQL is unreachable (set LOOM_TEST_POSTGRES): %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "loomhub_" + hex.EncodeToString(b[:])
	if _, err := pool.Exec(context.Background(), `CREATE SCHEMA `+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`)
		pool.Close()
	})
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// Two hub processes (servers, each with a store of its own) on one
// database: a user's pushes are counted over both, so a third push on
// the other process is refused while two run on one; and two first
// pushes sealed with different keys, one on each, store one key's
// records only.
func TestSyncTwoHubProcesses(t *testing.T) {
	db := hubSchema(t)
	ctx := context.Background()
	var hubs [2]*httptest.Server
	var stores [2]*postgres.Store
	for i := range hubs {
		st, err := postgres.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores[i] = st
		hubs[i] = httptest.NewServer(server.New(server.Config{Store: st, Tokens: st}))
		t.Cleanup(hubs[i].Close)
	}
	token := func(user string) string {
		_, secret, err := stores[0].CreateToken(ctx, user, "sync", 0)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	alice, bob := token("alice"), token("bob")
	post := func(hub int, tok string, body io.Reader) (*http.Response, error) {
		req, _ := http.NewRequest("POST", hubs[hub].URL+"/api/v1/sync/records", body)
		req.Header.Set("Authorization", "Bearer "+tok)
		return http.DefaultClient.Do(req)
	}

	// Two pushes of alice's held open on hub 0.
	host := loom.NewID()
	var held []*io.PipeWriter
	done := make(chan *http.Response, 2)
	t.Cleanup(func() {
		for _, pw := range held {
			pw.CloseWithError(io.ErrUnexpectedEOF)
		}
	})
	for range 2 {
		pr, pw := io.Pipe()
		go func() {
			resp, err := post(0, alice, pr)
			if err != nil {
				t.Error(err)
			}
			done <- resp
		}()
		// A push reads its body once it has its place: past what the
		// connection buffers, the place is held.
		io.WriteString(pw, `{"records":[`)
		pw.Write(bytes.Repeat([]byte{' '}, 32<<20))
		held = append(held, pw)
	}
	rec := func(host string, i int64, key string) map[string]any {
		h := synclog.Header{Host: synclog.HostID(host), Index: i, HLC: synclog.HLC(i << 16), KeyID: key}
		b, _ := h.MarshalBinary()
		return map[string]any{"host": host, "index": i, "header": b, "body": []byte("sealed")}
	}
	body := func(recs ...map[string]any) io.Reader {
		b, _ := json.Marshal(map[string]any{"records": recs})
		return bytes.NewReader(b)
	}
	resp, err := post(1, alice, body(rec(loom.NewID(), 1, "00000000000000a1")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a third push of alice's, on the other process: %d, want 429 with Retry-After", resp.StatusCode)
	}
	for i, pw := range held {
		fmt.Fprintf(pw, `{"host":%q,"index":%d,"body":"eA=="}]}`, host, i+1)
		pw.Close()
		if r := <-done; r == nil || r.StatusCode != http.StatusOK {
			t.Fatalf("held push %d: %v", i, r)
		}
	}

	// Bob's first pushes, sealed with two keys, on both processes at
	// once: one is stored, the other refused.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, key := range []string{"00000000000000b1", "00000000000000b2"} {
		wg.Go(func() {
			h := loom.NewID()
			resp, err := post(i, bob, body(rec(h, 1, key), rec(h, 2, key)))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
		t.Fatalf("two first pushes with two keys on two processes: %v, want one 200 and one 409", codes)
	}
	hosts, err := stores[1].SyncHosts(ctx, "bob")
	if err != nil || len(hosts) != 1 || hosts[0].Records != 2 {
		t.Fatalf("bob's hosts on the hub: %+v %v", hosts, err)
	}
}
