package openai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/loomhq/loom/internal/modelcall"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// wrapError turns a failed call's error into one line naming the provider
// and the HTTP status, wrapping the SDK's error (*openai.Error for an HTTP
// failure) so that errors.As finds it.
func wrapError(err error) error {
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		head := modelcall.StatusHead("openai", apiErr.StatusCode, http.StatusText(apiErr.StatusCode))
		detail := cmp.Or(apiErr.Message, apiErr.RawJSON())
		if apiErr.StatusCode == http.StatusNotFound {
			// Most often a model the server does not have (a local
			// server given OpenAI's default), or a base URL without /v1.
			detail += " (LOOM_MODEL chooses a model the server has; OPENAI_BASE_URL usually ends in /v1)"
		}
		return modelcall.Failed(head, detail, err)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		detail := string(streamErr.Event.Data)
		if json.Unmarshal(streamErr.Event.Data, &body) == nil {
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

// normalizeErrorBody rewrites the body of a failed response into OpenAI's
// {"error": {"message": ...}} shape when another server answered in its
// own (Ollama's {"error": "text"}, vLLM's {"message": ...}, FastAPI's
// {"detail": ...}, a proxy's HTML page). The SDK reads only OpenAI's shape
// and would otherwise lose the status behind a JSON decoding error.
func normalizeErrorBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res.StatusCode < 400 || res.Body == nil {
		return res, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil || !bytes.HasPrefix(bytes.TrimSpace(v.Error), []byte("{")) {
		msg := strings.TrimSpace(string(body))
		for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
			if len(raw) == 0 || string(raw) == "null" {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				msg = s
			} else {
				msg = string(raw)
			}
			break
		}
		body, _ = json.Marshal(map[string]any{"error": map[string]any{"message": msg}})
		res.Header.Set("Content-Type", "application/json")
		res.Header.Set("Content-Length", strconv.Itoa(len(body)))
		res.ContentLength = int64(len(body))
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}
