package sqlstore

import (
	"strings"
	"testing"
	"time"
)

// The dates a query may name, what period each is, and the words left
// to search.
func TestNamedPeriod(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 12, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		q        string
		in, out  []time.Time
		rest     string
		noPeriod bool
	}{
		{q: "What painting did Melanie show on October 13, 2023?", in: []time.Time{day(2023, 10, 13), day(2023, 10, 20)},
			out: []time.Time{day(2023, 10, 12), day(2023, 11, 1), day(2022, 10, 13)}, rest: "What painting did Melanie show on  ?"},
		{q: "What movie did Joanna watch on 1 May, 2022?", in: []time.Time{day(2022, 5, 1), day(2022, 5, 2)}, out: []time.Time{day(2022, 4, 30)}},
		{q: "deploy in March 2024", in: []time.Time{day(2024, 3, 1), day(2024, 3, 31), day(2024, 4, 10)}, out: []time.Time{day(2024, 4, 20), day(2023, 3, 5)}},
		{q: "When did Melanie go camping in July?", in: []time.Time{day(2023, 7, 10), day(2021, 7, 31), day(2022, 8, 3)}, out: []time.Time{day(2023, 6, 30), day(2023, 8, 20)}},
		{q: "the release of 2019-12-24", in: []time.Time{day(2019, 12, 24), day(2020, 1, 5)}, out: []time.Time{day(2019, 12, 23)}},
		{q: "what happened in December", in: []time.Time{day(2023, 12, 31), day(2024, 1, 10)}, out: []time.Time{day(2024, 1, 20)}},
		{q: "what happened in 2021", in: []time.Time{day(2021, 6, 1)}, out: []time.Time{day(2022, 2, 1)}},
		{q: "you may march on", noPeriod: true},
		{q: "error 2023 in the parser", noPeriod: true},
		{q: "February 30, 2023", noPeriod: true},
	} {
		p, rest := namedPeriod(tc.q)
		if tc.noPeriod {
			if p != nil || rest != tc.q {
				t.Errorf("%q names %+v", tc.q, p)
			}
			continue
		}
		if p == nil {
			t.Errorf("%q names no period", tc.q)
			continue
		}
		for _, d := range tc.in {
			if !p.holds(d) {
				t.Errorf("%q: %s not held", tc.q, d.Format(time.DateOnly))
			}
		}
		for _, d := range tc.out {
			if p.holds(d) {
				t.Errorf("%q: %s held", tc.q, d.Format(time.DateOnly))
			}
		}
		if tc.rest != "" && rest != tc.rest {
			t.Errorf("%q leaves %q, want %q", tc.q, rest, tc.rest)
		}
		if strings.Contains(rest, "2023") || strings.Contains(rest, "July") {
			t.Errorf("%q leaves the date in %q", tc.q, rest)
		}
	}
}

// Any text: no panic, the text left is the text without the date, and
// a text that mayNameDate passes over holds none of the forms.
func FuzzNamedPeriod(f *testing.F) {
	for _, s := range []string{"on October 13, 2023", "1 May, 2022", "in July", "2019-12-24", "in 2021", "may march", "31 February 2023", "Sept. 9th 2024",
		"in éMay", "since_March", "during dec.", "from SEPT", "in Mayday"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !mayNameDate(s) {
			for _, p := range datePats() {
				if p.re.MatchString(s) {
					t.Errorf("%q holds the form %s, yet mayNameDate passes over it", s, p.kind)
				}
			}
		}
		p, rest := namedPeriod(s)
		if p == nil && rest != s {
			t.Errorf("no period in %q, yet %q left", s, rest)
		}
		if p != nil && (len(rest) > len(s)+2 || !p.from.Before(p.to)) {
			t.Errorf("%q: period %+v, left %q", s, p, rest)
		}
	})
}
