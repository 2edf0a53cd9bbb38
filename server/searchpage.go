package server

import (
	"net/http"
	"strconv"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/htmlview"
	"github.com/loomhq/loom/semantic"
)

// The search page: the API's search, rendered.

type searchData struct {
	Q, Surface, Project, Role string
	Hits                      []hitView
	Searched                  bool
	Partial                   bool
	Projects                  []loom.Project
	Surfaces                  []string
	Error                     string
}

type hitView struct {
	loom.SearchHit
	Name    string
	Snippet any
	URL     string
}

func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	ctx, user := r.Context(), userOf(r)
	q := newQuery(r)
	d := searchData{Q: q.str("q"), Surface: q.str("surface"), Project: q.str("project"), Role: q.str("role")}
	var err error
	if d.Projects, d.Surfaces, err = s.choices(ctx, user); err != nil {
		s.pageErr(w, r, err)
		return
	}
	status := http.StatusOK
	if d.Q != "" {
		d.Searched = true
		sq, err := s.searchQuery(r)
		var hits []loom.SearchHit
		if err == nil {
			sq.MarkStart, sq.MarkEnd = markStart, markEnd
			var res semantic.Result
			res, err = s.search(ctx, sq, semantic.Fused)
			hits = res.Hits
			d.Partial = loom.Partial(hits)
		}
		if err != nil {
			dt := detailOf(err)
			if dt.Code == loom.EINTERNAL {
				s.log.Error("search failed", "err", err)
			}
			d.Error, status = dt.Message, statusOf(dt.Code)
		}
		for _, h := range hits {
			name := h.SessionTitle
			if name == "" {
				name = first(h.SessionKey, htmlview.ShortID(h.SessionID))
			}
			d.Hits = append(d.Hits, hitView{
				SearchHit: h,
				Name:      name,
				Snippet:   highlight(h.Snippet),
				URL:       "/s/" + h.SessionID + "?before=" + strconv.FormatInt(h.Seq+pageMessages/2, 10) + "#m-" + strconv.FormatInt(h.Seq, 10),
			})
		}
	}
	s.render(w, r, status, "search", layoutData{Title: "Search", Nav: "search", Q: d.Q, Body: d})
}
