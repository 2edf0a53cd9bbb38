package hub

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The hub refuses a request it cannot take now with 429 (the user runs
// as many pushes as one user may) or 503 (the hub runs as many pushes as
// it takes, or its store did not answer in time), each with Retry-After;
// the client sends the request again after that wait, within bounds.
// Every request of the client is safe to send again: the reads only
// read, and a push stores its batch in one transaction in which a record
// the hub holds already is skipped (a refused push stored nothing, and
// one refused after its batch was stored stores nothing more).
const (
	// retryMaxWait caps one wait, whatever the hub asks.
	retryMaxWait = 10 * time.Second
	// retryBudget bounds the waits of one request, in all.
	retryBudget = time.Minute
	// retryTries bounds how often one request is sent: a hub that asks
	// for no wait is not asked without end.
	retryTries = 120
)

// retryAfter returns the wait a refusal that passes asks for (its
// Retry-After, in seconds or as a date), and false for any other
// answer: one without Retry-After is final.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		return time.Duration(min(n, uint64(retryMaxWait/time.Second))) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(at), 0), retryMaxWait), true
	}
	return 0, false
}

// retries is what one request has spent of its bounds.
type retries struct {
	refused int
	waited  time.Duration
}

// next counts one more refusal that asks for ask and returns how long to
// wait before the request is sent again: ask, at most retryMaxWait, less
// up to half of it at random, so that machines refused together do not
// come back together; false when the request's bounds are spent.
func (r *retries) next(ask time.Duration) (time.Duration, bool) {
	r.refused++
	d := min(ask, retryMaxWait)
	if half := d / 2; half > 0 {
		d -= rand.N(half)
	}
	if r.refused >= retryTries || r.waited+d > retryBudget {
		return 0, false
	}
	r.waited += d
	return d, true
}

// spent says, for the error of a request still refused when its bounds
// are spent, how often it was refused and how long it waited.
func (r *retries) spent() string {
	return fmt.Sprintf(" (refused %d times in %s of waiting)", r.refused, r.waited.Round(time.Second))
}
