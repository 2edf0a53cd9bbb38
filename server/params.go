package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// query reads the URL's query parameters with validation.
type query struct {
	v   map[string][]string
	err error
}

func newQuery(r *http.Request) *query { return &query{v: r.URL.Query()} }

func (q *query) str(name string) string {
	if vs := q.v[name]; len(vs) > 0 {
		return strings.TrimSpace(vs[0])
	}
	return ""
}

func (q *query) int(name string, def, lo, hi int) int {
	s := q.str(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		q.fail("%s must be a whole number from %d to %d", name, lo, hi)
		return def
	}
	return n
}

func (q *query) seq(name string) int64 { return q.count(name, "a message seq") }

// count reads a whole number, 0 or more, that what names; 0 when absent.
func (q *query) count(name, what string) int64 {
	s := q.str(name)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		q.fail("%s must be %s (a whole number, 0 or more)", name, what)
		return 0
	}
	return n
}

func (q *query) bool(name string) bool {
	s := q.str(name)
	if s == "" {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		q.fail("%s must be true or false", name)
	}
	return b
}

func (q *query) time(name string) time.Time {
	s := q.str(name)
	if s == "" {
		return time.Time{}
	}
	t, err := loom.ParseTime(s)
	if err != nil {
		q.fail("%s must be an RFC 3339 time", name)
	}
	return t
}

func (q *query) kind(name string) string {
	k := q.str(name)
	switch k {
	case "", loom.KindMain, loom.KindFork, loom.KindSubagent:
		return k
	}
	q.fail("%s must be main, fork or subagent", name)
	return ""
}

func (q *query) fail(format string, args ...any) {
	if q.err == nil {
		q.err = loom.Errorf(loom.EINVALID, format, args...)
	}
}

// decode reads a JSON object body into v, refusing unknown fields and
// bodies over the size limit.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if errors.Is(err, io.EOF) {
			return loom.Errorf(loom.EINVALID, "request body must be a JSON object")
		}
		return loom.Errorf(loom.EINVALID, "invalid JSON body: %s", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return loom.Errorf(loom.EINVALID, "request body must hold one JSON object")
	}
	return nil
}

// zone is the time zone ?tz= names, time.Local when it names none.
func (q *query) zone() *time.Location {
	tz := q.str("tz")
	if tz == "" {
		return time.Local
	}
	l, err := time.LoadLocation(tz)
	if err != nil {
		q.fail("tz %q is not a time zone: use an IANA name such as Europe/Berlin, or UTC", tz)
		return time.Local
	}
	return l
}
