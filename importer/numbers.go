package importer

import "time"

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
