package loom

import (
	"strings"
	"unicode/utf8"
)

// Limits of what a user may write into a session's metadata.
const (
	// MaxTitleBytes bounds a title a user gives a session.
	MaxTitleBytes = 200
	// MaxDescriptionBytes bounds a session's description.
	MaxDescriptionBytes = 10000
)

// ValidTitle checks a title a user gives a session (by renaming it or
// naming a fork): one line of UTF-8 without NUL bytes, of at most
// MaxTitleBytes bytes.
func ValidTitle(title string) error {
	switch {
	case len(title) > MaxTitleBytes:
		return Errorf(EINVALID, "title is longer than %d bytes", MaxTitleBytes)
	case strings.ContainsAny(title, "\r\n"):
		return Errorf(EINVALID, "title must be one line")
	}
	return validText("title", title)
}

// validText checks text a session is named or found by (a title, a
// key): UTF-8 without NUL bytes, which every engine can hold, so that a
// session is stored alike on each and no engine meets text it cannot
// store.
func validText(what, s string) error {
	switch {
	case !utf8.ValidString(s):
		return Errorf(EINVALID, "%s %q is not UTF-8", what, s)
	case strings.IndexByte(s, 0) >= 0:
		return Errorf(EINVALID, "%s holds a NUL byte", what)
	}
	return nil
}

// ValidDescription checks a session's description: at most
// MaxDescriptionBytes bytes.
func ValidDescription(desc string) error {
	if len(desc) > MaxDescriptionBytes {
		return Errorf(EINVALID, "description is longer than %d bytes", MaxDescriptionBytes)
	}
	return nil
}

// Validate checks the values u sets: the title (ValidTitle), the
// description (ValidDescription) and a key (ValidKey; an empty key
// removes the session's key).
func (u SessionUpdate) Validate() error {
	if u.Title != nil {
		if err := ValidTitle(*u.Title); err != nil {
			return err
		}
	}
	if u.Description != nil {
		if err := ValidDescription(*u.Description); err != nil {
			return err
		}
	}
	if u.Key != nil && *u.Key != "" {
		if err := ValidKey(*u.Key); err != nil {
			return err
		}
	}
	for _, f := range []*string{u.Team, u.Member} {
		if f != nil && (len(*f) > MaxKeyLen || strings.ContainsAny(*f, "\r\n\t\x00") || !utf8.ValidString(*f)) {
			return Errorf(EINVALID, "a team or member name is one line of UTF-8 of at most %d bytes", MaxKeyLen)
		}
	}
	return nil
}
