package anthropic

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/loomhq/loom/internal/modelcall"
)

// wrapError turns a failed call's error into one line naming the provider
// and the HTTP status, wrapping the SDK's error (*anthropic.Error for an
// API failure) so that errors.As finds it.
func wrapError(err error) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return modelcall.Failed("anthropic", err.Error(), err)
	}
	var head string
	if apiErr.StatusCode >= 400 {
		status := http.StatusText(apiErr.StatusCode)
		if status == "" {
			status = string(apiErr.Type()) // 529 overloaded_error
		}
		head = modelcall.StatusHead("anthropic", apiErr.StatusCode, status)
	} else {
		// An error event in a stream that began well.
		head = "anthropic: error in the response stream"
		if t := apiErr.Type(); t != "" {
			head = fmt.Sprintf("anthropic: %s in the response stream", t)
		}
	}
	return modelcall.Failed(head, cmp.Or(apiErr.Message, apiErr.RawJSON()), err)
}
