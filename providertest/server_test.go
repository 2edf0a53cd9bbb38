package providertest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom/providertest"
)

// newEcho starts a server that answers each request with the next
// scripted reply, or with Echo.
func newEcho(t *testing.T) *providertest.Server[string] {
	t.Helper()
	s := providertest.NewServer(func(w http.ResponseWriter, r *http.Request, x *providertest.Exchange[string]) {
		reply, taken := x.Take(func() string { return providertest.Echo(x.Req.Body) })
		providertest.WriteJSON(w, http.StatusOK, map[string]any{"reply": reply, "request": x.N, "taken": taken})
	})
	t.Cleanup(s.Close)
	return s
}

func post(t *testing.T, url, body string) string {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func TestScriptThenEcho(t *testing.T) {
	s := newEcho(t)
	s.Enqueue("one", "two")
	for _, want := range []string{
		`{"reply":"one","request":1,"taken":1}`,
		`{"reply":"two","request":2,"taken":2}`,
		`{"reply":"echo: hi <b>","request":3,"taken":3}`,
	} {
		got := post(t, s.URL+"/x", `{"messages":[{"role":"user","content":[{"type":"text","text":"hi <b>"}]}]}`)
		if strings.TrimSpace(got) != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[0].Method != "POST" || reqs[0].Path != "/x" || reqs[0].Body["messages"] == nil ||
		reqs[0].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("requests %+v", reqs)
	}
	post(t, s.URL, "not json")
	if r := s.Requests()[3]; r.Body != nil || string(r.Raw) != "not json" {
		t.Fatalf("non-JSON request recorded as %+v", r)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := newEcho(t)
	const n = 20
	for i := range n {
		s.Enqueue(fmt.Sprint(i))
	}
	var wg sync.WaitGroup
	seen := make(chan string, n)
	for range n {
		wg.Go(func() {
			seen <- post(t, s.URL, `{}`)
			s.Requests()
		})
	}
	wg.Wait()
	close(seen)
	got := map[string]bool{}
	for body := range seen {
		got[body[:strings.Index(body, ",")]] = true
	}
	if len(got) != n || s.Queued() != 0 || len(s.Requests()) != n {
		t.Fatalf("%d distinct replies, %d queued, %d requests", len(got), s.Queued(), len(s.Requests()))
	}
}

func TestEventsAndClose(t *testing.T) {
	s := providertest.NewServer(func(w http.ResponseWriter, r *http.Request, x *providertest.Exchange[string]) {
		ev := x.StartEvents(10 * time.Millisecond)
		ev.Send("named", map[string]any{"a": 1})
		ev.Send("", []int{2})
		ev.Raw("", "[DONE]")
		x.Hang() // until the server closes
	})
	res, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	want := "event: named\ndata: {\"a\":1}\n\ndata: [2]\n\ndata: [DONE]\n\n"
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(res.Body, buf); err != nil || string(buf) != want {
		t.Fatalf("read %q, %v", buf, err)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not release the hanging response")
	}
}

func TestSetRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		status    int
		ms, whole string
		delay     time.Duration
	}{
		{429, "1500", "2", 1500 * time.Millisecond},
		{503, "0", "0", 0},
		{400, "", "", time.Second},
	} {
		h := http.Header{}
		providertest.SetRetryAfter(headerWriter(h), tt.status, tt.delay)
		if h.Get("Retry-After-Ms") != tt.ms || h.Get("Retry-After") != tt.whole {
			t.Errorf("%d: %v", tt.status, h)
		}
	}
}

type headerWriter http.Header

func (h headerWriter) Header() http.Header         { return http.Header(h) }
func (h headerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (h headerWriter) WriteHeader(int)             {}

func TestChunksAndPieces(t *testing.T) {
	if got := providertest.Chunks("Hi  there\nyou"); strings.Join(got, "|") != "Hi  |there\n|you" {
		t.Fatalf("Chunks = %q", got)
	}
	if got := providertest.Pieces(`{"a":"0123456789"}`); strings.Join(got, "|") != `{"a":"0|1234567|89"}` {
		t.Fatalf("Pieces = %q", got)
	}
	calls := []providertest.ToolCall{{Name: "f", Args: `{"a":"0123456789"}`}}
	if n := providertest.OutputTokens("think it", "say", calls); n != 2+1+1+3 {
		t.Fatalf("OutputTokens = %d", n)
	}
}
