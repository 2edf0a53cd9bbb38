package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/report"
)

// The usage page: cost and tokens per day as bar charts stacked by agent
// or by model, the current 5-hour block and the costliest sessions. The
// charts are SVG drawn here, so the page needs no script and no chart
// library; the figures are package report's, as the API's and the
// command line's.

// Usage page limits.
const (
	// usageDefaultDays is the range shown unless ?days= says.
	usageDefaultDays = 30
	usageMaxDays     = 366
	// usageSeries is how many agents or models get a colour of their
	// own; the rest are stacked as "other".
	usageSeries = 6
	// usageSessions is how many of the costliest sessions are listed.
	usageSessions = 10
	// chartWidth and chartHeight are the charts' viewBox: bars stretch
	// to the page's width, so the box's width is only the unit of the
	// bars' positions.
	chartWidth  = 1000
	chartHeight = 200
)

// usageRanges are the choices of the range menu, in days.
var usageRanges = []int{7, 30, 90, 365}

type usageData struct {
	Days    int
	Ranges  []int
	Stack   string // report.ByAgent, report.ByModel or (a team's) report.ByMember
	TZ      string
	Since   time.Time
	Report  *report.Report
	Cost    chart
	Tokens  chart
	Series  []series
	Block   *report.Row
	Last    *report.Row
	Costly  []loom.UsageRow
	Error   string
	Toggles []toggle
	// Latest is where the usage is when the range holds none.
	Latest *latestUsage
}

// latestUsage says where a user's usage is when the range shown holds
// none: its latest day, and the range that shows it (URL empty when it
// is older than the longest).
type latestUsage struct {
	Day  string
	Days int
	URL  string
}

// toggle is a link that changes one setting of the page.
type toggle struct {
	Label, URL string
	Current    bool
}

// series is one colour of a chart: an agent, a model, or the rest.
type series struct {
	Key, Name string
	Class     string
}

// chart is a stacked bar chart: a bar a day, a segment per series.
type chart struct {
	Title string
	// Max is the value of the top of the chart, as people read it.
	Max string
	// Bars are the days, oldest first; a day without usage has no
	// segments.
	Bars []bar
	// Width is the viewBox's width; BarWidth a bar's.
	Width, BarWidth float64
	// Ticks label the first, middle and last days.
	Ticks []string
}

type bar struct {
	Day      string
	X        float64
	Segments []segment
	// Label is the day's total, for the bar's tooltip.
	Label string
}

type segment struct {
	Y, H  float64
	Class string
	Title string
}

func (s *Server) usagePage(w http.ResponseWriter, r *http.Request) {
	ctx, user := r.Context(), userOf(r)
	q := newQuery(r)
	d := usageData{Days: q.int("days", usageDefaultDays, 1, usageMaxDays), Ranges: usageRanges, Stack: q.str("by")}
	switch {
	case d.Stack == report.ByModel:
	case s.cfg.Team != nil && (d.Stack == report.ByMember || d.Stack == ""):
		// A team's usage is by member unless another split is asked.
		d.Stack = report.ByMember
	default:
		d.Stack = report.ByAgent
	}
	loc := q.zone()
	if q.err != nil {
		s.pageErr(w, r, q.err)
		return
	}
	now := time.Now().In(loc)
	d.Since, _ = report.LastDays(now, d.Days)
	d.TZ = report.ZoneName(loc)
	// The day report and the block report read the same slices.
	src := report.Cached(s.st)
	o := report.Options{UserID: user, By: report.Day, Breakdown: d.Stack, Since: d.Since, Location: loc, Prices: s.prices(), Now: now,
		Roots: s.st}
	s.memberOf(ctx, &o)
	var err error
	if d.Report, err = report.Build(ctx, src, o); err != nil {
		s.pageErr(w, r, err)
		return
	}
	o.By, o.Breakdown = report.Block, ""
	blocks, err := report.Build(ctx, src, o)
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	d.Block = blocks.Active()
	if d.Block == nil && len(blocks.Rows) > 0 {
		d.Last = &blocks.Rows[len(blocks.Rows)-1]
	}
	if d.Costly, err = s.costliest(ctx, user); err != nil {
		s.pageErr(w, r, err)
		return
	}
	link := func(days int, by string) string {
		v := url.Values{"days": {strconv.Itoa(days)}, "by": {by}}
		if tz := q.str("tz"); tz != "" {
			v.Set("tz", tz)
		}
		return "/usage?" + v.Encode()
	}
	if len(d.Report.Rows) == 0 {
		if d.Latest, err = s.latestUsage(ctx, src, o, now, func(days int) string { return link(days, d.Stack) }); err != nil {
			s.pageErr(w, r, err)
			return
		}
	}
	d.Series = seriesOf(d.Report)
	days := dayList(d.Since, now)
	d.Cost = drawChart("Cost per day", d.Report, d.Series, days, func(t report.Totals) float64 { return t.Cost() }, human.Cost)
	d.Tokens = drawChart("Tokens per day", d.Report, d.Series, days, func(t report.Totals) float64 { return float64(t.TotalTokens) },
		func(v float64) string { return human.Count(int64(v)) })
	for _, n := range d.Ranges {
		d.Toggles = append(d.Toggles, toggle{Label: fmt.Sprintf("%d days", n), URL: link(n, d.Stack), Current: n == d.Days})
	}
	d.Toggles = append(d.Toggles,
		toggle{Label: "by agent", URL: link(d.Days, report.ByAgent), Current: d.Stack == report.ByAgent},
		toggle{Label: "by model", URL: link(d.Days, report.ByModel), Current: d.Stack == report.ByModel})
	if s.cfg.Team != nil {
		d.Toggles = append(d.Toggles, toggle{Label: "by member", URL: link(d.Days, report.ByMember), Current: d.Stack == report.ByMember})
	}
	s.render(w, r, http.StatusOK, "usage", layoutData{Title: "Usage", Nav: "usage", Body: d})
}

