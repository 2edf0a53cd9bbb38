package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/report"
	"github.com/loomhq/loom/semantic"
)

// Limits of list-like answers.
const (
	defaultListLimit     = 50
	maxListLimit         = 200
	defaultMessagesLimit = 50
	maxMessagesLimit     = 1000
	defaultSearchLimit   = 20
	maxSearchLimit       = 200
)

// router is the mux the routes are registered on. It keeps their
// patterns, so that everything the server answers can be listed
// (Server.Routes): each route is a way the store's text may leave, and
// one added is seen.
type router struct {
	*http.ServeMux
	patterns []string
}

func (r *router) Handle(pattern string, h http.Handler) {
	r.patterns = append(r.patterns, pattern)
	r.ServeMux.Handle(pattern, h)
}

func (r *router) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	r.patterns = append(r.patterns, pattern)
	r.ServeMux.HandleFunc(pattern, h)
}

// Routes returns the pattern of every route the server registered, in
// the order it registered them.
func (s *Server) Routes() []string { return slices.Clone(s.patterns) }

// routes builds the handler tree.
func (s *Server) routes() http.Handler {
	mux := &router{ServeMux: http.NewServeMux()}
	defer func() { s.patterns = mux.patterns }()
	mux.HandleFunc("GET /healthz", s.healthz)

	mux.HandleFunc("GET /api/v1/sessions", s.api(s.listSessions))
	mux.HandleFunc("GET /api/v1/sessions/{id}", s.api(s.getSession))
	mux.HandleFunc("PATCH /api/v1/sessions/{id}", s.api(s.patchSession))
	mux.HandleFunc("DELETE /api/v1/sessions/{id}", s.api(s.deleteSession))
	mux.HandleFunc("GET /api/v1/sessions/{id}/messages", s.api(s.listMessages))
	mux.HandleFunc("POST /api/v1/sessions/{id}/fork", s.api(s.forkSession))
	mux.HandleFunc("POST /api/v1/sessions/{id}/rewind", s.api(s.rewindSession))
	mux.HandleFunc("GET /api/v1/sessions/{id}/events", s.apiStream(s.sessionEvents))
	mux.HandleFunc("GET /api/v1/events", s.apiStream(s.listEvents))
	mux.HandleFunc("GET /api/v1/search", s.api(s.searchAPI))
	mux.HandleFunc("GET /api/v1/usage", s.api(s.usage))
	mux.HandleFunc("GET /api/v1/usage/insights", s.api(s.insightsAPI))
	mux.HandleFunc("POST /api/v1/messages", s.apiStream(s.postMessage))
	if s.cfg.Blame != nil {
		mux.HandleFunc("GET /api/v1/blame", s.api(s.blameAPI))
	}
	s.hubRoutes(mux)
	s.shareRoutes(mux)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) { s.apiFallback(mux.ServeMux, w, r) })

	if s.cfg.MCP != nil {
		mux.Handle("/mcp", s.mcpHandler(*s.cfg.MCP))
	}

	s.dashboardRoutes(mux)
	return s.wrap(mux)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	// One cheap read proves the store answers.
	if _, err := s.st.Sessions(ctx, loom.SessionFilter{UserID: "\x00healthz", Limit: 1}); err != nil {
		s.log.Error("health check failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// apiFallback answers API paths no route took: 405 when the path exists
// for another method, else 404, both as JSON.
func (s *Server) apiFallback(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/api/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.writeError(w, r, codedError(eMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	s.writeError(w, r, codedError(loom.ENOTFOUND, "no such endpoint: %s", r.URL.Path))
}

// pathSession is the user's session that the request's path names
// ({id}); when there is none it answers the request with the error and
// returns nil.
func (s *Server) pathSession(w http.ResponseWriter, r *http.Request) *loom.Session {
	x, err := s.session(r.Context(), userOf(r), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return nil
	}
	return x
}

// session finds the session ref names for user: an exact id (trashed
// sessions included), else a unique id prefix, key or title among the
// user's live sessions. Another user's session is not found, whatever
// ref says.
func (s *Server) session(ctx context.Context, user, ref string) (*loom.Session, error) {
	x, err := s.st.Session(ctx, ref)
	switch {
	case err == nil && x.UserID == user:
		return x, nil
	case err != nil && loom.ErrorCode(err) != loom.ENOTFOUND:
		return nil, err
	}
	x, err = s.st.Resolve(ctx, ref, loom.ResolveScope{UserID: user})
	if err != nil {
		return nil, err
	}
	if x.UserID != user {
		return nil, loom.NotFound(ref)
	}
	return x, nil
}

// sessionList is a page of sessions; Next is the cursor of the following
// page, empty on the last.
type sessionList struct {
	Sessions []*loom.Session `json:"sessions"`
	Next     string          `json:"next"`
}

// listParams are the filters of a session list.
type listParams struct {
	filter loom.SessionFilter
}

func parseList(r *http.Request, user string) (listParams, error) {
	q := newQuery(r)
	p := listParams{filter: loom.SessionFilter{
		UserID:    user,
		Surface:   q.str("surface"),
		ProjectID: q.str("project"),
		Kind:      q.kind("kind"),
		ParentID:  q.str("parent"),
		Deleted:   q.bool("deleted"),
		GitBranch: q.str("branch"),
		Text:      q.str("q"),
		Limit:     q.int("limit", defaultListLimit, 1, maxListLimit),
	}}
	if q.bool("archived") {
		p.filter.Archived = loom.OnlyArchived
	}
	if c := q.str("cursor"); c != "" && q.err == nil {
		cur, err := loom.ParseCursor(c)
		if err != nil {
			return p, err
		}
		p.filter.Before = cur
	}
	return p, q.err
}

// sessions lists a page of the user's sessions, newest first. With text
// (q), it lists the sessions whose title, key, description, last prompt
// or id prefix contains it or whose messages match it as a search (see
// loom.SessionFilter.Text).
func (s *Server) sessions(ctx context.Context, p listParams) (*sessionList, error) {
	f := p.filter
	f.Limit++
	page, err := s.st.Sessions(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &sessionList{Sessions: page}
	if len(page) > p.filter.Limit {
		out.Sessions = page[:p.filter.Limit]
		out.Next = loom.CursorAfter(out.Sessions[len(out.Sessions)-1]).String()
	}
	return out, nil
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, userOf(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.sessions(r.Context(), p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if out.Sessions == nil {
		out.Sessions = []*loom.Session{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	x := s.pathSession(w, r)
	if x == nil {
		return
	}
	writeJSON(w, http.StatusOK, x)
}

func (s *Server) patchSession(w http.ResponseWriter, r *http.Request) {
	x := s.pathSession(w, r)
	if x == nil {
		return
	}
	var in struct {
		Title       *string `json:"title"`
		Description *string `json:"description"`
		Archived    *bool   `json:"archived"`
	}
	if err := s.decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	u := loom.SessionUpdate{Title: in.Title, Description: in.Description, Archived: in.Archived}
	var err error
	if in.Title == nil && in.Description == nil && in.Archived == nil {
		err = loom.Errorf(loom.EINVALID, "nothing to change: give title, description or archived")
	} else {
		err = u.Validate()
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	x, err = s.st.UpdateSession(r.Context(), x.ID, u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, x)
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	opts := loom.DeleteOptions{Purge: q.bool("purge"), Force: q.bool("force")}
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	x := s.pathSession(w, r)
	if x == nil {
		return
	}
	// A session another process is writing answers 409 with its holder,
	// unless force.
	if _, err := s.st.Delete(r.Context(), x.ID, opts); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// messagePage is a window of a session's messages, oldest first.
// NextBefore is the before value of the page of older messages, 0 when
// this page starts at the first message.
type messagePage struct {
	Messages   []*loom.Message `json:"messages"`
	NextBefore int64           `json:"next_before"`
}

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	mq := loom.MessageQuery{
		Limit:  q.int("limit", defaultMessagesLimit, 1, maxMessagesLimit),
		Before: q.seq("before"),
		After:  q.seq("after"),
	}
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	x := s.pathSession(w, r)
	if x == nil {
		return
	}
	msgs, err := s.st.Messages(r.Context(), x.ID, mq)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := messagePage{Messages: msgs}
	if msgs == nil {
		out.Messages = []*loom.Message{}
	}
	if len(msgs) > 0 && msgs[0].Seq > max(mq.After, 0)+1 {
		out.NextBefore = msgs[0].Seq
	}
	writeJSON(w, http.StatusOK, out)
}

// rewound is the answer of a rewind: the session as it is now and the
// fork that holds the turns it gave up.
type rewound struct {
	Session *loom.Session `json:"session"`
	Fork    *loom.Session `json:"fork"`
}

// rewind takes x back to the end of turn, unless a turn runs here on
// x's key: the store's lock is this server's own then, so the key's
// reservation is what keeps the session from being taken back under
// that turn.
func (s *Server) rewind(ctx context.Context, user string, x *loom.Session, turn int) (*loom.Session, error) {
	if ok, _ := s.beginTurn(user, x.Key); !ok {
		return nil, loom.Errorf(loom.ELOCKED, "session %s is answering a message; rewind it when the turn has ended", x.ID)
	}
	defer s.endTurn(user, x.Key)
	return s.st.Rewind(ctx, x.ID, loom.RewindOptions{Turn: turn})
}

func (s *Server) rewindSession(w http.ResponseWriter, r *http.Request) {
	x := s.pathSession(w, r)
	if x == nil {
		return
	}
	var in struct {
		Turn int `json:"turn"`
	}
	if err := s.decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	fk, err := s.rewind(r.Context(), userOf(r), x, in.Turn)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	now, err := s.st.Session(r.Context(), x.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rewound{Session: now, Fork: fk})
}

func (s *Server) forkSession(w http.ResponseWriter, r *http.Request) {
	x := s.pathSession(w, r)
	if x == nil {
		return
	}
	var in struct {
		Turn  int    `json:"turn"`
		Title string `json:"title"`
	}
	if err := s.decode(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	// The store's fork plan checks the turn, the title and the trash.
	f, err := s.st.Fork(r.Context(), x.ID, loom.ForkOptions{Turn: in.Turn, Title: strings.TrimSpace(in.Title)})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/sessions/"+f.ID)
	writeJSON(w, http.StatusCreated, f)
}

// searchResult is the answer of GET /api/v1/search.
type searchResult struct {
	Hits []loom.SearchHit `json:"hits"`
	// Partial: the search ran out of time, and Hits are the best it
	// found before, not all (see loom.MaxSearchTime).
	Partial bool `json:"partial,omitempty"`
}

// search runs sq on the server's searcher: keyword search fused with
// search by meaning where an embeddings model is at hand.
func (s *Server) search(ctx context.Context, sq loom.SearchQuery, mode semantic.Mode) (semantic.Result, error) {
	if s.searcher == nil {
		return (&semantic.Searcher{Store: s.st}).Search(ctx, sq, mode)
	}
	return s.searcher.Search(ctx, sq, mode)
}

// searchQuery reads a search's parameters; the session parameter is a
// reference resolved for the user.
func (s *Server) searchQuery(r *http.Request) (loom.SearchQuery, error) {
	q := newQuery(r)
	sq := loom.SearchQuery{
		Text:      q.str("q"),
		UserID:    userOf(r),
		ProjectID: q.str("project"),
		Surface:   q.str("surface"),
		Role:      q.str("role"),
		Raw:       q.bool("raw"),
		Archived:  q.bool("archived"),
		Exact:     q.bool("exact"),
		Since:     q.time("since"),
		Until:     q.time("until"),
		Limit:     q.int("limit", defaultSearchLimit, 1, maxSearchLimit),
	}
	if q.err != nil {
		return sq, q.err
	}
	if sq.Text == "" {
		return sq, loom.Errorf(loom.EINVALID, "q is required: the words to search for")
	}
	if sq.Role != "" && !loom.ValidRole(sq.Role) {
		return sq, loom.Errorf(loom.EINVALID, "role must be user, assistant, tool, system or summary")
	}
	if ref := q.str("session"); ref != "" {
		x, err := s.session(r.Context(), sq.UserID, ref)
		if err != nil {
			return sq, err
		}
		sq.SessionID = x.ID
	}
	return sq, nil
}

func (s *Server) searchAPI(w http.ResponseWriter, r *http.Request) {
	sq, err := s.searchQuery(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q := newQuery(r)
	mode, err := semantic.ModeOf(q.bool("semantic"), q.bool("keyword"))
	if err == nil && q.err != nil {
		err = q.err
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if sq.Exact {
		mode = semantic.Keyword
	}
	res, err := s.search(r.Context(), sq, mode)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	hits := res.Hits
	if hits == nil {
		hits = []loom.SearchHit{}
	}
	writeJSON(w, http.StatusOK, searchResult{Hits: hits, Partial: loom.Partial(hits)})
}

// usage answers GET /api/v1/usage: the report of package report, by
// day (default), week, month or block, with since, until, tz (default
// UTC), breakdown, agent and project (an id).
func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	req := report.Request{By: q.str("by"), Breakdown: q.str("breakdown"), Since: q.str("since"), Until: q.str("until"), TZ: q.str("tz"), Agent: q.str("agent"),
		StartOfWeek: q.str("start_of_week")}
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	o, err := req.Options(userOf(r), time.UTC, time.Now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	o.ProjectID, o.Prices, o.Roots = q.str("project"), s.prices(), s.st
	s.memberOf(r.Context(), &o)
	rep, err := report.Build(r.Context(), s.st, o)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// prices is the price table of usage reports: Config.Prices, else that
// of the MCP tools, else the bundled one.
func (s *Server) prices() *pricing.Table {
	if s.cfg.Prices == nil && s.cfg.MCP != nil {
		return s.cfg.MCP.Prices
	}
	return s.cfg.Prices
}
