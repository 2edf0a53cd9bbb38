package modelcall

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRetryDelay(t *testing.T) {
	res := func(h ...string) *http.Response {
		r := &http.Response{StatusCode: 429, Header: http.Header{}}
		for i := 0; i < len(h); i += 2 {
			r.Header.Set(h[i], h[i+1])
		}
		return r
	}
	for _, tt := range []struct {
		name    string
		res     *http.Response
		attempt int
		anyWait bool
		min     time.Duration
		max     time.Duration
		ok      bool
	}{
		{"ms first", res("Retry-After-Ms", "250", "Retry-After", "9"), 0, false, 250 * time.Millisecond, 250 * time.Millisecond, true},
		{"seconds", res("Retry-After", "3"), 0, false, 3 * time.Second, 3 * time.Second, true},
		{"date", res("Retry-After", time.Now().Add(10*time.Second).UTC().Format(http.TimeFormat)), 0, false, 8 * time.Second, 10 * time.Second, true},
		{"past date", res("Retry-After", time.Now().Add(-time.Minute).UTC().Format(http.TimeFormat)), 0, false, 0, 0, true},
		{"over the limit", res("Retry-After", "600"), 0, false, 0, 0, false},
		{"any wait", res("Retry-After", "600"), 0, true, 10 * time.Minute, 10 * time.Minute, true},
		{"backoff", res(), 0, false, 375 * time.Millisecond, 500 * time.Millisecond, true},
		{"backoff doubles", res(), 2, false, 1500 * time.Millisecond, 2 * time.Second, true},
		{"backoff capped", res(), 40, false, 6 * time.Second, 8 * time.Second, true},
		{"connection error", nil, 1, false, 750 * time.Millisecond, time.Second, true},
	} {
		d, ok := retryDelay(tt.res, tt.attempt, tt.anyWait)
		if ok != tt.ok || d < tt.min || d > tt.max {
			t.Errorf("%s: %v %v, want %v..%v %v", tt.name, d, ok, tt.min, tt.max, tt.ok)
		}
	}
}

func TestRetryable(t *testing.T) {
	for _, tt := range []struct {
		status int
		header string
		want   bool
	}{
		{408, "", true}, {409, "", true}, {429, "", true}, {500, "", true}, {529, "", true},
		{400, "", false}, {401, "", false}, {404, "", false},
		{400, "true", true}, {503, "false", false},
	} {
		r := &http.Response{StatusCode: tt.status, Header: http.Header{}}
		if tt.header != "" {
			r.Header.Set("x-should-retry", tt.header)
		}
		if got := retryable(r); got != tt.want {
			t.Errorf("%d x-should-retry %q: %v", tt.status, tt.header, got)
		}
	}
	if !retryable(nil) {
		t.Error("a connection error is not retried")
	}
}

func TestEventReader(t *testing.T) {
	in := ": keep-alive\n\nevent: a\ndata: one\ndata:two\n\nevent: empty\n\ndata: {\"x\":1}\n\ndata: cut"
	r := NewEventReader(strings.NewReader(in))
	var got []string
	for r.Next() {
		e := r.Event()
		got = append(got, e.Type+"="+string(e.Data))
	}
	want := []string{"a=one\ntwo\n", "={\"x\":1}\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") || r.Err() != nil {
		t.Fatalf("events %q, err %v; want %q", got, r.Err(), want)
	}
}

// TestPostRedirects checks that a redirect within the service is
// followed and one to another origin, which would take the API key
// there, fails the call at once.
func TestPostRedirects(t *testing.T) {
	var elsewhere, home int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere++
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		home++
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/v1", http.StatusTemporaryRedirect)
		case "/away":
			http.Redirect(w, r, other.URL+"/v1", http.StatusTemporaryRedirect)
		default:
			io.Copy(w, r.Body)
		}
	}))
	defer srv.Close()
	post := func(path string) (*http.Response, error) {
		return Post(context.Background(), Request{URL: srv.URL + path, Header: http.Header{"X-Api-Key": {"k"}}, Body: []byte("hi"), MaxRetries: 2})
	}
	res, err := post("/moved")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "hi" || home != 2 {
		t.Fatalf("body %q after %d requests", body, home)
	}
	home = 0
	if _, err := post("/away"); !errors.Is(err, ErrOtherOrigin) || home != 1 || elsewhere != 0 {
		t.Fatalf("error %v after %d requests here, %d elsewhere", err, home, elsewhere)
	}
}
