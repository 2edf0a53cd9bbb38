package loom

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes. They are few on purpose: each edge maps them once, the
// command line to exit codes and the HTTP server to status codes.
const (
	EINTERNAL  = "internal"
	EINVALID   = "invalid"
	ENOTFOUND  = "not_found"
	EAMBIGUOUS = "ambiguous"
	ELOCKED    = "locked"
	ECONFLICT  = "conflict"
	// ENOSPACE is a store that cannot write for want of disk space.
	ENOSPACE = "no_space"
)

// Error is a coded domain error whose Message is fit to show a user.
type Error struct {
	Code    string
	Message string
	// Candidates lists the sessions an ambiguous reference could mean.
	Candidates []*Session
	// Holder is the lock that made an ELOCKED error.
	Holder *Lock
	// Err is the error it stands for, when another one (a driver's) is
	// the cause: for logs, never shown in its place.
	Err error
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause, nil when there is none.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns a coded error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, "" for nil
// and EINTERNAL for any other error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of err: the message of a
// coded error, or the whole wrapped text of any other.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// OutOfSpace reports that a store could not write because its disk (or
// its file's size limit) is full: cause is the engine's error, and the
// formatted message says which store and what to do.
func OutOfSpace(cause error, format string, args ...any) *Error {
	return &Error{Code: ENOSPACE, Message: fmt.Sprintf(format, args...), Err: cause}
}

// NotFound reports that no session matches ref.
func NotFound(ref string) *Error {
	return Errorf(ENOTFOUND, "no session matches %q", ref)
}

// Ambiguous reports that ref names several sessions, listing them.
func Ambiguous(ref string, candidates []*Session) *Error {
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches %d sessions:", ref, len(candidates))
	for i, s := range candidates {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s", s.ID)
		var about []string
		if s.Title != "" {
			about = append(about, s.Title)
		}
		if s.Project.Name != "" {
			about = append(about, "project "+s.Project.Name)
		}
		if len(about) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(about, ", "))
		}
	}
	return &Error{Code: EAMBIGUOUS, Message: b.String(), Candidates: candidates}
}

// Locked reports that another live process holds the session's lock.
func Locked(sessionID string, l *Lock) *Error {
	return &Error{
		Code:    ELOCKED,
		Message: fmt.Sprintf("session %s is in use by process %d on %s since %s", sessionID, l.PID, l.Host, FormatTime(l.Since)),
		Holder:  l,
	}
}
