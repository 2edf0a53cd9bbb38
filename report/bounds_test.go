package report_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/report"
)

// The ends of time: a bound at an end of the years RFC 3339 writes
// bounds nothing, one beyond them is refused naming the parameter, and
// every report that is made can be written as JSON.
func TestBoundsAtTheEndsOfTime(t *testing.T) {
	now := at("2026-03-10T00:00:00Z")
	kiritimati, err := time.LoadLocation("Pacific/Kiritimati") // UTC+14
	if err != nil {
		t.Fatal(err)
	}
	west := time.FixedZone("W", -12*3600)
	for _, c := range []struct {
		req          report.Request
		since, until string // RFC 3339; "" for no bound
	}{
		{report.Request{Until: "9999-12-31"}, "", ""},
		{report.Request{Until: "99991231", TZ: "Pacific/Kiritimati"}, "", ""},
		{report.Request{Until: "9999-12-31T23:59:59Z"}, "", "9999-12-31T23:59:59Z"},
		{report.Request{Until: "9999-12-31T23:59:59-12:00"}, "", ""},
		{report.Request{Since: "0000-01-01", Until: "9999-12-31"}, "", ""},
		{report.Request{Since: "0000-01-01T00:00:00+14:00"}, "", ""},
		{report.Request{Since: "0001-01-01", TZ: "Etc/GMT-14"}, "0001-01-01T00:00:00+14:00", ""},
		{report.Request{Since: "0000-01-02", Until: "0000-01-02T12:00"}, "0000-01-02T00:00:00Z", "0000-01-02T12:00:00Z"},
		{report.Request{Since: "999999999999d"}, "1733-11-29T00:00:00Z", ""},
		{report.Request{Since: "9999-12-31T23:00:00-14:00"}, "9999-12-31T23:00:00-14:00", ""},
	} {
		c.req.By = report.Day
		o, err := c.req.Options("u", time.UTC, now)
		if err != nil {
			t.Errorf("%+v: %v", c.req, err)
			continue
		}
		for _, b := range []struct {
			name string
			got  time.Time
			want string
		}{{"since", o.Since, c.since}, {"until", o.Until, c.until}} {
			switch {
			case b.want == "" && !b.got.IsZero():
				t.Errorf("%+v: %s %v, want none", c.req, b.name, b.got)
			case b.want != "" && b.name == "since" && strings.HasSuffix(c.req.Since, "d"):
				// An age of MaxAge: about 292 years before now.
				if b.got.After(at(b.want).Add(24*time.Hour)) || b.got.Before(at(b.want).Add(-24*time.Hour)) {
					t.Errorf("%+v: since %v, want about %s", c.req, b.got, b.want)
				}
			case b.want != "" && !b.got.Equal(at(b.want)):
				t.Errorf("%+v: %s %v, want %s", c.req, b.name, b.got, b.want)
			}
		}
	}
	for _, c := range []struct {
		req  report.Request
		want string
	}{
		{report.Request{Since: "99999-01-01"}, `since: "99999-01-01" is out of range: dates run from 0000-01-01 to 9999-12-31`},
		{report.Request{Until: "-0001-01-01"}, `until: "-0001-01-01" is out of range`},
		{report.Request{Until: "+10000-01-01", Flags: true}, `--until: "+10000-01-01" is out of range`},
		{report.Request{Since: "2026-13-01"}, `since: "2026-13-01" is not a date (2026-03-03)`},
		{report.Request{Since: "10000000000000000000000000000000000000000d1x"}, `since: "1`},
		{report.Request{TZ: "+05:00", Flags: true}, `--tz "+05:00" is not a time zone`},
		{report.Request{TZ: "../../../etc/passwd"}, `tz "../../../etc/passwd" is not a time zone`},
		{report.Request{Since: "2026-03-02", Until: "2026-03-01"}, "until must be after since"},
		{report.Request{Since: "2026-03-02", Until: "2026-03-01", Flags: true}, "--until must be after --since"},
		{report.Request{By: "year"}, `unknown period "year"`},
	} {
		_, err := c.req.Options("u", time.UTC, now)
		if loom.ErrorCode(err) != loom.EINVALID || !strings.HasPrefix(loom.ErrorMessage(err), c.want) {
			t.Errorf("%+v: %v (%s), want EINVALID %q", c.req, err, loom.ErrorCode(err), c.want)
		}
	}

	// Messages on the first and the last days RFC 3339 writes: every
	// period they fall in, cut in any zone, is written as JSON (a row
	// that ends in year 10000 in its zone ends at loom.MaxTime).
	ends := slices(
		slice("0000-01-01T00:05:00Z", "0000-01-01T00:05:00Z", "cli", "openai", "gpt-5", loom.Usage{InputTokens: 1}),
		slice("9999-12-31T23:50:00Z", "9999-12-31T23:59:59Z", "cli", "openai", "gpt-5", loom.Usage{InputTokens: 2}),
	)
	for _, by := range []string{report.Day, report.Week, report.Month, report.Block} {
		for _, loc := range []*time.Location{time.UTC, kiritimati, west} {
			rep, err := report.Build(context.Background(), ends, report.Options{By: by, Location: loc, Now: now})
			if err != nil {
				t.Fatalf("by %s in %s: %v", by, loc, err)
			}
			if _, err := json.Marshal(rep); err != nil {
				t.Errorf("by %s in %s: %v", by, loc, err)
			}
			if last := rep.Rows[len(rep.Rows)-1]; last.End.Year() > 9999 || last.End.Before(last.Start) || rep.Total.InputTokens != 3 {
				t.Errorf("by %s in %s: last row %+v", by, loc, last)
			}
		}
	}
}

