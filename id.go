package loom

import (
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// NewID returns a new time-sortable id (UUIDv7).
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// NewIDAt returns a new UUIDv7 whose time is t rather than now: the id
// of something made at t elsewhere (an imported session), so that ids
// sort, and their prefixes differ, as the times they were made do. A
// zero t, or one before 1970, gives NewID.
func NewIDAt(t time.Time) string {
	u := uuid.Must(uuid.NewV7())
	ms := t.UnixMilli()
	if t.IsZero() || ms < 0 || ms >= 1<<48 {
		return u.String()
	}
	for i := 5; i >= 0; i-- { // the 48-bit big-endian milliseconds
		u[i] = byte(ms)
		ms >>= 8
	}
	return u.String()
}

// IDFromHash returns the UUIDv7 whose time is ms (milliseconds since
// 1970, 0 when outside UUIDv7's 48 bits) and whose other bits are the
// first of sum (at least 16 bytes): an id that every machine derives
// alike from the same things, as a hash of them.
func IDFromHash(ms int64, sum []byte) string {
	var u uuid.UUID
	copy(u[:], sum)
	if ms < 0 || ms >= 1<<48 {
		ms = 0
	}
	for i := 5; i >= 0; i-- { // 48-bit big-endian milliseconds
		u[i] = byte(ms)
		ms >>= 8
	}
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u.String()
}

// TimeFormat is how loom writes times: RFC 3339 with milliseconds, UTC.
// Its text sorts in time order.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime formats t as RFC 3339 with milliseconds in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// MinTime and MaxTime are the first and the last time RFC 3339 can
// write, years 0000 to 9999 in UTC, to the millisecond: the range of
// times TimeFormat's text sorts in and JSON can hold.
var (
	MinTime = time.Date(0, time.January, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, time.December, 31, 23, 59, 59, 999_000_000, time.UTC)
)

// ClampTime returns t, or MinTime or MaxTime when t is before or after
// them: a bound of a query beyond either end bounds no more than that
// end does, and the engines compare it correctly.
func ClampTime(t time.Time) time.Time {
	switch {
	case t.Before(MinTime):
		return MinTime
	case t.After(MaxTime):
		return MaxTime
	}
	return t
}

// ParseTime parses a time written by FormatTime (or any RFC 3339 time).
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Now returns the current time truncated to the millisecond, as stored.
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// ValidID checks an id that loom makes: a UUID in its canonical form
// (36 characters, lower-case hex, with hyphens). Ids name files (the
// replay log), pages and keys of rows, so an imported id may be neither a
// path nor another spelling of an id already stored.
func ValidID(id string) error {
	if len(id) != 36 {
		return Errorf(EINVALID, "%q is not a UUID", id)
	}
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return Errorf(EINVALID, "%q is not a UUID", id)
	}
	return nil
}

// MaxForeignIDLen bounds an id that loom keeps from another tool's files
// (a message's or a part's).
const MaxForeignIDLen = 256

// ValidForeignID checks an id that may come from another tool's files:
// loom keeps it as it is, as long as it is one line of UTF-8 text of at
// most MaxForeignIDLen bytes, without control characters.
func ValidForeignID(id string) error {
	switch {
	case id == "":
		return Errorf(EINVALID, "id is empty")
	case len(id) > MaxForeignIDLen:
		return Errorf(EINVALID, "id %q is longer than %d bytes", Truncate(id, 32), MaxForeignIDLen)
	case !utf8.ValidString(id):
		return Errorf(EINVALID, "id %q is not UTF-8", id)
	}
	for _, r := range id {
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			return Errorf(EINVALID, "id %q holds a control character", id)
		}
	}
	return nil
}
