package server

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/report"
	"github.com/loomhq/loom/teamrun"
)

// TeamConfig says which team's store the server serves (loom serve
// --team): the team page lists its members and their sessions, and the
// usage page and GET /api/v1/usage split usage by member.
type TeamConfig struct {
	Name, ID, Hub string
	// Me is the name the member serving it has in the team.
	Me string
}

// teamSessions bounds the sessions the team page lists.
const teamSessions = 500

// teamMember is a row of the team page: one member's sessions here.
type teamMember struct {
	Name     string
	Me       bool
	Sessions int
	Messages int
	Last     time.Time
	// Usage is the member's, at the report's costs.
	Usage   loom.Usage
	URL     string
	Current bool
}

// teamSession is a session of the team page's list.
type teamSession struct {
	S      *loom.Session
	Member string
	Totals report.Totals
}

type teamData struct {
	Team    TeamConfig
	Members []teamMember
	// Member is the member whose sessions are listed ("" every one's).
	Member   string
	Sessions []teamSession
	// More is how many sessions were left out of the list.
	More int
	// Total is the team's usage, the members' summed.
	Total loom.Usage
	TZ    string
}

// memberOf sets what names the member of each session of o's report in
// a team's store.
func (s *Server) memberOf(ctx context.Context, o *report.Options) {
	if s.cfg.Team != nil {
		o.Member = report.Members(ctx, s.st)
	}
}

// teamPage is /team: the team's members with their sessions, messages,
// tokens and cost as this machine holds them (the figures are package
// report's, as loom usage --team's), and the sessions of one member
// (?member=) or of all.
func (s *Server) teamPage(w http.ResponseWriter, r *http.Request) {
	ctx, user := r.Context(), userOf(r)
	q := newQuery(r)
	d := teamData{Team: *s.cfg.Team, Member: q.str("member"), TZ: "UTC"}
	if q.err != nil {
		s.pageErr(w, r, q.err)
		return
	}
	o := report.Options{UserID: user, By: report.Session, Breakdown: report.ByMember, Location: time.UTC, Prices: s.prices(), Now: time.Now()}
	s.memberOf(ctx, &o)
	rep, err := report.Build(ctx, s.st, o)
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	d.Total = usageOf(rep.Total)
	bySession := map[string]report.Totals{}
	members := map[string]*teamMember{}
	member := func(name string) *teamMember {
		m := members[name]
		if m == nil {
			m = &teamMember{Name: name, Me: name == d.Team.Me, URL: "/team?" + url.Values{"member": {name}}.Encode(), Current: name == d.Member}
			members[name] = m
		}
		return m
	}
	for _, row := range rep.Rows {
		bySession[row.Period] = row.Totals
		for _, p := range row.Breakdown {
			member(p.Key).Usage.Add(usageOf(p.Totals))
		}
	}
	all, err := s.st.Sessions(ctx, loom.SessionFilter{UserID: user, Archived: loom.WithArchived})
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	for _, ses := range all {
		name := ses.Member
		if name == "" {
			name = "(unknown member)"
		}
		m := member(name)
		m.Sessions++
		m.Messages += ses.MessageCount
		if ses.UpdatedAt.After(m.Last) {
			m.Last = ses.UpdatedAt
		}
		if d.Member != "" && name != d.Member {
			continue
		}
		if len(d.Sessions) == teamSessions {
			d.More++
			continue
		}
		d.Sessions = append(d.Sessions, teamSession{S: ses, Member: name, Totals: bySession[ses.ID]})
	}
	for _, m := range members {
		d.Members = append(d.Members, *m)
	}
	slices.SortFunc(d.Members, func(a, b teamMember) int {
		return cmp.Or(cmp.Compare(b.Usage.CostUSD, a.Usage.CostUSD), cmp.Compare(b.Sessions, a.Sessions), cmp.Compare(a.Name, b.Name))
	})
	if d.Member != "" && members[d.Member] == nil {
		s.pageError(w, r, http.StatusNotFound, "No member of this team by that name has sessions on this machine.")
		return
	}
	s.render(w, r, http.StatusOK, "team", layoutData{Title: "Team " + d.Team.Name, Nav: "team", Body: d})
}

// TeamOf is the TeamConfig of team s (nil for none).
func TeamOf(s *teamrun.State) *TeamConfig {
	if s == nil {
		return nil
	}
	return &TeamConfig{Name: s.Name, ID: s.ID, Hub: s.Hub, Me: s.Me}
}

// usageOf is a report's totals as a loom.Usage (an unknown cost as 0,
// which human.UsageCost shows as unknown where there are tokens).
func usageOf(t report.Totals) loom.Usage {
	return loom.Usage{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, ReasoningTokens: t.ReasoningTokens,
		CacheReadTokens: t.CacheReadTokens, CacheWriteTokens: t.CacheWriteTokens, CostUSD: t.Cost()}
}
