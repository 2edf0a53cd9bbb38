package hub_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/synclog"
)

// The client speaks zstd both ways: a large push goes compressed, and it
// asks for pages compressed (not the transport's gzip), which the hub
// answers so; what it pulls is what it pushed.
func TestWireIsZstd(t *testing.T) {
	ctx := context.Background()
	st := open(t, "hub.db")
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
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	a := open(t, "a.db")
	if _, err := a.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	// Text that compresses little, so that the push is over 16 KiB.
	s := &loom.Session{UserID: "alice", Key: "cli:wire"}
	for range 20 {
		var text strings.Builder
		for range 10 {
			text.WriteString(rand.Text())
		}
		if err := a.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text.String()}}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.Push(ctx, a, key); err != nil || n != 21 {
		t.Fatalf("push = %d records, %v", n, err)
	}
	res, err := c.Pull(ctx, "", nil, key, func(synclog.Header, synclog.Payload) error { return nil })
	if err != nil || res.Applied != 21 {
		t.Fatalf("pull = %+v, %v", res, err)
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
