package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// reqInfo is what handlers tell the access log about a request.
type reqInfo struct {
	user string
}

type infoKey struct{}

func infoOf(r *http.Request) *reqInfo {
	if ri, ok := r.Context().Value(infoKey{}).(*reqInfo); ok {
		return ri
	}
	return &reqInfo{}
}

// recorder notes the status and size of a response for the access log.
// Unwrap lets http.ResponseController reach the connection (flushes and
// deadlines).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (rw *recorder) WriteHeader(code int) {
	if rw.status == 0 {
		rw.status = code
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recorder) Write(b []byte) (int, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	n, err := rw.ResponseWriter.Write(b)
	rw.bytes += int64(n)
	return n, err
}

func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// Flush implements http.Flusher for code that asks for it directly.
func (rw *recorder) Flush() {
	http.NewResponseController(rw.ResponseWriter).Flush()
}

// wrap is the middleware every request passes: security headers, a write
// deadline (event streams lift it), panic recovery, and one structured
// access-log line. The log has the path but never the query, which may
// carry a token.
func (s *Server) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &reqInfo{}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, ri))
		rw := &recorder{ResponseWriter: w}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
				if rw.status == 0 {
					writeJSON(rw, http.StatusInternalServerError, errorBody{Error: errorDetail{Code: "internal", Message: "internal error"}})
				}
			}
			level := slog.LevelInfo
			switch {
			case rw.status == http.StatusServiceUnavailable:
				level = slog.LevelWarn // a state of the server, said once at start
			case rw.status >= 500:
				level = slog.LevelError
			}
			s.log.LogAttrs(r.Context(), level, "http",
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", rw.status),
				slog.Int64("bytes", rw.bytes),
				slog.Float64("ms", float64(time.Since(start).Microseconds())/1000),
				slog.String("user", ri.user),
				slog.String("remote", r.RemoteAddr),
			)
		}()
		next.ServeHTTP(rw, r)
	})
}
