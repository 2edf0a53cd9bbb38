package loom

import (
	"context"
	"errors"
	"strings"
)

// IsIDPrefix reports whether ref could be the start of an id: hex digits
// and dashes only.
func IsIDPrefix(ref string) bool {
	for _, r := range ref {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'f', r >= 'A' && r <= 'F', r == '-':
		default:
			return false
		}
	}
	return true
}

// ShortIDLen is the fewest characters of an id loom prints on a
// terminal: time-ordered ids made within the same minute share their
// first 8, so a shown id is often longer (see RefLen).
const ShortIDLen = 8

// RefLen returns the shortest prefix length, at least ShortIDLen, at
// which each of ids resolves back to its own session among the scope's
// (Store.Resolve), so that an id loom prints can be typed back whatever
// else the store holds, not only among the rows shown. An id the scope
// does not hold (a trashed session listed) counts for ShortIDLen.
func RefLen(ctx context.Context, st Store, scope ResolveScope, ids []string) (int, error) {
	n := ShortIDLen
	for _, id := range ids {
		for n < len(id) {
			s, err := st.Resolve(ctx, id[:n], scope)
			if err == nil && s.ID == id {
				break
			}
			var le *Error
			if !errors.As(err, &le) || (le.Code != EAMBIGUOUS && le.Code != ENOTFOUND) {
				if err == nil {
					n++ // another session's key or title: longer
					continue
				}
				return 0, err
			}
			if le.Code == ENOTFOUND {
				break
			}
			// Past every candidate's common prefix with id.
			longer := n + 1
			for _, c := range le.Candidates {
				if c.ID != id {
					longer = max(longer, commonPrefix(c.ID, id)+1)
				}
			}
			n = min(longer, len(id))
		}
	}
	return n, nil
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// RefLookup is one way of finding sessions by a reference.
type RefLookup int

// Lookups, in the order references are resolved.
const (
	// RefByID finds the session with exactly this id.
	RefByID RefLookup = iota
	// RefByPrefix finds sessions whose id starts with this (lowercase)
	// prefix.
	RefByPrefix
	// RefByKey finds sessions with exactly this key.
	RefByKey
	// RefByTitle finds sessions with this title, case-insensitively.
	RefByTitle
)

// ResolveRef resolves ref the way every engine must, with find doing the
// engine's lookups (among the scope's user and live or trashed sessions):
// exact id, then a unique id prefix of at least 4 characters, then key
// (preferring the scope's project), then title. Several matches are an
// EAMBIGUOUS error listing them.
func ResolveRef(ref string, scope ResolveScope, find func(by RefLookup, value string) ([]*Session, error)) (*Session, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, Errorf(EINVALID, "empty session reference")
	}
	one := func(m []*Session, err error) (*Session, bool, error) {
		switch {
		case err != nil:
			return nil, true, err
		case len(m) == 1:
			return m[0], true, nil
		case len(m) > 1:
			return nil, true, Ambiguous(ref, m)
		}
		return nil, false, nil
	}
	if s, done, err := one(find(RefByID, ref)); done {
		return s, err
	}
	if len(ref) >= 4 && IsIDPrefix(ref) {
		if s, done, err := one(find(RefByPrefix, strings.ToLower(ref))); done {
			return s, err
		}
	}
	m, err := find(RefByKey, ref)
	if err != nil {
		return nil, err
	}
	if len(m) > 1 && scope.ProjectID != "" {
		for _, s := range m {
			if s.Project.ID == scope.ProjectID {
				return s, nil
			}
		}
	}
	if s, done, err := one(m, nil); done {
		return s, err
	}
	if s, done, err := one(find(RefByTitle, ref)); done {
		return s, err
	}
	if len(ref) < 4 && IsIDPrefix(ref) {
		return nil, Errorf(ENOTFOUND, "no session matches %q (an id prefix needs at least 4 characters)", ref)
	}
	return nil, NotFound(ref)
}
