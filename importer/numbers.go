package importer

import (
	"strings"
	"time"
)

// maxMillis bounds the times accepted in milliseconds since the epoch:
// later than the year 5000 is no time a tool wrote.
const maxMillis = 95_617_584_000_000

// Millis is a time a tool wrote in milliseconds since the epoch, in
// UTC; the zero time for none or nonsense.
func Millis(ms float64) time.Time {
	if !(ms > 0 && ms < maxMillis) {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// Tokens is a token count a tool wrote as a JSON number, 0 for
// nonsense (negative, not a number, past any real count).
func Tokens(f float64) int64 {
	if !(f > 0 && f < 1e15) {
		return 0
	}
	return int64(f)
}

// RFC3339Time reads a time written in RFC 3339 (ISO 8601 with an
// offset), in UTC; the zero time for anything else.
func RFC3339Time(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// ISOTime reads a time a Python program wrote with isoformat(): ISO
// 8601 with an offset, or without one in this machine's local time (as
// datetime.now() writes it); the zero time for anything else. The time
// is returned in UTC.
func ISOTime(s string) time.Time {
	if t := RFC3339Time(s); !t.IsZero() {
		return t
	}
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