// FuzzRequest: whatever a report is asked for with, it is refused with
// one line naming what is wrong (EINVALID, a 400 on the API, exit 2 on
// the command line), or made and written as JSON: never an internal
// error.
func FuzzRequest(f *testing.F) {
	zones := []string{"", "UTC", "Local", "Pacific/Kiritimati", "Etc/GMT+12", "Asia/Kathmandu", "Australia/Lord_Howe", "America/St_Johns", "Mars/Olympus", "+05:00"}
	periods := []string{"", report.Day, report.Week, report.Month, report.Block, "year"}
	for _, c := range [][2]string{
		{"0001-01-01", "9999-12-31"}, {"0000-01-01", "00000101"}, {"99999-01-01", ""}, {"-0001-01-01", ""},
		{"", "9999-12-31T23:59:59+14:00"}, {"9999-12-31T23:00:00-14:00", ""}, {"999999999999d", "1d"},
		{"2026-03-01T14:00", "2026-03-01T14:00"}, {"7d", ""}, {"2026-02-30", ""}, {"20260301", "20260302"},
	} {
		for i := range zones {
			f.Add(c[0], c[1], uint8(i), uint8(i))
		}
	}
	ends := slices(
		slice("0000-01-01T00:05:00Z", "0000-01-01T00:05:00Z", "cli", "openai", "gpt-5", loom.Usage{InputTokens: 1}),
		slice("2026-03-01T22:10:00Z", "2026-03-01T22:14:00Z", "cli", "openai", "gpt-5", loom.Usage{InputTokens: 1}),
		slice("9999-12-31T23:50:00Z", "9999-12-31T23:59:59Z", "cli", "openai", "gpt-5", loom.Usage{InputTokens: 2}),
	)
	now := at("2026-03-10T00:00:00Z")
	f.Fuzz(func(t *testing.T, since, until string, zone, period uint8) {
		req := report.Request{Since: since, Until: until, TZ: zones[int(zone)%len(zones)], By: periods[int(period)%len(periods)]}
		o, err := req.Options("u", time.UTC, now)
		if err != nil {
			if loom.ErrorCode(err) != loom.EINVALID || strings.ContainsAny(loom.ErrorMessage(err), "\r\n") {
				t.Fatalf("%+v: %v (%s)", req, err, loom.ErrorCode(err))
			}
			return
		}
		if !o.Since.IsZero() && !o.Until.IsZero() && !o.Until.After(o.Since) {
			t.Fatalf("%+v: until %v is not after since %v", req, o.Until, o.Since)
		}
		rep, err := report.Build(context.Background(), ends, o)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
	})
}

func TestLastDaysEndsAtTomorrow(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip(err)
	}
	// The last 30 days of 2026-04-02 cross the change to summer time.
	since, until := report.LastDays(time.Date(2026, 4, 2, 15, 4, 0, 0, loc), 30)
	if want := time.Date(2026, 3, 4, 0, 0, 0, 0, loc); !since.Equal(want) {
		t.Errorf("since %v, want %v", since, want)
	}
	if want := time.Date(2026, 4, 3, 0, 0, 0, 0, loc); !until.Equal(want) {
		t.Errorf("until %v, want %v", until, want)
	}
}
