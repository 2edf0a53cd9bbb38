package usage_test

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/session"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/report"
)

// The dates a user may write at the ends of time, on this engine: loom
// usage's reports and the API of loom serve answer a bound at an end
// (--until 9999-12-31) with the whole range; a date no RFC 3339 time
// writes is one line naming the flag (exit 2) or a 400 naming the
// parameter, never a Go error; search compares times past either end as
// that end; and an age too long to count prunes nothing.
func TestDatesAtTheEndsOfTime(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	all := clitest.DecodeJSON[report.Report](t, fx.MustExec(t, "usage", "daily", "--json"))
	if all.Total.InputTokens == 0 {
		t.Fatalf("the fixture's report counts nothing: %+v", all.Total)
	}
	for _, args := range [][]string{
		{"daily", "--until", "9999-12-31"},
		{"daily", "--since", "0001-01-01", "--until", "9999-12-31"},
		{"weekly", "--since", "0000-01-01", "--until", "99991231", "--tz", "Etc/GMT+12"},
		{"monthly", "--until", "9999-12-31", "--tz", "Etc/GMT-14"},
		{"blocks", "--since", "999999999999d", "--until", "9999-12-31T23:59:59-14:00"},
		{"--by", "day", "--since", "0000-01-01T00:00:00+14:00", "--until", "9999-12-31", "--tz", "Asia/Kathmandu"},
	} {
		r := fx.Exec(t, "", append(append([]string{"usage"}, args...), "--json")...)
		if r.Code != 0 {
			t.Fatalf("usage %v: exit %d, %s", args, r.Code, r.Stderr)
		}
		rep := clitest.DecodeJSON[report.Report](t, r.Stdout)
		if rep.Total.InputTokens != all.Total.InputTokens || !rep.Until.IsZero() {
			t.Errorf("usage %v: total %+v until %v, want the whole range", args, rep.Total, rep.Until)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"daily", "--since", "99999-01-01"}, `loom: --since: "99999-01-01" is out of range: dates run from 0000-01-01 to 9999-12-31`},
		{[]string{"daily", "--until=-0001-01-01"}, `loom: --until: "-0001-01-01" is out of range`},
		{[]string{"blocks", "--since", "10000-01-01T00:00:00Z"}, `loom: --since: "10000-01-01T00:00:00Z" is out of range`},
		{[]string{"weekly", "--since", "2026-02-30"}, `loom: --since: "2026-02-30" is not a date`},
		{[]string{"daily", "--tz", "Mars/Olympus", "--until", "9999-12-31"}, `loom: --tz "Mars/Olympus" is not a time zone`},
		{[]string{"daily", "--since", "2026-03-02", "--until", "2026-03-01"}, `loom: --until must be after --since`},
	} {
		r := fx.Exec(t, "", append(append([]string{"usage"}, c.args...), "--json")...)
		if r.Code != cli.ExitUsage || r.Stdout != "" || len(clitest.Lines(r.Stderr)) != 1 || !strings.HasPrefix(r.Stderr, c.want) ||
			strings.Contains(r.Stderr, "json:") || strings.Contains(r.Stderr, "year outside") || strings.Contains(r.Stderr, "parsing time") {
			t.Errorf("usage %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
	}

	srv := clitest.StartServeProc(t, fx.BinEnv(), "")
	get := func(path string) (int, []byte) {
		t.Helper()
		resp := srv.Request(t, "GET", path, "")
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	for _, by := range []string{"day", "week", "month", "block"} {
		code, b := get("/api/v1/usage?" + url.Values{"by": {by}, "since": {"0001-01-01"}, "until": {"9999-12-31"}, "tz": {"Etc/GMT+12"}}.Encode())
		var rep report.Report
		if code != 200 || json.Unmarshal(b, &rep) != nil || rep.Total.InputTokens != all.Total.InputTokens {
			t.Errorf("usage by %s over all time: %d %s", by, code, b)
		}
	}
	for _, q := range []string{"until=-0001-01-01", "since=99999-01-01", "tz=Mars/Olympus"} {
		code, b := get("/api/v1/usage?" + q)
		var e struct {
			Error struct{ Code, Message string }
		}
		if code != 400 || json.Unmarshal(b, &e) != nil || e.Error.Code != loom.EINVALID || !strings.HasPrefix(e.Error.Message, strings.Split(q, "=")[0]) {
			t.Errorf("usage %s: %d %s", q, code, b)
		}
	}
	hits := func(q url.Values) int {
		t.Helper()
		q.Set("q", "clock")
		code, b := get("/api/v1/search?" + q.Encode())
		var res struct{ Hits []loom.SearchHit }
		if code != 200 || json.Unmarshal(b, &res) != nil {
			t.Fatalf("search %s: %d %s", q.Encode(), code, b)
		}
		return len(res.Hits)
	}
	if n, ends := hits(url.Values{}), hits(url.Values{"since": {"0000-01-01T00:00:00+14:00"}, "until": {"9999-12-31T23:59:59-14:00"}}); n == 0 || ends != n {
		t.Errorf("search between the ends of time: %d hits, %d without bounds", ends, n)
	}
	if n := hits(url.Values{"since": {"9999-12-31T23:00:00-14:00"}}); n != 0 {
		t.Errorf("search since after the end of time: %d hits", n)
	}

	// 999999999999 days does not fit a duration: read as the longest
	// one, nothing is that old; wrapped round, it was a time in the
	// future, and every session was.
	r := fx.Exec(t, "", "session", "prune", "--older-than", "999999999999d", "--dry-run", "--all-projects", "--json")
	if r.Code != 0 {
		t.Fatalf("prune --older-than 999999999999d: exit %d, %s", r.Code, r.Stderr)
	}
	if p := clitest.DecodeJSON[session.PruneReport](t, r.Stdout); len(p.Removed) != 0 {
		t.Errorf("prune --older-than 999999999999d would prune %d sessions", len(p.Removed))
	}
}
