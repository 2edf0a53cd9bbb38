package server

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/htmlview"
	"github.com/loomhq/loom/report"
)

// Dashboard limits.
const (
	// pageMessages is how many messages a session page shows at once.
	pageMessages = 200
	// treeNodes bounds a lineage tree; treeDepth its depth.
	treeNodes = 300
	treeDepth = 6
	// projectScan is how many recent sessions the project filter's
	// choices come from.
	projectScan = 500
)

func (s *Server) dashboardRoutes(mux *router) {
	mux.Handle("GET /static/", http.StripPrefix("/static/", s.staticHandler()))
	mux.HandleFunc("GET /login", s.withTimeout(s.loginPage))
	mux.HandleFunc("POST /login", s.checked(s.withTimeout(s.login)))
	mux.HandleFunc("POST /logout", s.checked(s.logout))
	mux.HandleFunc("GET /{$}", s.page(s.sessionsPage))
	mux.HandleFunc("GET /search", s.page(s.searchPage))
	mux.HandleFunc("GET /usage", s.page(s.usagePage))
	mux.HandleFunc("GET /insights", s.page(s.insightsPage))
	if s.cfg.Blame != nil {
		mux.HandleFunc("GET /blame", s.page(s.blamePage))
	}
	if s.cfg.Team != nil {
		mux.HandleFunc("GET /team", s.page(s.teamPage))
	}
	mux.HandleFunc("GET /s/{id}", s.page(s.sessionPage))
	mux.HandleFunc("GET /s/{id}/m/{seq}", s.page(s.messageFragment))
	mux.HandleFunc("GET /s/{id}/usage", s.page(s.usageFragment))
	mux.HandleFunc("POST /s/{id}/edit", s.checked(s.page(s.editSession)))
	mux.HandleFunc("POST /s/{id}/fork", s.checked(s.page(s.forkFromPage)))
	mux.HandleFunc("POST /s/{id}/delete", s.checked(s.page(s.deleteFromPage)))
	mux.HandleFunc("GET /static/session.css", sessionCSS)
	mux.HandleFunc("GET /s/{id}/export.html", s.page(s.downloadHTML))
	mux.HandleFunc("POST /s/{id}/archive", s.checked(s.page(s.archiveFromPage)))
	mux.HandleFunc("POST /s/{id}/rewind", s.checked(s.page(s.rewindFromPage)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.pageError(w, r, http.StatusNotFound, "There is no page here.")
	})
}

// staticHandler serves the dashboard's files; a directory is not a page
// (404), so the files are never listed.
func (s *Server) staticHandler() http.Handler {
	fsrv := http.FileServerFS(staticFS)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if fi, err := fs.Stat(staticFS, name); name == "" || err != nil || fi.IsDir() {
			s.pageError(w, r, http.StatusNotFound, "There is no page here.")
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}

// checked refuses cross-site state changes.
func (s *Server) checked(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.csrf.Check(r); err != nil {
			s.pageError(w, r, http.StatusForbidden, "This request came from another site and was refused.")
			return
		}
		next(w, r)
	}
}