// latestUsage finds the latest day of o's user with usage, before the
// range o asked for, and the shortest range of the page's menu that
// shows it (link makes its address); nil when there is none.
func (s *Server) latestUsage(ctx context.Context, src report.Slicer, o report.Options, now time.Time, link func(days int) string) (*latestUsage, error) {
	// By month first, of all time: then the days of the last month.
	o.By, o.Breakdown, o.Since = report.Month, "", time.Time{}
	months, err := report.Build(ctx, src, o)
	if err != nil || len(months.Rows) == 0 {
		return nil, err
	}
	o.By, o.Since = report.Day, months.Rows[len(months.Rows)-1].Start
	days, err := report.Build(ctx, src, o)
	if err != nil || len(days.Rows) == 0 {
		return nil, err
	}
	l := &latestUsage{Day: days.Rows[len(days.Rows)-1].Period}
	day, err := time.ParseInLocation(time.DateOnly, l.Day, now.Location())
	if err != nil {
		return l, nil
	}
	y, m, d := now.Date()
	need := int(time.Date(y, m, d, 0, 0, 0, 0, now.Location()).Sub(day).Hours()/24+0.5) + 1
	if need > usageMaxDays {
		return l, nil
	}
	l.Days = usageMaxDays
	for _, n := range usageRanges {
		if n >= need {
			l.Days = n
			break
		}
	}
	l.URL = link(l.Days)
	return l, nil
}

// costliest returns the user's costliest sessions, at the costs stored
// with their messages, then those with the most tokens.
func (s *Server) costliest(ctx context.Context, user string) ([]loom.UsageRow, error) {
	rep, err := s.st.Usage(ctx, loom.UsageFilter{UserID: user, SessionsOnly: true})
	if err != nil {
		return nil, err
	}
	var out []loom.UsageRow
	for _, row := range rep.BySession {
		u := row.Usage
		if len(out) == usageSessions || u.CostUSD <= 0 && !human.HasTokens(u) {
			break
		}
		out = append(out, row)
	}
	return out, nil
}

// seriesOf returns the colours of a report's breakdown: the costliest
// agents or models over the whole report (by tokens when none has a
// cost), then "other" when there are more.
func seriesOf(rep *report.Report) []series {
	var out []series
	parts := rep.Shares()
	for i, p := range parts {
		if i == usageSeries && len(parts) > usageSeries+1 {
			out = append(out, series{Key: "", Name: "other", Class: "s-other"})
			break
		}
		name := p.Name
		if name == "" {
			name = "(none)"
		}
		out = append(out, series{Key: p.Key, Name: name, Class: fmt.Sprintf("s%d", i)})
	}
	return out
}

// dayList returns the names of the days from since to now's, in since's
// location.
func dayList(since, now time.Time) []string {
	var out []string
	for t := since; !t.After(now); t = t.AddDate(0, 0, 1) {
		out = append(out, t.Format("2006-01-02"))
	}
	return out
}

// drawChart lays out a stacked bar chart of value over the days: a bar a
// day, scaled so that the largest day's bar fills the height.
func drawChart(title string, rep *report.Report, ser []series, days []string, value func(report.Totals) float64, format func(float64) string) chart {
	c := chart{Title: title, Width: chartWidth}
	if len(days) == 0 {
		return c
	}
	rows := map[string]*report.Row{}
	top := 0.0
	for i := range rep.Rows {
		rows[rep.Rows[i].Period] = &rep.Rows[i]
		top = math.Max(top, value(rep.Rows[i].Totals))
	}
	c.Max = format(top)
	classOf := map[string]string{}
	other := ""
	for _, x := range ser {
		if x.Key == "" && x.Name == "other" {
			other = x.Class
			continue
		}
		classOf[x.Key] = x.Class
	}
	// A bar fills eight tenths of its slot: a gap between bars.
	slot := float64(chartWidth) / float64(len(days))
	c.BarWidth = slot * 0.8
	for i, day := range days {
		b := bar{Day: day, X: float64(i)*slot + slot*0.1}
		row := rows[day]
		if row != nil && top > 0 && value(row.Totals) > 0 {
			b.Label = day + ": " + format(value(row.Totals))
			y := float64(chartHeight)
			for _, p := range row.Breakdown {
				v := value(p.Totals)
				if v <= 0 {
					continue
				}
				h := v / top * chartHeight
				y -= h
				cls, ok := classOf[p.Key]
				if !ok {
					cls = other
				}
				b.Segments = append(b.Segments, segment{Y: y, H: h, Class: cls, Title: day + " · " + p.Name + ": " + format(v)})
			}
		}
		c.Bars = append(c.Bars, b)
	}
	c.Ticks = []string{days[0], days[len(days)/2], days[len(days)-1]}
	if len(days) < 3 {
		c.Ticks = days
	}
	return c
}
