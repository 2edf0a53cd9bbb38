package server

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/htmlview"
)

// The sessions page: a table of the user's sessions, newest first, with
// the filters of the API's list and a column to sort by.
//
// The store lists sessions newest first, a page at a time; a sort orders
// the page shown, and "Older" still moves to the next page by update
// time.

type sessionsData struct {
	Surface, Project, Kind, Q string
	Archived                  bool
	Sort                      string
	Columns                   []columnHead
	// Rows are the page's sessions; in the store's order (newest first),
	// each sub-agent session under the session that ran it when that one
	// is on the page too (loom.NestSubagents).
	Rows     []sessionRow
	Projects []loom.Project
	Surfaces []string
	Next     string
	Paged    bool
}

// sessionRow is a row of the sessions table: a session, and its depth
// under the session that ran it, as the class that indents it ("" at
// the top; "child depth-1" to "child depth-3", deeper ones as 3).
type sessionRow struct {
	S     *loom.Session
	Class string
}

// sessionRows are the rows of list: nested when nest, else flat (a
// sort by a column compares every session with every other).
func sessionRows(list []*loom.Session, nest bool) []sessionRow {
	rows := make([]sessionRow, 0, len(list))
	if !nest {
		for _, s := range list {
			rows = append(rows, sessionRow{S: s})
		}
		return rows
	}
	for _, n := range loom.NestSubagents(list) {
		r := sessionRow{S: n.S}
		if n.Depth > 0 {
			r.Class = fmt.Sprintf("child depth-%d", min(n.Depth, 3))
		}
		rows = append(rows, r)
	}
	return rows
}

// columnHead is a column's header: its name, the address that sorts by
// it, and whether it does now ("ascending" or "descending", for
// aria-sort).
type columnHead struct {
	Key   string // the column's sort key, its class ("col-KEY") too
	Label string
	Num   bool
	URL   string
	Sort  string
}

// sortColumn is a column of the sessions table the page sorts by. A text
// column sorts a to z first, with empty cells last either way; a number
// or a time sorts largest first.
type sortColumn struct {
	key, label string
	text       func(*loom.Session) string
	num        func(a, b *loom.Session) int
}

// defaultSort is the store's order: latest update first.
const defaultSort = "-updated"

var sortColumns = []sortColumn{
	{key: "title", label: "Title", text: func(s *loom.Session) string { return strings.ToLower(htmlview.SessionName(s)) }},
	{key: "surface", label: "Surface", text: func(s *loom.Session) string { return s.Surface }},
	{key: "project", label: "Project", text: func(s *loom.Session) string { return strings.ToLower(s.Project.Name) }},
	{key: "branch", label: "Branch", text: func(s *loom.Session) string { return s.GitBranch }},
	{key: "model", label: "Model", text: func(s *loom.Session) string { return s.Model }},
	{key: "messages", label: "Messages", num: func(a, b *loom.Session) int { return cmp.Compare(a.MessageCount, b.MessageCount) }},
	{key: "cost", label: "Cost", num: func(a, b *loom.Session) int { return cmp.Compare(a.Usage.CostUSD, b.Usage.CostUSD) }},
	{key: "updated", label: "Updated", num: func(a, b *loom.Session) int { return a.UpdatedAt.Compare(b.UpdatedAt) }},
}

// parseSort reads ?sort=: a column's key, "-" before it for the other
// way round.
func parseSort(v string) (col *sortColumn, desc bool, err error) {
	if v == "" {
		v = defaultSort
	}
	key, desc := strings.CutPrefix(v, "-")
	for i := range sortColumns {
		if sortColumns[i].key == key {
			return &sortColumns[i], desc, nil
		}
	}
	keys := make([]string, len(sortColumns))
	for i, c := range sortColumns {
		keys[i] = c.key
	}
	return nil, false, loom.Errorf(loom.EINVALID, "sort must be one of %s, with - before it for the other way round", strings.Join(keys, ", "))
}

// sortSessions orders a page of sessions by col; ties keep the store's
// order.
func sortSessions(list []*loom.Session, col *sortColumn, desc bool) {
	slices.SortStableFunc(list, func(a, b *loom.Session) int {
		var c int
		if col.text != nil {
			ta, tb := col.text(a), col.text(b)
			if (ta == "") != (tb == "") {
				if ta == "" {
					return 1
				}
				return -1
			}
			c = strings.Compare(ta, tb)
		} else {
			c = col.num(a, b)
		}
		if desc {
			return -c
		}
		return c
	})
}

// columnHeads are the table's headers; each links to the page sorted by
// its column, the other way round when it is the column sorted by now.
func columnHeads(q url.Values, cur *sortColumn, desc bool) []columnHead {
	heads := make([]columnHead, len(sortColumns))
	for i := range sortColumns {
		c := &sortColumns[i]
		h := columnHead{Key: c.key, Label: c.label, Num: c.num != nil}
		next := c.key
		if c.num != nil {
			next = "-" + c.key
		}
		if c == cur {
			h.Sort = "ascending"
			next = "-" + c.key
			if desc {
				h.Sort = "descending"
				next = c.key
			}
		}
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Del("sort")
		if next != defaultSort {
			v.Set("sort", next)
		}
		h.URL = "/"
		if len(v) > 0 {
			h.URL += "?" + v.Encode()
		}
		heads[i] = h
	}
	return heads
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, userOf(r))
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	q := newQuery(r)
	archived := q.bool("archived")
	sortBy := q.str("sort")
	col, desc, err := parseSort(sortBy)
	if err == nil {
		err = q.err
	}
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	if archived {
		p.filter.Archived = loom.OnlyArchived
	}
	list, err := s.sessions(r.Context(), p)
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	if sortBy != "" && sortBy != defaultSort {
		sortSessions(list.Sessions, col, desc)
	} else {
		sortBy = ""
	}
	d := sessionsData{
		Surface: p.filter.Surface, Project: p.filter.ProjectID, Kind: p.filter.Kind, Q: p.filter.Text, Archived: archived, Sort: sortBy,
		Columns: columnHeads(r.URL.Query(), col, desc), Rows: sessionRows(list.Sessions, sortBy == ""), Paged: p.filter.Before != nil,
	}
	if list.Next != "" {
		q := r.URL.Query()
		q.Set("cursor", list.Next)
		d.Next = "/?" + q.Encode()
	}
	d.Projects, d.Surfaces, err = s.choices(r.Context(), userOf(r))
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "sessions", layoutData{Title: "Sessions", Nav: "sessions", Body: d})
}
