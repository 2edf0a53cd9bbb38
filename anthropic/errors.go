package anthropic

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/loomhq/loom/internal/modelcall"
)

// Error is the error of a call the service failed: with an HTTP status
// of 400 or more, or with an error event in a stream that began well
// (StatusCode is then the stream's, 200). errors.As finds it in the
// errors of Stream.
type Error struct {
	StatusCode int
	// Type is the API's error type (overloaded_error, …), Message its
	// message; both are empty when the body is not the API's error shape.
	Type, Message string
	// Body is the error's body as it came.
	Body []byte
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s %s", e.StatusCode, http.StatusText(e.StatusCode), e.Body)
}

// apiError reads the API's {"type":"error","error":{"type":…,"message":…}}.
func apiError(status int, body []byte) *Error {
	e := &Error{StatusCode: status, Body: bytes.TrimSuffix(body, []byte("\n"))}
	var v struct {
		Error struct {
			Type    any `json:"type"`
			Message any `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(e.Body, &v) == nil {
		e.Type, _ = v.Error.Type.(string)
		e.Message, _ = v.Error.Message.(string)
	}
	return e
}

// wrapError turns a failed call's error into one line naming the provider
// and the HTTP status, wrapping the call's error (*Error for an API
// failure) so that errors.As finds it.
func wrapError(err error) error {
	var se *modelcall.StatusError
	if errors.As(err, &se) {
		err = apiError(se.StatusCode, se.Body)
	}
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		return modelcall.Failed("anthropic", err.Error(), err)
	}
	var head string
	if apiErr.StatusCode >= 400 {
		status := http.StatusText(apiErr.StatusCode)
		if status == "" {
			status = apiErr.Type // 529 overloaded_error
		}
		head = modelcall.StatusHead("anthropic", apiErr.StatusCode, status)
	} else {
		// An error event in a stream that began well.
		head = "anthropic: error in the response stream"
		if apiErr.Type != "" {
			head = fmt.Sprintf("anthropic: %s in the response stream", apiErr.Type)
		}
	}
	return modelcall.Failed(head, cmp.Or(apiErr.Message, string(apiErr.Body)), err)
}
