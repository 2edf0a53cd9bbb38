package loom

import (
	"context"
	"errors"
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
