package sqlstore

import (
	"strings"

	"github.com/loomhq/loom"
)

// Lookup is one way of finding sessions by a reference.
type Lookup int

// Lookups, in the order references are resolved.
const (
	// ByID finds the session with exactly this id.
	ByID Lookup = iota
	// ByPrefix finds sessions whose id starts with this (lowercase)
	// prefix.
	ByPrefix
	// ByKey finds sessions with exactly this key.
	ByKey
	// ByTitle finds sessions with this title, case-insensitively.
	ByTitle
)

// ResolveWith resolves ref the way every engine must, with find doing the
// engine's lookups (among the scope's user and live or trashed sessions):
// exact id, then a unique id prefix of at least 4 characters, then key
// (preferring the scope's project), then title. Several matches are an
// EAMBIGUOUS error listing them.
func ResolveWith(ref string, scope loom.ResolveScope, find func(by Lookup, value string) ([]*loom.Session, error)) (*loom.Session, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, loom.Errorf(loom.EINVALID, "empty session reference")
	}
	one := func(m []*loom.Session, err error) (*loom.Session, bool, error) {
		switch {
		case err != nil:
			return nil, true, err
		case len(m) == 1:
			return m[0], true, nil
		case len(m) > 1:
			return nil, true, loom.Ambiguous(ref, m)
		}
		return nil, false, nil
	}
	if s, done, err := one(find(ByID, ref)); done {
		return s, err
	}
	if len(ref) >= 4 && loom.IsIDPrefix(ref) {
		if s, done, err := one(find(ByPrefix, strings.ToLower(ref))); done {
			return s, err
		}
	}
	m, err := find(ByKey, ref)
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
	if s, done, err := one(find(ByTitle, ref)); done {
		return s, err
	}
	if len(ref) < 4 && loom.IsIDPrefix(ref) {
		return nil, loom.Errorf(loom.ENOTFOUND, "no session matches %q (an id prefix needs at least 4 characters)", ref)
	}
	return nil, loom.NotFound(ref)
}
