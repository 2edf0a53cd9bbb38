package server

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/loomhq/loom/insights"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/report"
)

// The insights page: a calendar of the prompts written each day,
// sessions and prompts per day, tools and their failure rates, the mix
// of models, agents and projects, the longest and costliest sessions.
// The figures are package insights', as the API's and `loom usage
// insights`'; the charts are SVG drawn here, as the usage page's.

// insightRanges are the choices of the range menu, in days.
var insightRanges = []int{30, 90, 365}

// Calendar cells: a square per day, a gap between.
const (
	calCell = 12
	calGap  = 2
)

type insightsData struct {
	Days    int
	TZ      string
	Report  *insights.Report
	Toggles []toggle
	// Calendar is the heatmap of prompts per day.
	Calendar calendar
	// Activity is a bar chart of prompts per day.
	Activity chart
	// Mixes are the models', agents' and projects' shares.
	Mixes []mix
	// Median is a session's median run, as people read it.
	Median string
}

// calendar is a heatmap: a column per week, a row per weekday from
// Monday, a cell per day shaded by its prompts.
type calendar struct {
	Width, Height int
	// Left is the width of the weekday names' column, Top the height of
	// the month names' row.
	Left, Top int
	Cells     []calCellData
	Months    []calLabel
	Days      []calLabel
}

type calCellData struct {
	X, Y  int
	Level int
	Date  string
	Title string
}

type calLabel struct {
	X, Y int
	Text string
}

// mix is one share bar: a segment per model, agent or project.
type mix struct {
	ID, Title string
	Parts     []mixPart
}

type mixPart struct {
	Name, Class, Label string
	// X and Percent place its segment on a bar 100 wide.
	X, Percent float64
}

func (s *Server) insightsPage(w http.ResponseWriter, r *http.Request) {
	ctx, user := r.Context(), userOf(r)
	q := newQuery(r)
	d := insightsData{Days: q.int("days", insights.DefaultDays, 1, usageMaxDays)}
	loc := q.zone()
	if q.err != nil {
		s.pageErr(w, r, q.err)
		return
	}
	now := time.Now().In(loc)
	since, until := report.LastDays(now, d.Days)
	st, err := insights.Of(s.st)
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	rep, err := insights.Build(ctx, st, insights.Options{UserID: user, Since: since, Until: until,
		Location: loc, Prices: s.prices(), Now: now, Roots: s.st})
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	d.Report, d.TZ = rep, rep.TZ
	d.Calendar = drawCalendar(rep.Days)
	d.Activity = activityChart(rep.Days)
	d.Mixes = []mix{mixOf("mix-models", "Models", rep.Models), mixOf("mix-agents", "Agents", rep.Agents), mixOf("mix-projects", "Projects", rep.Projects)}
	d.Median = human.Span(rep.Durations.MedianSeconds)
	for _, n := range insightRanges {
		v := url.Values{"days": {strconv.Itoa(n)}}
		if tz := q.str("tz"); tz != "" {
			v.Set("tz", tz)
		}
		d.Toggles = append(d.Toggles, toggle{Label: fmt.Sprintf("%d days", n), URL: "/insights?" + v.Encode(), Current: n == d.Days})
	}
	s.render(w, r, http.StatusOK, "insights", layoutData{Title: "Insights", Nav: "insights", Body: d})
}

