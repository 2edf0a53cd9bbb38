package modelcall

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Error is a failed call's error: one line naming the provider, fit to
// show a user, wrapping the call's error so that errors.As finds it.
type Error struct {
	msg string
	err error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// Failed returns the error of a failed call: head, then ": " and detail
// folded to one line when there is any detail, wrapping err.
func Failed(head, detail string, err error) error {
	if detail = OneLine(detail); detail != "" {
		head += ": " + detail
	}
	return &Error{msg: head, err: err}
}

// StatusHead is the head of the error of a call the service failed with
// an HTTP status: the provider, the status code and its name.
func StatusHead(provider string, code int, name string) string {
	return strings.TrimSpace(fmt.Sprintf("%s: %d %s", provider, code, name))
}

// StreamEnd is how a streamed call ended once its stream is read: nil
// when the reply is complete; the context's error when the caller gave
// up, whatever the stream reports; classify(err) when the stream failed;
// else an error saying that the stream stopped before the reply was
// complete.
func StreamEnd(ctx context.Context, provider string, err error, complete bool, classify func(error) error) error {
	switch {
	case err == nil && complete:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return classify(err)
	}
	return errors.New(provider + ": the response stream ended before the reply was complete")
}

// OneLine folds text to a single line of bounded length.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const limit = 300
	if len(s) > limit {
		cut := limit
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
