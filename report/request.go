package report

import (
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
)

// ParseBound reads --since or --until as people write one, in loc: a
// date (2026-03-01 or 20260301), a time (2026-03-01T14:00, RFC 3339),
// or an age before now (7d). A date as an upper bound means the end of
// that day.
//
// Dates and times run from year 0000 to 9999, as RFC 3339 writes them.
// A bound at an end of that range bounds nothing, and is the zero time:
// a lower one at or before the start of year 0000 (UTC), an upper one
// whose end is in year 10000 (in loc or in UTC), so that "--until
// 9999-12-31" reads as "to the end" in any zone. An age is at most
// human.MaxAge (about 292 years).
func ParseBound(s string, loc *time.Location, now time.Time, upper bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if loc == nil {
		loc = time.Local
	}
	for _, layout := range []string{"2006-01-02", "20060102"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			if upper {
				t = t.AddDate(0, 0, 1)
			}
			return bound(t, upper), nil
		}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return bound(t, upper), nil
		}
	}
	if d, err := human.ParseAge(s); err == nil {
		return bound(now.Add(-d), upper), nil
	}
	if outOfRange().MatchString(s) {
		return time.Time{}, loom.Errorf(loom.EINVALID, "%q is out of range: dates run from 0000-01-01 to 9999-12-31", s)
	}
	return time.Time{}, loom.Errorf(loom.EINVALID, "%q is not a date (%s), a time (RFC 3339) or an age (7d)", s, now.AddDate(0, 0, -7).Format("2006-01-02"))
}

// outOfRange matches a date whose year RFC 3339 cannot write: negative,
// or of more than four digits.
var outOfRange = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([-+]\d+|\d{5,})-\d\d-\d\d`) })

// bound returns t as a bound of a report, the zero time when it is at an
// end of the years RFC 3339 writes and so bounds nothing (see
// ParseBound).
func bound(t time.Time, upper bool) time.Time {
	if upper {
		if t.Year() > 9999 || t.After(loom.MaxTime) {
			return time.Time{}
		}
		return t
	}
	if !t.After(loom.MinTime) {
		return time.Time{}
	}
	return t
}

// writable returns t as JSON can write it: in its own zone when its year
// there is one of 0000 to 9999, else in UTC and within loom.MinTime and
// loom.MaxTime. A row of the last day of year 9999 ends in year 10000.
func writable(t time.Time) time.Time {
	if y := t.Year(); y >= 0 && y <= 9999 {
		return t
	}
	return loom.ClampTime(t.UTC())
}

// Request is a report asked for in words, as the API's query, the MCP
// tool's arguments and the command line's flags give it.
type Request struct {
	By        string `json:"by"`
	Breakdown string `json:"breakdown"`
	Since     string `json:"since"`
	Until     string `json:"until"`
	TZ        string `json:"tz"`
	Agent     string `json:"agent"`
	// StartOfWeek is the first day of a week: monday (the default) …
	// sunday.
	StartOfWeek string `json:"start_of_week"`
	// Flags names the parameters in errors as the command line's flags
	// (--since), not as the API's (since).
	Flags bool `json:"-"`
}

// Options reads r into the options of a report of user's, days cut in
// def when r names no time zone, by day when it names no period. An
// error is EINVALID and names the parameter.
func (r Request) Options(user string, def *time.Location, now time.Time) (Options, error) {
	o := Options{UserID: user, By: r.By, Breakdown: r.Breakdown, Agent: r.Agent, Location: def, Now: now}
	if o.By == "" {
		o.By = Day
	}
	if r.StartOfWeek != "" {
		d, err := StartOfWeek(r.StartOfWeek)
		if err != nil {
			return o, loom.Errorf(loom.EINVALID, "%s: %s", r.name("start-of-week"), loom.ErrorMessage(err))
		}
		o.WeekStart = &d
	}
	if r.TZ != "" {
		loc, err := time.LoadLocation(r.TZ)
		if err != nil {
			return o, loom.Errorf(loom.EINVALID, "%s %q is not a time zone: use an IANA name such as Europe/Berlin, or UTC", r.name("tz"), r.TZ)
		}
		o.Location = loc
	}
	for _, b := range []struct {
		name, value string
		to          *time.Time
		upper       bool
	}{{"since", r.Since, &o.Since, false}, {"until", r.Until, &o.Until, true}} {
		if b.value == "" {
			continue
		}
		t, err := ParseBound(b.value, o.Location, now, b.upper)
		if err != nil {
			return o, loom.Errorf(loom.EINVALID, "%s: %s", r.name(b.name), loom.ErrorMessage(err))
		}
		*b.to = t
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && !o.Until.After(o.Since) {
		return o, loom.Errorf(loom.EINVALID, "%s must be after %s", r.name("until"), r.name("since"))
	}
	return o, o.Check()
}

// name is how r's errors name parameter p.
func (r Request) name(p string) string {
	if r.Flags {
		return "--" + p
	}
	return p
}

// Clock is the time zone and the time a report or its like is made in:
// loc and now, or time.Local and time.Now() where they are unset.
func Clock(loc *time.Location, now time.Time) (*time.Location, time.Time) {
	if loc == nil {
		loc = time.Local
	}
	if now.IsZero() {
		now = time.Now()
	}
	return loc, now
}

// LastDays is the range of the last days days in now's time zone, today
// included: from the start of the first of them to the start of
// tomorrow.
func LastDays(now time.Time, days int) (since, until time.Time) {
	y, m, d := now.Date()
	until = time.Date(y, m, d+1, 0, 0, 0, 0, now.Location())
	return until.AddDate(0, 0, -days), until
}

// ZoneName is loc's name as a user knows it: the IANA name of the
// machine's own zone for time.Local (from $TZ, else /etc/localtime's
// link), which Go names "Local"; "Local" only when neither says.
func ZoneName(loc *time.Location) string {
	if loc != time.Local {
		return loc.String()
	}
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" && !strings.HasPrefix(tz, "/") {
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok && name != "" {
			return name
		}
	}
	return loc.String()
}
