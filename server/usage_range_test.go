package server_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/report"
)

// Dates at and past the ends of time: the usage report answers every
// bound a date or time can write (years 0000 to 9999), in any zone and
// by any period, with the whole range when the bound is at an end ("until
// 9999-12-31" is "to the end"), and refuses what no date writes with a
// 400 that names the parameter. Never a 500.
func TestUsageAtTheEndsOfTime(t *testing.T) {
	e := newEnv(t)
	reply := assistantMsg("done")
	reply.Provider, reply.Model, reply.CreatedAt = "anthropic", "claude-haiku-4-5", time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	reply.Usage = loom.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}
	e.seed(&loom.Session{UserID: "alice", Key: "http:s1"}, userMsg("go"), reply)

	sinces := []string{"", "0001-01-01", "0000-01-01", "00000101", "0000-01-01T00:00:00+14:00", "999999999999d", "2026-03-01", "9999-12-31", "9999-12-31T23:00:00-14:00"}
	untils := []string{"", "9999-12-31", "99991231", "9999-12-31T23:59:59+14:00", "9999-12-31T23:59:59-14:00", "0000-01-01", "0000-01-01T00:00:00+14:00", "2026-03-01"}
	zones := []string{"", "UTC", "Etc/GMT-14", "Etc/GMT+12", "Asia/Kathmandu", "Pacific/Kiritimati"}
	for _, by := range []string{report.Day, report.Week, report.Month, report.Block} {
		for _, tz := range zones {
			for _, since := range sinces {
				for _, until := range untils {
					q := url.Values{"by": {by}, "tz": {tz}, "since": {since}, "until": {until}}
					resp, b := e.request("GET", "/api/v1/usage?"+q.Encode(), e.alice, nil)
					if resp.StatusCode == 400 {
						// Only an until not after since is refused.
						if !strings.Contains(string(b), "until must be after since") {
							t.Errorf("%s: %s", q.Encode(), b)
						}
						continue
					}
					var rep report.Report
					if resp.StatusCode != 200 || json.Unmarshal(b, &rep) != nil {
						t.Fatalf("%s: %d %s", q.Encode(), resp.StatusCode, b)
					}
					// Bounds at the ends of time count everything.
					whole := (since == "" || since == "0000-01-01" || since == "00000101" || since == "0000-01-01T00:00:00+14:00" ||
						since == "0001-01-01" || since == "999999999999d") && (until == "" || until == "9999-12-31" || until == "99991231" ||
						until == "9999-12-31T23:59:59+14:00" || until == "9999-12-31T23:59:59-14:00")
					if whole && (rep.Total.InputTokens != 1_000_000 || len(rep.Rows) != 1) {
						t.Errorf("%s: %+v", q.Encode(), rep)
					}
					if strings.HasPrefix(until, "9999") && !rep.Until.IsZero() && rep.Until.Year() != 9999 {
						t.Errorf("%s: until %v", q.Encode(), rep.Until)
					}
				}
			}
		}
	}

	for q, want := range map[string]string{
		"since=99999-01-01":             `since: "99999-01-01" is out of range: dates run from 0000-01-01 to 9999-12-31`,
		"until=-0001-01-01":             `until: "-0001-01-01" is out of range`,
		"until=%2B10000-01-01":          `until: "+10000-01-01" is out of range`,
		"since=10000-01-01T00:00:00Z":   `since: "10000-01-01T00:00:00Z" is out of range`,
		"since=2026-02-30":              `since: "2026-02-30" is not a date`,
		"until=1e999d":                  `until: "1e999d" is not a date`,
		"tz=Mars/Olympus":               `tz "Mars/Olympus" is not a time zone`,
		"tz=%2B05:00":                   `tz "+05:00" is not a time zone`,
		"tz=../../etc/passwd":           `tz "../../etc/passwd" is not a time zone`,
		"by=year":                       `unknown period "year"`,
		"by=block&until=0000-01-01":     `until must be after since`,
		"since=9999-12-31&until=0001-1": `until: "0001-1" is not a date`,
	} {
		if strings.HasPrefix(q, "by=block&until=") {
			q += "&since=2026-01-01"
		}
		resp, b := e.request("GET", "/api/v1/usage?"+q, e.alice, nil)
		wantError(t, "usage "+q, resp, b, 400, loom.EINVALID)
		if !strings.Contains(string(b), jsonText(want)) {
			t.Errorf("usage %s: %s, want %q", q, b, want)
		}
	}

	// Search takes RFC 3339 times: those whose UTC is past either end are
	// compared as that end, so they find what they bound.
	for _, c := range []struct {
		since, until string
		hits         int
	}{
		{"0000-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", 1},
		{"", "9999-12-31T23:59:59-14:00", 1},
		{"0000-01-01T00:00:00+14:00", "", 1},
		{"9999-12-31T23:00:00-14:00", "", 0},
		{"", "0000-01-01T00:00:00+14:00", 0},
	} {
		q := url.Values{"q": {"go"}, "since": {c.since}, "until": {c.until}}
		var res struct{ Hits []loom.SearchHit }
		e.getJSON("/api/v1/search?"+q.Encode(), e.alice, &res)
		if len(res.Hits) != c.hits {
			t.Errorf("search %s: %d hits, want %d", q.Encode(), len(res.Hits), c.hits)
		}
	}
	resp, b := e.request("GET", "/api/v1/search?q=go&until=10000-01-01T00:00:00Z", e.alice, nil)
	wantError(t, "search until year 10000", resp, b, 400, loom.EINVALID)
}

// jsonText is s as a JSON string's text holds it.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