// insightsAPI answers GET /api/v1/usage/insights: package insights'
// report, over since and until (default the last 90 days), in tz
// (default UTC), of one project (an id) when it says, with the top
// longest and costliest sessions.
func (s *Server) insightsAPI(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	req := report.Request{By: report.Day, Since: q.str("since"), Until: q.str("until"), TZ: q.str("tz")}
	top := q.int("top", insights.DefaultTop, 1, 100)
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	now := time.Now()
	o, err := req.Options(userOf(r), time.UTC, now)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st, err := insights.Of(s.st)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rep, err := insights.Build(r.Context(), st, insights.Options{UserID: o.UserID, ProjectID: q.str("project"),
		Since: o.Since, Until: o.Until, Location: o.Location, Prices: s.prices(), Now: now, Top: top, Roots: s.st})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// calLabelGap is the fewest weeks between two month names: a name is
// about two weeks wide.
const calLabelGap = 3

// drawCalendar lays out the days as a heatmap: weeks from the one of
// the first day, each cell shaded by the quartile of its prompts among
// the active days (level 0 for none).
func drawCalendar(days []insights.Day) calendar {
	var c calendar
	if len(days) == 0 {
		return c
	}
	first, err := time.Parse(time.DateOnly, days[0].Date)
	if err != nil {
		return c
	}
	var counts []int64
	for _, d := range days {
		if d.Prompts > 0 {
			counts = append(counts, d.Prompts)
		}
	}
	slices.Sort(counts)
	quartile := func(f float64) int64 {
		if len(counts) == 0 {
			return 0
		}
		return counts[int(math.Ceil(f*float64(len(counts))))-1]
	}
	bounds := []int64{quartile(0.25), quartile(0.5), quartile(0.75)}
	const left, top = 28, 16
	lead := (int(first.Weekday()) + 6) % 7
	weeks := (lead + len(days) + 6) / 7
	step := calCell + calGap
	c.Width, c.Height = left+weeks*step, top+7*step
	c.Left, c.Top = left, top
	month := ""
	for i, d := range days {
		at := lead + i
		x, y := left+(at/7)*step, top+(at%7)*step
		level := 0
		if d.Prompts > 0 {
			level = 1
			for _, b := range bounds {
				if d.Prompts > b {
					level++
				}
			}
		}
		c.Cells = append(c.Cells, calCellData{X: x, Y: y, Level: level, Date: d.Date,
			Title: fmt.Sprintf("%s: %s, %s, %s", d.Date, human.Plural(int(d.Prompts), "prompt"), human.Plural(int(d.Sessions), "session"), usd(d.CostUSD))})
		if m := d.Date[:7]; m != month && (at%7 == 0 || i == 0) {
			month = m
			t, _ := time.Parse(time.DateOnly, d.Date)
			l := calLabel{X: x, Y: top - 4, Text: t.Format("Jan")}
			if n := len(c.Months); n > 0 && x-c.Months[n-1].X < calLabelGap*step {
				// The month before had too few weeks for its name:
				// the names would run into each other ("NovDec").
				c.Months[n-1] = l
			} else {
				c.Months = append(c.Months, l)
			}
		}
	}
	for i, name := range []string{"Mon", "", "Wed", "", "Fri", "", ""} {
		if name != "" {
			c.Days = append(c.Days, calLabel{X: 0, Y: top + i*step + calCell - 2, Text: name})
		}
	}
	return c
}

// activityChart is a bar a day of the prompts written.
func activityChart(days []insights.Day) chart {
	c := chart{Title: "Prompts per day", Width: chartWidth}
	if len(days) == 0 {
		return c
	}
	var top int64
	for _, d := range days {
		top = max(top, d.Prompts)
	}
	c.Max = human.Count(top)
	slot := float64(chartWidth) / float64(len(days))
	c.BarWidth = slot * 0.8
	for i, d := range days {
		b := bar{Day: d.Date, X: float64(i)*slot + slot*0.1}
		if top > 0 && d.Prompts > 0 {
			h := float64(d.Prompts) / float64(top) * chartHeight
			b.Label = fmt.Sprintf("%s: %s in %s", d.Date, human.Plural(int(d.Prompts), "prompt"), human.Plural(int(d.Sessions), "session"))
			b.Segments = []segment{{Y: chartHeight - h, H: h, Class: "s0", Title: b.Label}}
		}
		c.Bars = append(c.Bars, b)
	}
	c.Ticks = []string{days[0].Date, days[len(days)/2].Date, days[len(days)-1].Date}
	return c
}

// mixOf is a share bar of list's tokens: the first usageSeries by
// cost, the rest as one.
func mixOf(id, title string, list []insights.Share) mix {
	m := mix{ID: id, Title: title}
	var rest, x float64
	for i, s := range list {
		if i >= usageSeries {
			rest += s.TokenShare
			continue
		}
		name := s.Name
		if name == "" {
			name = "(none)"
		}
		m.Parts = append(m.Parts, mixPart{Name: name, Class: fmt.Sprintf("s%d", i), X: x, Percent: s.TokenShare * 100,
			Label: fmt.Sprintf("%s: %s tokens (%s), %s", name, human.Count(s.Tokens), human.Percent(s.TokenShare), usd(s.CostUSD))})
		x += s.TokenShare * 100
	}
	if rest > 0 {
		m.Parts = append(m.Parts, mixPart{Name: "other", Class: "s-other", X: x, Percent: rest * 100, Label: "other: " + human.Percent(rest)})
	}
	return m
}
