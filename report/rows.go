package report

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// rowGroups finds the row of a report each usage slice falls in,
// making the rows as it goes: a block's (made beforehand, one a
// slice), a session's, or a period's.
type rowGroups struct {
	by        string
	loc       *time.Location
	weekStart time.Weekday
	rows      []*Row
	index     map[time.Time]*Row
	sessions  map[string]*Row
}

func newRowGroups(o Options, loc *time.Location, slices []loom.UsageSlice, now time.Time) *rowGroups {
	g := &rowGroups{by: o.By, loc: loc, weekStart: o.weekStart()}
	switch o.By {
	case Block:
		g.rows = blocks(slices, now)
	case Session:
		g.sessions = map[string]*Row{}
	default:
		g.index = map[time.Time]*Row{}
	}
	return g
}

// row returns the row of s, the i-th slice.
func (g *rowGroups) row(i int, s *loom.UsageSlice) *Row {
	var row *Row
	switch g.by {
	case Block:
		row = g.rows[i]
	case Session:
		if row = g.sessions[s.SessionID]; row == nil {
			row = &Row{Period: s.SessionID, Start: s.First, End: s.Last}
			g.sessions[s.SessionID] = row
			g.rows = append(g.rows, row)
		}
		if s.First.Before(row.Start) {
			row.Start = s.First
		}
		if s.Last.After(row.End) {
			row.End = s.Last
		}
	default:
		start, end, name := period(g.by, s.Start.In(g.loc), g.weekStart)
		if row = g.index[start]; row == nil {
			row = &Row{Period: name, Start: start, End: end}
			g.index[start] = row
			g.rows = append(g.rows, row)
		}
	}
	return row
}

// sliceCost is the cost of s, whether it is priced, and the name of
// its model.
func (o Options) sliceCost(s *loom.UsageSlice) (float64, bool, string) {
	cost, priced := o.Prices.Cost(s.Provider, s.Model, s.Usage, s.LongContext)
	if !priced && s.Usage.CostUSD != 0 {
		// A cost the provider reported for a model the table
		// does not price.
		cost, priced = s.Usage.CostUSD, true
	}
	model := s.Model
	if model == "" {
		model = "(unknown model)"
	}
	return cost, priced, model
}

// addModel adds model to the row's sorted models, once.
func (r *Row) addModel(model string) {
	if i := sort.SearchStrings(r.Models, model); i == len(r.Models) || r.Models[i] != model {
		r.Models = append(r.Models, "")
		copy(r.Models[i+1:], r.Models[i:])
		r.Models[i] = model
	}
}

// breakdownKey is the key and name of the part of the breakdown s
// falls in.
func (o Options) breakdownKey(s *loom.UsageSlice, model string) (key, name string) {
	key, name = s.Provider+":"+s.Model, model
	switch o.Breakdown {
	case ByAgent:
		key, name = s.Surface, s.Surface
	case ByProject:
		key, name = s.ProjectID, s.ProjectName
	case ByMember:
		key = o.Member(s.SessionID)
		if key == "" {
			key = "(unknown member)"
		}
		name = key
	}
	return key, name
}

// labelProjects names the parts of a breakdown by project as people
// know the projects.
func labelProjects(ctx context.Context, o Options, parts map[*Row]map[string]*Part) {
	var refs []ProjectRef
	for _, ps := range parts {
		for _, p := range ps {
			refs = append(refs, ProjectRef{ID: p.Key, Name: p.Name})
		}
	}
	labels := ProjectLabels(ctx, o.Roots, o.UserID, refs)
	for _, ps := range parts {
		for _, p := range ps {
			p.Name = labels[p.Key]
		}
	}
}

// finish rounds the row, adds its parts, most costly first, and sets
// its times as a report writes them: a block's rates and name, a
// session's times in loc.
func (r *Row) finish(parts map[string]*Part, by string, now time.Time, loc *time.Location) {
	r.round()
	for _, p := range parts {
		p.round()
		r.Breakdown = append(r.Breakdown, *p)
	}
	sort.Slice(r.Breakdown, func(i, j int) bool {
		a, b := r.Breakdown[i], r.Breakdown[j]
		if a.Cost() != b.Cost() {
			return a.Cost() > b.Cost()
		}
		if a.TotalTokens != b.TotalTokens {
			return a.TotalTokens > b.TotalTokens
		}
		return a.Key < b.Key
	})
	if r.Block != nil {
		r.Block.rate(r, now, loc)
		r.Period = r.Start.In(loc).Format("2006-01-02 15:04")
		r.Block.First, r.Block.Last = writable(r.Block.First), writable(r.Block.Last)
	}
	if by == Session {
		r.Start, r.End = r.Start.In(loc), r.End.In(loc)
	}
	r.Start, r.End = writable(r.Start), writable(r.End)
}

