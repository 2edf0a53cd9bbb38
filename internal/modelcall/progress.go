package modelcall

import (
	"io"

	"github.com/loomhq/loom"
)

// progressBody tells onEvent of every read of a response body that brings
// bytes, as an EventProgress (Request.OnEvent). The caller of a stream
// thus hears of everything the service sends, also what no event shows
// (keep-alive comments, a tool call's input), and can tell a silent
// stream from a busy one.
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
