package modelcall

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/loomhq/loom"
)

// StatusError is the error of a call the service answered with a failure
// status (400 or more): the status and up to 1 MiB of the body.
type StatusError struct {
	StatusCode int
	Body       []byte
}

func (e *StatusError) Error() string {
	return strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode)
}

// Request is one POST of a JSON body to a model service.
type Request struct {
	// Client makes the request; nil means http.DefaultClient.
	Client *http.Client
	URL    string
	Header http.Header
	Body   []byte
	// MaxRetries is how often the call is retried after a connection
	// error or a status 408, 409, 429 or 5xx (unless the service says
	// x-should-retry: false): after the delay Retry-After-Ms or
	// Retry-After asks for, else 0.5 s doubling on each retry up to 8 s,
	// less up to a quarter of random jitter.
	MaxRetries int
	// AnyRetryAfter waits as long as the service asks; else a call whose
	// service asks for more than two minutes fails at once. (OpenAI's
	// SDK had the limit, Anthropic's has none.)
	AnyRetryAfter bool
	// OnEvent, when not nil, is told an EventProgress for every read of
	// the response body that brings bytes.
	OnEvent func(loom.StreamEvent)
}

// ErrOtherOrigin is the error of a call the service redirected to
// another origin (scheme, host and port): the request carries the API
// key, so it is never followed there, as OpenAI's SDK never did.
var ErrOtherOrigin = errors.New("redirected to another origin")

// Post sends r, retrying as r.MaxRetries says, and returns the response of
// the last attempt when its status is below 400 (its body for the caller
// to read and close), a *StatusError when it is not, the context's error
// when the caller gave up, or the last connection error.
func Post(ctx context.Context, r Request) (*http.Response, error) {
	client := &http.Client{}
	if r.Client != nil {
		c := *r.Client
		client = &c
	}
	next := client.CheckRedirect
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if first := via[0].URL; req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return ErrOtherOrigin
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
		if err != nil {
			return nil, err
		}
		req.Header = r.Header.Clone()
		res, err := client.Do(req)
		if ctx.Err() != nil {
			if res != nil {
				res.Body.Close()
			}
			return nil, ctx.Err()
		}
		if err == nil && res.StatusCode < 400 {
			if r.OnEvent != nil {
				res.Body = &progressBody{ReadCloser: res.Body, onEvent: r.OnEvent}
			}
			return res, nil
		}
		var failure error = err
		if err == nil {
			body, rerr := io.ReadAll(io.LimitReader(res.Body, 1<<20))
			res.Body.Close()
			if rerr != nil {
				return nil, rerr
			}
			failure = &StatusError{StatusCode: res.StatusCode, Body: body}
		}
		if attempt >= r.MaxRetries || !retryable(res) || errors.Is(err, ErrOtherOrigin) {
			return nil, failure
		}
		delay, ok := retryDelay(res, attempt, r.AnyRetryAfter)
		if !ok {
			return nil, failure
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// retryable says whether an attempt that ended with res (nil after a
// connection error) is worth another.
func retryable(res *http.Response) bool {
	if res == nil {
		return true
	}
	switch res.Header.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	c := res.StatusCode
	return c == http.StatusRequestTimeout || c == http.StatusConflict || c == http.StatusTooManyRequests || c >= 500
}

const (
	maxRetryAfter = 2 * time.Minute
	maxBackoff    = 8 * time.Second
)

// retryDelay is how long to wait before retry number attempt+1, and false
// when the service asks for a wait longer than maxRetryAfter (unless any
// is allowed).
func retryDelay(res *http.Response, attempt int, anyWait bool) (time.Duration, bool) {
	limit := maxRetryAfter
	if anyWait {
		limit = math.MaxInt64
	}
	if res != nil {
		for _, h := range []struct {
			name string
			unit time.Duration
		}{{"Retry-After-Ms", time.Millisecond}, {"Retry-After", time.Second}} {
			v := res.Header.Get(h.name)
			if v == "" {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err == nil && !math.IsNaN(f) && f >= 0 {
				if math.IsInf(f, 1) || f*float64(h.unit) > float64(limit) {
					return 0, false
				}
				return time.Duration(f * float64(h.unit)), true
			}
			if errors.Is(err, strconv.ErrRange) && f > 0 {
				return 0, false
			}
			if h.unit == time.Second {
				if at, err := time.Parse(time.RFC1123, v); err == nil {
					d := time.Until(at)
					if d > limit {
						return 0, false
					}
					return max(d, 0), true
				}
			}
		}
	}
	d := maxBackoff
	if attempt < 5 {
		d = min(maxBackoff, time.Duration(float64(500*time.Millisecond)*math.Pow(2, float64(attempt))))
	}
	if j := int64(d / 4); j > 0 {
		d -= time.Duration(rand.Int64N(j))
	}
	return d, true
}

// Event is one event of a text/event-stream.
type Event struct {
	Type string
	// Data is the event's data lines, each followed by a newline.
	Data []byte
}

// EventReader reads the events of a text/event-stream.
type EventReader struct {
	scn *bufio.Scanner
	evt Event
}

// NewEventReader returns a reader of the events in r, whose lines may be
// up to 32 MiB long.
func NewEventReader(r io.Reader) *EventReader {
	scn := bufio.NewScanner(r)
	scn.Buffer(nil, bufio.MaxScanTokenSize<<9)
	return &EventReader{scn: scn}
}

// Next reads the next event with data, false at the end of the stream or
// on a read error (Err).
func (e *EventReader) Next() bool {
	typ := ""
	var data []byte
	for e.scn.Scan() {
		line := e.scn.Bytes()
		if len(line) == 0 {
			if len(data) == 0 {
				typ = ""
				continue
			}
			e.evt = Event{Type: typ, Data: data}
			return true
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "event":
			typ = string(value)
		case "data":
			data = append(data, value...)
			data = append(data, '\n')
		}
	}
	return false
}

// Event is the event Next read.
func (e *EventReader) Event() Event { return e.evt }

// Err is the error that stopped Next, nil at the end of the stream.
func (e *EventReader) Err() error { return e.scn.Err() }
