package modelcall

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/loomhq/loom"
)

// Endpoint is where a provider sends its calls and how: the URL, the
// headers every call carries, the client that makes them and how often a
// failed one is retried. Both providers post their calls through it, so
// that a call is encoded, sent and failed the same way whatever its
// protocol.
type Endpoint struct {
	URL    string
	Header http.Header
	// Client makes the requests; nil means http.DefaultClient.
	Client     *http.Client
	MaxRetries int
	// AnyRetryAfter is Request.AnyRetryAfter.
	AnyRetryAfter bool
}

// Send posts params, as JSON, to the endpoint (Post) and returns the
// response for the caller to read and close. A call that fails returns
// the context's error when the caller gave up, else the post's error as
// classify words it; params that cannot be encoded fail as provider's.
func (e Endpoint) Send(ctx context.Context, provider string, params any, onEvent func(loom.StreamEvent), classify func(error) error) (*http.Response, error) {
	body, err := json.Marshal(params)
	if err != nil {
		return nil, Failed(provider, err.Error(), err)
	}
	res, err := Post(ctx, Request{
		Client: e.Client, URL: e.URL, Header: e.Header, Body: body,
		MaxRetries: e.MaxRetries, AnyRetryAfter: e.AnyRetryAfter, OnEvent: onEvent,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, classify(err)
	}
	return res, nil
}