// page authenticates a dashboard request by its cookie. A token in the
// query (the link loom serve prints) logs nobody in by itself: the
// browser is sent to the login page, which says whose the token is and
// logs in as them once the user confirms (see linkCookie), and then to
// the same address without the token, so that it leaves the address bar
// and the history. A browser already logged in as the token's user goes
// straight on. The page's store reads are bounded by the request
// timeout.
func (s *Server) page(next http.HandlerFunc) http.HandlerFunc {
	return s.withTimeout(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if tok := r.URL.Query().Get("token"); tok != "" && r.Method == http.MethodGet {
			user, err := s.authenticate(ctx, tok)
			if err != nil {
				s.renderLogin(w, r, http.StatusUnauthorized, "That token is unknown, revoked or expired.")
				return
			}
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			if c, err := r.Cookie(cookieName); err == nil && c.Value != "" {
				if cur, err := s.authenticate(ctx, c.Value); err == nil && cur == user {
					http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
					return
				}
			}
			setLinkCookie(w, r, tok)
			http.Redirect(w, r, "/login?"+url.Values{"next": {u.RequestURI()}}.Encode(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(cookieName)
		if err != nil || c.Value == "" {
			s.toLogin(w, r, "")
			return
		}
		user, err := s.authenticate(ctx, c.Value)
		if loom.ErrorCode(err) == eUnauthorized {
			clearCookie(w, r)
			s.toLogin(w, r, loginRevoked)
			return
		}
		if err != nil {
			s.pageErr(w, r, err)
			return
		}
		next(w, withUser(r, user))
	})
}

// Codes of the login page's messages, for its msg parameter.
const loginRevoked = "revoked"

// loginMessages are what the login page says, by the code in its msg
// parameter: it never shows text from its address, which anyone can
// write into a link.
var loginMessages = map[string]string{
	loginRevoked: "Your token was revoked or has expired; log in with another.",
}

// toLogin sends the browser to the login page, with the code of a
// message (loginMessages) or none.
func (s *Server) toLogin(w http.ResponseWriter, r *http.Request, code string) {
	if r.Method != http.MethodGet {
		s.renderLogin(w, r, http.StatusUnauthorized, first(loginMessages[code], "Log in first."))
		return
	}
	q := url.Values{"next": {r.URL.RequestURI()}}
	if code != "" {
		q.Set("msg", code)
	}
	http.Redirect(w, r, "/login?"+q.Encode(), http.StatusSeeOther)
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// layoutData is what every page's layout shows.
type layoutData struct {
	Title string
	User  string
	Nav   string
	Q     string
	// Blame says whether the user may blame files here (the navigation
	// links the page).
	Blame bool
	// Team names the team whose store is served ("" for one's own).
	Team string
	Body any
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, d layoutData) {
	d.User = userOf(r)
	d.Blame = s.blameFor(d.User)
	if s.cfg.Team != nil {
		d.Team = s.cfg.Team.Name
	}
	var b bytes.Buffer
	if err := s.pages.render(&b, name, d); err != nil {
		s.log.Error("render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func (s *Server) pageError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error", layoutData{Title: http.StatusText(status), Body: map[string]any{"Status": status, "Message": msg}})
}

// pageErr shows a store error as a page, with the status the API would
// give it.
func (s *Server) pageErr(w http.ResponseWriter, r *http.Request, err error) {
	err = s.timedOut(r, err)
	setRetryAfter(w, err)
	d := detailOf(err)
	switch d.Code {
	case loom.EINTERNAL:
		s.log.Error("page failed", "path", r.URL.Path, "err", err)
	case loom.ENOSPACE:
		s.log.Error("page failed: out of disk space", "path", r.URL.Path, "err", causeOf(err))
	}
	s.pageError(w, r, statusOf(d.Code), d.Message)
}

// login

type loginData struct {
	Error string
	Next  string
	// LinkUser is the user a login link's token (linkCookie) logs in
	// as, for the page to ask whether to; "" without one.
	LinkUser string
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	d := loginData{Error: loginMessages[r.URL.Query().Get("msg")], Next: safeNext(r.FormValue("next"))}
	if c, err := r.Cookie(linkCookie); err == nil && c.Value != "" {
		user, err := s.authenticate(r.Context(), c.Value)
		switch {
		case err == nil:
			d.LinkUser = user
		case loom.ErrorCode(err) == eUnauthorized:
			clearLinkCookie(w, r)
			d.Error = "That login link's token is unknown, revoked or expired."
		default:
			s.pageErr(w, r, err)
			return
		}
	}
	s.render(w, r, http.StatusOK, "login", layoutData{Title: "Log in", Body: d})
}

func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "login", layoutData{Title: "Log in", Body: loginData{Error: msg, Next: safeNext(r.FormValue("next"))}})
}

// safeNext keeps a post-login destination on this site: a local path,
// which starts with one slash, holds no backslash (browsers read "/\\"
// as "//") and no control character (they drop tabs and line breaks, so
// "/\t/host" would become "//host"); anything else is "/".
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') {
		return "/"
	}
	for _, c := range next {
		if c < 0x20 || c >= 0x7f && c <= 0x9f {
			return "/"
		}
	}
	return next
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(w, r); err != nil {
		s.pageErr(w, r, err)
		return
	}
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if tok == "" && r.PostFormValue("link") != "" {
		// The confirmation of a login link: its token is in linkCookie,
		// and this POST is same-origin (checked).
		if c, err := r.Cookie(linkCookie); err == nil {
			tok = c.Value
		}
		if tok == "" {
			s.renderLogin(w, r, http.StatusBadRequest, "The login link has expired: open it again, or paste a token.")
			return
		}
	}
	if tok == "" {
		s.renderLogin(w, r, http.StatusBadRequest, "Paste a token.")
		return
	}
	if _, err := s.authenticate(r.Context(), tok); err != nil {
		if loom.ErrorCode(err) == eUnauthorized {
			clearLinkCookie(w, r)
			s.renderLogin(w, r, http.StatusUnauthorized, "That token is unknown, revoked or expired.")
			return
		}
		s.pageErr(w, r, err)
		return
	}
	clearLinkCookie(w, r)
	setCookie(w, r, tok)
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	clearCookie(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// choices are the projects and surfaces of the user's recent sessions,
// for the filters.
func (s *Server) choices(ctx context.Context, user string) ([]loom.Project, []string, error) {
	recent, err := s.st.Sessions(ctx, loom.SessionFilter{UserID: user, Limit: projectScan})
	if err != nil {
		return nil, nil, err
	}
	var projects []loom.Project
	surfaces := []string{"cli", "http", "telegram", "discord"}
	seenP, seenS := map[string]bool{}, map[string]bool{}
	for _, x := range surfaces {
		seenS[x] = true
	}
	for _, x := range recent {
		if x.Project.ID != "" && !seenP[x.Project.ID] {
			seenP[x.Project.ID] = true
			projects = append(projects, x.Project)
		}
		if x.Surface != "" && !seenS[x.Surface] {
			seenS[x.Surface] = true
			surfaces = append(surfaces, x.Surface)
		}
	}
	// Named as loom usage and insights name them: apart where several
	// share a name.
	refs := make([]report.ProjectRef, len(projects))
	for i, p := range projects {
		refs[i] = report.ProjectRef{ID: p.ID, Name: p.Name}
	}
	labels := report.ProjectLabels(ctx, s.st, user, refs)
	for i := range projects {
		projects[i].Name = labels[projects[i].ID]
	}
	return projects, surfaces, nil
}

// session page

type sessionData struct {
	S        *loom.Session
	Parent   *loom.Session
	Messages []*loom.Message
	Earlier  string
	Later    string
	Live     bool
	LastSeq  int64
	Tree     *htmlview.Tree
	// Rewound is the fork a rewind from this page just moved the later
	// turns to, for the page to say so.
	Rewound *loom.Session
	// Edited are the files the edits of the messages shown wrote, each
	// linked to its blame (for the user who may blame files here).
	Edited []editedFile
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	ctx, user := r.Context(), userOf(r)
	x, err := s.session(ctx, user, r.PathValue("id"))
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	q := newQuery(r)
	before := q.seq("before")
	if q.err != nil {
		s.pageErr(w, r, q.err)
		return
	}
	if before > int64(x.MessageCount) {
		before = 0
	}
	// The session is read again with its messages in one snapshot, so
	// that its counts agree with them while another process writes it.
	snap, err := s.st.ReadSessions(ctx, []string{x.ID}, loom.MessageQuery{Limit: pageMessages, Before: before})
	if err == nil && len(snap) == 0 {
		err = loom.NotFound(x.ID)
	}
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	x, msgs := snap[0].Session, snap[0].Messages
	last := int64(x.MessageCount)
	d := sessionData{S: x, Messages: msgs, Live: before == 0 && x.DeletedAt == nil, LastSeq: last}
	if len(msgs) > 0 {
		d.LastSeq = max(d.LastSeq, msgs[len(msgs)-1].Seq)
		if msgs[0].Seq > 1 {
			d.Earlier = "/s/" + x.ID + "?before=" + strconv.FormatInt(msgs[0].Seq, 10)
		}
	}
	if before != 0 {
		d.Later = "/s/" + x.ID + "?before=" + strconv.FormatInt(before+pageMessages, 10)
	}
	if x.ParentID != "" {
		if p, err := s.session(ctx, user, x.ParentID); err == nil {
			d.Parent = p
		}
	}
	if id := r.URL.Query().Get("rewound"); id != "" {
		if f, err := s.session(ctx, user, id); err == nil && f.ParentID == x.ID {
			d.Rewound = f
		}
	}
	if s.blameFor(user) {
		d.Edited = editedFiles(x, msgs)
	}
	if d.Tree, err = s.lineage(ctx, user, x); err != nil {
		s.pageErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "session", layoutData{Title: htmlview.SessionName(x), Nav: "sessions", Body: d})
}

// lineage is the tree of forks and sub-agents that x belongs to, from its
// oldest ancestor down, read in one store query; nil when x stands
// alone.
func (s *Server) lineage(ctx context.Context, user string, x *loom.Session) (*htmlview.Tree, error) {
	family, err := s.st.Family(ctx, loom.FamilyQuery{IDs: []string{x.ID}, UserID: user, FromRoot: true, MaxDepth: treeDepth, Limit: treeNodes})
	if err != nil || len(family) < 2 {
		return nil, err
	}
	// Family puts each session after its parent, siblings oldest first,
	// which reads as a history.
	nodes := make(map[string]*htmlview.Tree, len(family))
	var root *htmlview.Tree
	for _, f := range family {
		n := &htmlview.Tree{S: f, Current: f.ID == x.ID}
		nodes[f.ID] = n
		if p := nodes[f.ParentID]; p != nil && root != nil {
			p.Children = append(p.Children, n)
		} else if root == nil {
			root = n
		}
	}
	return root, nil
}

// messageFragment is one message rendered as on the session page: what
// the live view inserts when the event stream announces a message.
func (s *Server) messageFragment(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	x, err := s.session(ctx, userOf(r), r.PathValue("id"))
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		s.pageError(w, r, http.StatusBadRequest, "not a message seq")
		return
	}
	msgs, err := s.st.Messages(ctx, x.ID, loom.MessageQuery{After: seq - 1, Before: seq + 1, Limit: 1})
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	if len(msgs) == 0 {
		s.pageError(w, r, http.StatusNotFound, "no such message")
		return
	}
	var b bytes.Buffer
	if err := s.pages.render(&b, "message", msgs[0]); err != nil {
		s.pageErr(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// usageFragment is the session page's usage panel as it stands now: the
// live view fetches it after new messages, whose usage the store has
// added to the session's totals in the same transaction.
func (s *Server) usageFragment(w http.ResponseWriter, r *http.Request) {
	x, err := s.session(r.Context(), userOf(r), r.PathValue("id"))
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	var b bytes.Buffer
	if err := s.pages.fragment(&b, "session", "usage", x); err != nil {
		s.pageErr(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}
