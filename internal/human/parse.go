package human

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// MaxAge is the longest age ParseAge reads, about 292 years: the most a
// time.Duration holds. A longer one is read as MaxAge rather than
// wrapped round to a negative age (an "--older-than" in the future).
const MaxAge = time.Duration(math.MaxInt64)

// ParseAge reads an age like 30d, 12h, 2w or 1d12h: numbers each
// followed by a unit of s, m, h, d (24 hours) or w (7 days). It is never
// negative, and at most MaxAge.
func ParseAge(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	for in != "" {
		i := 0
		for i < len(in) && (in[i] >= '0' && in[i] <= '9' || in[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("invalid duration %q: want a number and a unit, like 30d, 12h or 2w", s)
		}
		n, err := strconv.ParseFloat(in[:i], 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		j := i
		for j < len(in) && unicode.IsLetter(rune(in[j])) {
			j++
		}
		var unit time.Duration
		switch in[i:j] {
		case "s":
			unit = time.Second
		case "m":
			unit = time.Minute
		case "h":
			unit = time.Hour
		case "d":
			unit = 24 * time.Hour
		case "w":
			unit = 7 * 24 * time.Hour
		default:
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use s, m, h, d or w)", s, in[i:j])
		}
		total = addAge(total, n*float64(unit))
		in = in[j:]
	}
	return total, nil
}

// addAge returns total plus ns nanoseconds (0 or more), at most MaxAge.
func addAge(total time.Duration, ns float64) time.Duration {
	// float64(MaxAge) is 2⁶³, one more than MaxAge: below it, ns
	// converts without overflow.
	if ns >= float64(MaxAge) {
		return MaxAge
	}
	if d := time.Duration(ns); d <= MaxAge-total {
		return total + d
	}
	return MaxAge
}

// ParseTime reads a point in time as people write one: a date
// (2026-06-01), a local time (2026-06-01T14:00), an RFC 3339 time, or an
// age before now (7d).
func ParseTime(s string, now time.Time) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if d, err := ParseAge(s); err == nil {
		return now.Add(-d), nil
	}
	// The example is a week before now, so it reads as a date one could
	// mean.
	return time.Time{}, fmt.Errorf("%q is not a date (%s), a time (RFC 3339) or an age (7d)", s, now.AddDate(0, 0, -7).Format("2006-01-02"))
}
