package sqlstore

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A period is a time that a query names: a day, a month or a year, of a
// given year or (a month or day named without one) of any year.
type period struct {
	from, to time.Time // to is the start of what follows it
	anyYear  bool
}

// after is how long after a named period a message still counts as of
// it: what happened in it is told in the days that follow ("last
// Friday", "the week before").
const after = 14 * 24 * time.Hour

// holds reports whether t falls in p, or within after of its end.
func (p *period) holds(t time.Time) bool {
	if p == nil {
		return false
	}
	from, to := p.from, p.to.Add(after)
	if p.anyYear {
		// The same day of the period's year; a window that runs into the
		// next year is tried from the year before too.
		t = time.Date(from.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC)
		if !t.Before(from) && t.Before(to) {
			return true
		}
		t = t.AddDate(1, 0, 0)
	}
	return !t.Before(from) && t.Before(to)
}

var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
	"oct": 10, "nov": 11, "dec": 12,
}

// The forms of a date a query may name. A month alone must follow a word
// that says it is a time ("in May", "since March"): "may" and "march"
// are also a verb. A year is 1970 to 2099. Each form holds a digit or a
// month's name (mayNameDate); they are compiled by the first query that
// holds either, not when the program starts.
var (
	monthName = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`
	year      = `((?:19[7-9]|20\d)\d)`
	datePats  = sync.OnceValue(func() []datePat {
		return []datePat{
			{regexp.MustCompile(`\b` + year + `-(\d{2})-(\d{2})\b`), "ymd"},
			{regexp.MustCompile(`(?i)\b` + monthName + `\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+` + year + `\b`), "mdy"},
			{regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthName + `,?\s+` + year + `\b`), "dmy"},
			{regexp.MustCompile(`(?i)\b` + monthName + `,?\s+` + year + `\b`), "my"},
			{regexp.MustCompile(`\b` + year + `-(\d{2})\b`), "ym"},
			{regexp.MustCompile(`(?i)\b` + monthName + `\s+(\d{1,2})(?:st|nd|rd|th)?\b`), "md"},
			{regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthName + `\b`), "dm"},
			{regexp.MustCompile(`(?i)\b(?:in|during|since|until|by|from|of|early|late|mid|last|this|next)\s+` + monthName + `\b`), "m"},
			{regexp.MustCompile(`(?i)\b(?:in|during|since|until|by|from|of)\s+` + year + `\b`), "y"},
		}
	})
)

// datePat is a form of a date and its kind, which says what its groups
// hold.
type datePat struct {
	re   *regexp.Regexp
	kind string
}

// mayNameDate reports whether text holds what every form of a date
// holds: a digit, or a month's name as a word of ASCII letters (months'
// keys), as the forms' \b reads a word.
func mayNameDate(text string) bool {
	if strings.ContainsAny(text, "0123456789") {
		return true
	}
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }) {
		if len(w) <= len("september") {
			if _, ok := months[strings.ToLower(w)]; ok {
				return true
			}
		}
	}
	return false
}

// namedPeriod is the first date the text of a query names, in the first
// of the forms above that it holds, and the text without it; nil and
// text when it names none.
func namedPeriod(text string) (*period, string) {
	if !mayNameDate(text) {
		return nil, text
	}
	for _, p := range datePats() {
		loc := p.re.FindStringSubmatchIndex(text)
		if loc == nil {
			continue
		}
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = text[loc[2*i]:loc[2*i+1]]
			}
		}
		num := func(i int) int { n, _ := strconv.Atoi(m[i]); return n }
		mon := func(i int) time.Month { return months[strings.ToLower(strings.TrimSuffix(m[i], "."))] }
		day := func(y int, mo time.Month, d int) *period {
			t := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
			if mo < 1 || mo > 12 || d < 1 || t.Month() != mo {
				return nil
			}
			return &period{from: t, to: t.AddDate(0, 0, 1)}
		}
		month := func(y int, mo time.Month) *period {
			if mo < 1 || mo > 12 {
				return nil
			}
			t := time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
			return &period{from: t, to: t.AddDate(0, 1, 0)}
		}
		var out *period
		switch p.kind {
		case "ymd":
			out = day(num(1), time.Month(num(2)), num(3))
		case "mdy":
			out = day(num(3), mon(1), num(2))
		case "dmy":
			out = day(num(3), mon(2), num(1))
		case "my":
			out = month(num(2), mon(1))
		case "ym":
			out = month(num(1), time.Month(num(2)))
		case "md", "dm":
			d, mo := num(2), mon(1)
			if p.kind == "dm" {
				d, mo = num(1), mon(2)
			}
			// 2000 is a leap year: 29 February is a day of it.
			if out = day(2000, mo, d); out != nil {
				out.anyYear = true
			}
		case "m":
			if out = month(2000, mon(1)); out != nil {
				out.anyYear = true
			}
		case "y":
			t := time.Date(num(1), 1, 1, 0, 0, 0, 0, time.UTC)
			out = &period{from: t, to: t.AddDate(1, 0, 0)}
		}
		if out != nil {
			return out, text[:loc[0]] + " " + text[loc[1]:]
		}
	}
	return nil, text
}
