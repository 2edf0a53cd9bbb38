package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/loomhq/loom/internal/modelcall"
)

// wrapError turns a failed call's error into one line naming the provider
// and the HTTP status, wrapping the call's error (*Error for an HTTP
// failure) so that errors.As finds it.
func wrapError(err error) error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		head := modelcall.StatusHead("openai", apiErr.StatusCode, http.StatusText(apiErr.StatusCode))
		detail := errorMessage(apiErr.Body)
		if apiErr.StatusCode == http.StatusNotFound {
			// Most often a model the server does not have (a local
			// server given OpenAI's default), or a base URL without /v1.
			detail += " (LOOM_MODEL chooses a model the server has; OPENAI_BASE_URL usually ends in /v1)"
		}
		return modelcall.Failed(head, detail, err)
	}
	var streamErr *streamError
	if errors.As(err, &streamErr) {
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		detail := string(streamErr.data)
		if json.Unmarshal(streamErr.data, &body) == nil {
			var e struct {
				Message string `json:"message"`
			}
			var s string
			switch {
			case json.Unmarshal(body.Error, &e) == nil && e.Message != "":
				detail = e.Message
			case json.Unmarshal(body.Error, &s) == nil && s != "":
				detail = s
			}
		}
		return modelcall.Failed("openai: error in the response stream", detail, err)
	}
	return modelcall.Failed("openai", err.Error(), err)
}

// errorMessage is what the body of a failed response says: the message
// of OpenAI's {"error": {"message": ...}}, else the error object itself;
// the text of another server's own shape (Ollama's {"error": "text"},
// vLLM's {"message": ...}, FastAPI's {"detail": ...}); else the body, as
// a proxy's HTML page.
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil && bytes.HasPrefix(bytes.TrimSpace(v.Error), []byte("{")) {
		var e struct {
			Message any `json:"message"`
		}
		if json.Unmarshal(v.Error, &e) == nil {
			if s, ok := e.Message.(string); ok && s != "" {
				return s
			}
		}
		return string(v.Error)
	}
	for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	return strings.TrimSpace(string(body))
}
