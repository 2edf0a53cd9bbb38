package sqlstore

import (
	"strings"
	"unicode/utf8"

	"github.com/loomhq/loom"
)

// SourceColumns are the values of s's source as stored: empty strings for a
// session that was not imported.
func SourceColumns(s *loom.Session) (tool, version, path string) {
	if s.Source == nil {
		return "", "", ""
	}
	return s.Source.Tool, s.Source.Version, s.Source.Path
}

// SyncUser checks whose records are put or asked for: a user, as text
// both engines store (UTF-8 without NUL bytes).
func SyncUser(user string) error {
	if user == "" || !utf8.ValidString(user) || strings.IndexByte(user, 0) >= 0 {
		return loom.Errorf(loom.EINVALID, "sync records need a user: UTF-8 text without NUL bytes")
	}
	return nil
}

// SyncHeader is a record's header as it is stored: never NULL, so that
// no header reads back as an empty one.
func SyncHeader(r loom.SyncRecord) []byte {
	if r.Header == nil {
		return []byte{}
	}
	return r.Header
}

// SyncSize is what a record counts for in a host's bytes and in a page.
func SyncSize(r loom.SyncRecord) int64 { return int64(len(r.Header) + len(r.Body)) }

// SyncPage checks the arguments of loom.SyncStore.SyncRecords and
// returns the number of records to read: limit, or loom.MaxSyncBatch
// for 0.
func SyncPage(user, host string, after int64, limit int) (int, error) {
	if err := SyncUser(user); err != nil {
		return 0, err
	}
	if err := loom.ValidID(host); err != nil {
		return 0, loom.Errorf(loom.EINVALID, "host id %q is not a UUID", loom.Truncate(host, 40))
	}
	if after < 0 {
		return 0, loom.Errorf(loom.EINVALID, "after must be an index, 0 or more, not %d", after)
	}
	if limit < 0 || limit > loom.MaxSyncBatch {
		return 0, loom.Errorf(loom.EINVALID, "limit must be from 1 to %d, not %d", loom.MaxSyncBatch, limit)
	}
	if limit == 0 {
		limit = loom.MaxSyncBatch
	}
	return limit, nil
}
