package hub_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sqlite"
)

// The client speaks zstd both ways: a large push goes compressed, and it
// asks for pages compressed (not the transport's gzip), which the hub
// answers so; what it reads back is what it put.
func TestWireIsZstd(t *testing.T) {
	ctx := context.Background()
	st := storetest.Must(sqlite.Open(ctx, filepath.Join(t.TempDir(), "hub.db")))(t)
	srv := server.New(server.Config{Store: st, Tokens: st})
	var mu sync.Mutex
	seen := map[string][]string{} // method → what each request said and was answered
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == hub.RecordsPath {
			// Noted as the answer's header goes, before the client
			// can have read the answer.
			said := "sent " + r.Header.Get("Content-Encoding") + ", accepts " + r.Header.Get("Accept-Encoding") + ", answered "
			w = &noteHeader{ResponseWriter: w, note: func(h http.Header) {
				mu.Lock()
				seen[r.Method] = append(seen[r.Method], said+h.Get("Content-Encoding"))
				mu.Unlock()
			}}
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	_, secret, err := st.CreateToken(ctx, "alice", "laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	c := &hub.Client{URL: ts.URL, Token: secret}
	// Bodies that compress little, so that the push is over 16 KiB.
	host := loom.NewID()
	var recs []loom.SyncRecord
	for i := range 21 {
		body := make([]byte, 1024)
		rand.Read(body)
		recs = append(recs, loom.SyncRecord{Host: host, Index: int64(i + 1), Header: []byte("header"), Body: body})
	}
	if n, err := c.Own().Put(ctx, recs); err != nil || n != 21 {
		t.Fatalf("put = %d records, %v", n, err)
	}
	got, _, err := c.Own().Records(ctx, host, 0, 100)
	if err != nil || !slices.EqualFunc(got, recs, func(a, b loom.SyncRecord) bool {
		return a.Host == b.Host && a.Index == b.Index && bytes.Equal(a.Header, b.Header) && bytes.Equal(a.Body, b.Body)
	}) {
		t.Fatalf("read back %d records, %v; want the 21 put", len(got), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "sent zstd, accepts zstd, answered "; len(seen["POST"]) != 1 || seen["POST"][0] != want {
		t.Errorf("the push: %q, want %q", seen["POST"], want)
	}
	if want := "sent , accepts zstd, answered zstd"; len(seen["GET"]) == 0 || seen["GET"][0] != want {
		t.Errorf("the pull: %q, want %q", seen["GET"], want)
	}
}

// noteHeader hands the answer's header to note when it is written.
type noteHeader struct {
	http.ResponseWriter
	note func(http.Header)
}

func (w *noteHeader) WriteHeader(status int) {
	w.note(w.Header())
	w.ResponseWriter.WriteHeader(status)
}
