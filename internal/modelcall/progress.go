package modelcall

import (
	"io"
	"net/http"

	"github.com/loomhq/loom"
)

// Progress is an HTTP middleware, of the shape both services' SDKs take
// (option.WithMiddleware), that tells onEvent (when not nil) of every
// read of a response body that brings bytes, as an EventProgress. The
// caller of a stream thus hears of everything the service sends, also
// what the SDK never shows (keep-alive comments, a tool call's input),
// and can tell a silent stream from a busy one.
func Progress(onEvent func(loom.StreamEvent)) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		if onEvent != nil && res != nil && res.Body != nil {
			res.Body = &progressBody{ReadCloser: res.Body, onEvent: onEvent}
		}
		return res, err
	}
}

type progressBody struct {
	io.ReadCloser
	onEvent func(loom.StreamEvent)
}

func (b *progressBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.onEvent(loom.StreamEvent{Kind: loom.EventProgress})
	}
	return n, err
}
