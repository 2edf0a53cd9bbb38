package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

func testRetry(t *testing.T, s Suite) {
	for _, status := range s.RetryStatuses {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			p, f := s.start(t, 0)
			f.Script(Script{Status: status}, Script{Text: "second time lucky"})
			resp, err := p.Stream(context.Background(), s.request("hi"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Parts[0].Text != "second time lucky" || resp.Usage.APICalls != 1 {
				t.Fatalf("response %+v", resp)
			}
			reqs := f.Requests()
			if len(reqs) != 2 || string(reqs[0].Raw) != string(reqs[1].Raw) {
				t.Fatalf("server saw %d requests, want the same one twice", len(reqs))
			}
		})
	}
}

func testRetryHonoursRetryAfter(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	f.Script(Script{Status: 429, RetryAfter: 300 * time.Millisecond}, Script{Text: "ok"})
	start := time.Now()
	if _, err := p.Stream(context.Background(), s.request("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("retried after %v, before the server's Retry-After", d)
	}
	if n := len(f.Requests()); n != 2 {
		t.Fatalf("%d requests", n)
	}
}

// testPersistentFailure also checks that a failure reaches the user as
// one line, naming the provider and the status, with the SDK's error
// still found by errors.As.
func testPersistentFailure(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	for range 5 {
		f.Script(Script{Status: 500, Error: "The server had an error.\nTry again."})
	}
	resp, err := p.Stream(context.Background(), s.request("hi"), nil)
	if err == nil || resp != nil {
		t.Fatalf("got %+v, %v; want an error", resp, err)
	}
	if got, want := err.Error(), s.Name+": 500 Internal Server Error: The server had an error. Try again."; got != want {
		t.Fatalf("error %q, want %q", got, want)
	}
	if code, ok := s.StatusCode(err); !ok || code != 500 {
		t.Fatalf("the SDK's error is not found in %#v", err)
	}
	if n := len(f.Requests()); n != 1+s.DefaultMaxRetries {
		t.Fatalf("server saw %d requests, want %d", n, 1+s.DefaultMaxRetries)
	}
}

func testMaxRetries(t *testing.T, s Suite) {
	for _, tt := range []struct{ maxRetries, requests int }{{-1, 1}, {1, 2}, {4, 5}} {
		p, f := s.start(t, tt.maxRetries)
		for range 6 {
			f.Script(Script{Status: 502, Error: "upstream down"})
		}
		_, err := p.Stream(context.Background(), s.request("hi"), nil)
		if want := s.Name + ": 502 Bad Gateway: upstream down"; err == nil || err.Error() != want {
			t.Fatalf("MaxRetries %d: error %v, want %q", tt.maxRetries, err, want)
		}
		if n := len(f.Requests()); n != tt.requests {
			t.Errorf("MaxRetries %d: %d requests, want %d", tt.maxRetries, n, tt.requests)
		}
	}
}

func testClientErrorIsNotRetried(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	f.Script(Script{Status: 401, Error: "Invalid API key."})
	_, err := p.Stream(context.Background(), s.request("hi"), nil)
	if want := s.Name + ": 401 Unauthorized: Invalid API key."; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if n := len(f.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

// testNonJSONErrorBody covers a proxy in front of the service that
// answers a failure with a page of its own.
func testNonJSONErrorBody(t *testing.T, s Suite) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html>\n<body>upstream down</body>\n</html>")
	}))
	defer srv.Close()
	p := s.New(Config{BaseURL: srv.URL, APIKey: "test-key", MaxRetries: -1})
	_, err := p.Stream(context.Background(), s.request("hi"), nil)
	if want := s.Name + ": 502 Bad Gateway: <html> <body>upstream down</body> </html>"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// testDefaultBaseURL checks that a provider goes to its service whatever
// the environment says, and that a connection failure reaches the user
// as one line naming the provider.
func testDefaultBaseURL(t *testing.T, s Suite) {
	t.Setenv(s.BaseURLEnv, "http://127.0.0.1:1")
	var got string
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r.URL.String()
		return nil, errors.New("no network\nin tests")
	})}
	p := s.New(Config{APIKey: "test-key", HTTPClient: client, MaxRetries: -1})
	_, err := p.Stream(context.Background(), s.request("hi"), nil)
	if got != s.DefaultURL {
		t.Fatalf("request went to %q, want %q", got, s.DefaultURL)
	}
	if err == nil || !strings.HasPrefix(err.Error(), s.Name+": ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %q", err)
	}
}

func testBadToolSchema(t *testing.T, s Suite) {
	p, f := s.start(t, 0)
	req := s.request("hi")
	req.Tools = []loom.ToolSpec{{Name: "broken", Schema: json.RawMessage(`["not", "an", "object"]`)}}
	_, err := p.Stream(context.Background(), req, nil)
	if want := s.Name + ": tool broken: schema is not a JSON object"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("%d requests", n)
	}
}