// weekStart is the first day of o's weeks.
func (o Options) weekStart() time.Weekday {
	if o.WeekStart == nil {
		return time.Monday
	}
	return *o.WeekStart
}

// StartOfWeek reads a day's name (monday … sunday, or its first three
// letters) as the first day of a week.
func StartOfWeek(s string) (time.Weekday, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := strings.ToLower(d.String())
		if s == name || (len(s) >= 3 && strings.HasPrefix(name, s)) {
			return d, nil
		}
	}
	return 0, loom.Errorf(loom.EINVALID, "%q is not a day of the week: use monday, tuesday, … or sunday", s)
}

// period returns the start, end and name of the day, week (from
// weekday first) or month of t, in t's location.
func period(by string, t time.Time, first time.Weekday) (start, end time.Time, name string) {
	y, m, d := t.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, t.Location())
	switch by {
	case Week:
		start = day.AddDate(0, 0, -((int(day.Weekday()) - int(first) + 7) % 7))
		if first != time.Monday {
			// Not an ISO week: named by its first day.
			return start, start.AddDate(0, 0, 7), start.Format("2006-01-02")
		}
		wy, w := start.ISOWeek()
		return start, start.AddDate(0, 0, 7), fmt.Sprintf("%d-W%02d", wy, w)
	case Month:
		start = time.Date(y, m, 1, 0, 0, 0, 0, t.Location())
		return start, start.AddDate(0, 1, 0), start.Format("2006-01")
	default:
		return day, day.AddDate(0, 0, 1), day.Format("2006-01-02")
	}
}

// blocks returns the block of each slice, slices being oldest first: a
// block starts at the hour (UTC) of a message that is not in the block
// before, because that block has ended or no message came for
// BlockLength, and lasts BlockLength.
func blocks(slices []loom.UsageSlice, now time.Time) []*Row {
	out := make([]*Row, len(slices))
	var cur *Row
	for i := range slices {
		s := &slices[i]
		if cur == nil || !s.First.Before(cur.End) || s.First.Sub(cur.Block.Last) >= BlockLength {
			start := s.First.UTC().Truncate(time.Hour)
			cur = &Row{Start: start, End: start.Add(BlockLength), Block: &BlockInfo{First: s.First, Last: s.Last}}
		}
		if s.First.Before(cur.Block.First) {
			cur.Block.First = s.First
		}
		if s.Last.After(cur.Block.Last) {
			cur.Block.Last = s.Last
		}
		out[i] = cur
	}
	return out
}

// rate works out the burn rate of block row and, when it is active at
// now, its projection.
func (b *BlockInfo) rate(row *Row, now time.Time, loc *time.Location) {
	row.Start, row.End = row.Start.In(loc), row.End.In(loc)
	b.First, b.Last = b.First.In(loc), b.Last.In(loc)
	// A block that starts after now (files from a machine whose clock
	// runs ahead) is not active yet.
	b.Active = !now.Before(row.Start) && now.Before(row.End) && now.Sub(b.Last) < BlockLength
	hours := math.Max(b.Last.Sub(b.First).Hours(), 1.0/60)
	b.TokensPerHour = math.Round(float64(row.TotalTokens) / hours)
	if row.CostUSD != nil {
		c := loom.RoundCost(*row.CostUSD / hours)
		b.CostPerHour = &c
	}
	if !b.Active {
		return
	}
	left := row.End.Sub(now)
	b.RemainingMinutes = int64(math.Ceil(left.Minutes()))
	b.ProjectedTokens = row.TotalTokens + int64(math.Round(b.TokensPerHour*left.Hours()))
	if b.CostPerHour != nil {
		c := loom.RoundCost(*row.CostUSD + *b.CostPerHour*left.Hours())
		b.ProjectedCostUSD = &c
	}
}
