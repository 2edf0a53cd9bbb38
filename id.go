package loom

import (
	"time"

	"github.com/google/uuid"
)

// NewID returns a new time-sortable id (UUIDv7).
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// TimeFormat is how loom writes times: RFC 3339 with milliseconds, UTC.
// Its text sorts in time order.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime formats t as RFC 3339 with milliseconds in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime parses a time written by FormatTime (or any RFC 3339 time).
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Now returns the current time truncated to the millisecond, as stored.
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
