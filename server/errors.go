package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/loomhq/loom"
)

// Error codes of the HTTP edge, beside the store's (loom.ENOTFOUND …).
const (
	eUnauthorized = "unauthorized"
	// eForbidden refuses a token the request is beyond the scope of.
	eForbidden        = "forbidden"
	eUnavailable      = "unavailable"
	eTooLarge         = "too_large"
	eMethodNotAllowed = "method_not_allowed"
	// eTooMany refuses a user past their share of a limit (limiter).
	eTooMany = "too_many_requests"
)

// statusOf maps an error code to its HTTP status: the one place where
// store errors become statuses.
func statusOf(code string) int {
	switch code {
	case loom.EINVALID:
		return http.StatusBadRequest
	case loom.ENOTFOUND:
		return http.StatusNotFound
	case loom.EAMBIGUOUS, loom.ECONFLICT, loom.ELOCKED:
		return http.StatusConflict
	case eUnauthorized:
		return http.StatusUnauthorized
	case eForbidden:
		return http.StatusForbidden
	case eUnavailable:
		return http.StatusServiceUnavailable
	case eTooLarge:
		return http.StatusRequestEntityTooLarge
	case eMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case eTooMany:
		return http.StatusTooManyRequests
	case loom.ENOSPACE:
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

// What a client is told of a store out of disk space: the store's own
// message names its files.
const (
	outOfSpace    = "the server is out of disk space: free some on its machine, then try again"
	hubOutOfSpace = "the hub is out of disk space: free some on the hub's machine, then sync again"
)

// errorBody is the JSON shape of every error: {"error": {...}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Candidates are the ids an ambiguous reference could mean.
	Candidates []string `json:"candidates,omitempty"`
	// Lock is the holder of a locked session.
	Lock *loom.Lock `json:"lock,omitempty"`
}

// detailOf describes err for a client. The own text of an internal
// error, or of a store out of disk space, may name files or queries, so
// the client gets a stock message and the log gets the text.
func detailOf(err error) errorDetail {
	code := loom.ErrorCode(err)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errorDetail{Code: eTooLarge, Message: "request body is too large"}
	}
	switch code {
	case loom.EINTERNAL:
		return errorDetail{Code: code, Message: "internal error"}
	case loom.ENOSPACE:
		return errorDetail{Code: code, Message: outOfSpace}
	}
	d := errorDetail{Code: code, Message: loom.ErrorMessage(err)}
	var le *loom.Error
	if errors.As(err, &le) {
		for _, c := range le.Candidates {
			d.Candidates = append(d.Candidates, c.ID)
		}
		d.Lock = le.Holder
	}
	return d
}

// writeError answers with err's status and JSON body, logging internal
// errors and a full disk. A refusal that passes (a limit, a slow store)
// says when to retry.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	s.answerError(w, r, err, outOfSpace)
}

// writeHubError is writeError for the hub's endpoints, whose clients are
// told of a full disk as machines that sync.
func (s *Server) writeHubError(w http.ResponseWriter, r *http.Request, err error) {
	s.answerError(w, r, err, hubOutOfSpace)
}

// answerError is writeError, saying full of a full disk.
func (s *Server) answerError(w http.ResponseWriter, r *http.Request, err error, full string) {
	err = s.timedOut(r, err)
	setRetryAfter(w, err)
	d := detailOf(err)
	switch d.Code {
	case loom.EINTERNAL:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case loom.ENOSPACE:
		d.Message = full
		s.log.Error("request failed: out of disk space", "method", r.Method, "path", r.URL.Path, "err", causeOf(err))
	case eUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="loom"`)
	}
	writeJSON(w, statusOf(d.Code), errorBody{Error: d})
}

// causeOf is the text of err for the log: a coded error's message and
// its cause's, the engine's own words.
func causeOf(err error) string {
	var le *loom.Error
	if errors.As(err, &le) && le.Err != nil {
		return err.Error() + ": " + le.Err.Error()
	}
	return err.Error()
}

// codedError is an error of the HTTP edge with its code.
func codedError(code, format string, args ...any) error {
	return loom.Errorf(code, format, args...)
}

// writeJSON writes v as the JSON response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
	w.Write([]byte("\n"))
}
