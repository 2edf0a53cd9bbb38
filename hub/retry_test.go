package hub

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// refusal is one answer of a refusing hub: its status and Retry-After
// ("" for none).
type refusal struct {
	status int
	after  string
}

// refusingHub is a hub that refuses each request with the answers of
// refusals, in turn, then serves it: the hosts as one host, a push as
// stored.
type refusingHub struct {
	mu       sync.Mutex
	refusals []refusal
	// bodies holds the body of each request, as the hub read it.
	bodies []string
}

func (h *refusingHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(body)
	h.mu.Lock()
	h.bodies = append(h.bodies, string(b))
	var next *refusal
	if len(h.refusals) > 0 {
		next = &h.refusals[0]
		h.refusals = h.refusals[1:]
	}
	h.mu.Unlock()
	if next != nil {
		if next.after != "" {
			w.Header().Set("Retry-After", next.after)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(next.status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "too_many_requests", "message": "you have 2 sync pushes running, the most one user may; retry when one has ended"}})
		return
	}
	if r.Method == http.MethodPost {
		json.NewEncoder(w).Encode(Pushed{Stored: 1})
		return
	}
	json.NewEncoder(w).Encode(Hosts{Hosts: []Host{{Host: "h1", Last: 3}}, User: "alice"})
}

func (h *refusingHub) sent() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

// refusedClient returns a client of a hub that refuses as refusals say,
// and the hub; the client's waits are recorded, not slept.
func refusedClient(t *testing.T, refusals ...refusal) (*Client, *refusingHub, *[]time.Duration) {
	t.Helper()
	h := &refusingHub{refusals: refusals}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	var waits []time.Duration
	c := &Client{URL: ts.URL, Token: "t", after: func(d time.Duration) <-chan time.Time {
		waits = append(waits, d)
		now := make(chan time.Time, 1)
		now <- time.Time{}
		return now
	}}
	return c, h, &waits
}

// A refusal that passes (429 or 503 with Retry-After) is sent again after
// at most the wait it asks for, capped, and no less than half of it; the
// request that then passes is the answer.
func TestRetryAfterRefusals(t *testing.T) {
	ctx := context.Background()
	c, h, waits := refusedClient(t,
		refusal{http.StatusTooManyRequests, "2"},
		refusal{http.StatusServiceUnavailable, "1"},
		refusal{http.StatusTooManyRequests, "3600"},
		refusal{http.StatusServiceUnavailable, "0"},
		refusal{http.StatusTooManyRequests, time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)},
	)
	st, err := c.State(ctx)
	if err != nil || len(st.Hosts) != 1 || st.User != "alice" {
		t.Fatalf("state after refusals: %+v, %v", st, err)
	}
	if n := len(h.sent()); n != 6 {
		t.Fatalf("the hub got %d requests, want 6", n)
	}
	asked := []time.Duration{2 * time.Second, time.Second, retryMaxWait, 0, 0}
	if len(*waits) != len(asked) {
		t.Fatalf("waits %v, want %d", *waits, len(asked))
	}
	for i, d := range *waits {
		if d > asked[i] || d < asked[i]/2 {
			t.Errorf("wait %d is %s, asked %s: want from half of it to all of it", i, d, asked[i])
		}
	}
}

// A push refused is sent again whole, compressed as it was.
func TestRetryPush(t *testing.T) {
	ctx := context.Background()
	c, h, _ := refusedClient(t, refusal{http.StatusTooManyRequests, "5"}, refusal{http.StatusServiceUnavailable, "5"})
	recs := []loom.SyncRecord{{Host: "h1", Index: 1, Header: []byte("head"), Body: []byte(strings.Repeat("sealed ", compressFrom))}}
	if n, err := c.Own().Put(ctx, recs); err != nil || n != 1 {
		t.Fatalf("push after refusals: %d, %v", n, err)
	}
	bodies := h.sent()
	if len(bodies) != 3 {
		t.Fatalf("the hub got %d pushes, want 3", len(bodies))
	}
	for i, b := range bodies {
		var p Push
		if err := json.Unmarshal([]byte(b), &p); err != nil || len(p.Records) != 1 || string(p.Records[0].Store().Body) != string(recs[0].Body) {
			t.Fatalf("push %d is not the batch: %v", i+1, err)
		}
	}
}

// A refusal without Retry-After, or an error that does not pass, is the
// error at once.
func TestNoRetry(t *testing.T) {
	ctx := context.Background()
	for _, r := range []refusal{{http.StatusTooManyRequests, ""}, {http.StatusServiceUnavailable, "soon"}, {http.StatusInternalServerError, "1"}, {http.StatusConflict, "1"}} {
		c, h, waits := refusedClient(t, r)
		_, err := c.State(ctx)
		if err == nil || strings.Contains(err.Error(), "refused") || len(h.sent()) != 1 || len(*waits) != 0 {
			t.Errorf("%d with Retry-After %q: %v after %d requests", r.status, r.after, err, len(h.sent()))
		}
	}
}

// A hub that keeps refusing: the request is sent within its bounds, and
// the error is the hub's, in one line that says how often it was
// refused.
func TestRetryBounded(t *testing.T) {
	ctx := context.Background()
	for _, after := range []string{"0", "5", "3600"} {
		refusals := make([]refusal, retryTries+10)
		for i := range refusals {
			refusals[i] = refusal{http.StatusTooManyRequests, after}
		}
		c, h, waits := refusedClient(t, refusals...)
		_, err := c.State(ctx)
		if err == nil || loom.ErrorCode(err) != "too_many_requests" || !strings.Contains(err.Error(), "retry when one has ended (refused ") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Retry-After %s: %v", after, err)
		}
		var total time.Duration
		for _, d := range *waits {
			total += d
		}
		if n := len(h.sent()); n > retryTries || n != len(*waits)+1 || total > retryBudget {
			t.Fatalf("Retry-After %s: %d requests, waits %v (%s in all)", after, n, *waits, total)
		}
		if after == "0" && len(h.sent()) != retryTries {
			t.Fatalf("Retry-After 0: %d requests, want %d", len(h.sent()), retryTries)
		}
	}
}

// Ctrl+C while a refused request waits ends the wait at once: nothing is
// sent again, and the error is the context's.
func TestRetryCancelled(t *testing.T) {
	h := &refusingHub{refusals: []refusal{{http.StatusTooManyRequests, "5"}}}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan struct{})
	// A clock that never comes: only the cancel ends the wait.
	c := &Client{URL: ts.URL, Token: "t", after: func(time.Duration) <-chan time.Time {
		close(waiting)
		return nil
	}}
	done := make(chan error, 1)
	go func() {
		_, err := c.State(ctx)
		done <- err
	}()
	<-waiting
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while waiting: %v", err)
	}
	if n := len(h.sent()); n != 1 {
		t.Fatalf("the hub got %d requests, want 1", n)
	}
}
