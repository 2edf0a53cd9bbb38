package server

import (
	"errors"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
)

// The actions of a session's page: rename, fork, rewind, archive and delete, each a form
// that redirects to the page it leaves the user on, or shows an error
// page.

// maxFormBytes bounds the body of a dashboard form: room for a title, a
// description (loom.MaxDescriptionBytes) and a token, however escaped.
const maxFormBytes = 64 << 10

// parseForm reads a dashboard form's body into r.PostForm, at most
// maxFormBytes of it: a larger body is an error that pages show as 413.
// (PostFormValue alone would hide it, and read such a form as empty.)
func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	// ParseMultipartForm would drop the error of a URL-encoded body.
	err := r.ParseForm()
	if err == nil {
		err = r.ParseMultipartForm(maxFormBytes)
	}
	if err == nil || errors.Is(err, http.ErrNotMultipart) {
		return nil
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, multipart.ErrMessageTooLarge) {
		return &http.MaxBytesError{Limit: maxFormBytes}
	}
	return loom.Errorf(loom.EINVALID, "unreadable form: %s", err)
}

// formSession is the session a page's form acts on, with its form read;
// nil after showing the error page when there is none or the form is
// too large.
func (s *Server) formSession(w http.ResponseWriter, r *http.Request) *loom.Session {
	x, err := s.session(r.Context(), userOf(r), r.PathValue("id"))
	if err == nil {
		err = parseForm(w, r)
	}
	if err != nil {
		s.pageErr(w, r, err)
		return nil
	}
	return x
}

// formField is the trimmed value of a form field and whether the form
// sent it at all.
func formField(r *http.Request, name string) (*string, bool) {
	vs, ok := r.PostForm[name]
	if !ok || len(vs) == 0 {
		return nil, false
	}
	v := strings.TrimSpace(vs[0])
	return &v, true
}

// done redirects to to, or shows err's error page.
func (s *Server) done(w http.ResponseWriter, r *http.Request, to string, err error) {
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// badTitle is the error page's word for a title the form cannot set.
func badTitle() error {
	return loom.Errorf(loom.EINVALID, "the title must be one line of at most %d bytes", loom.MaxTitleBytes)
}

func (s *Server) editSession(w http.ResponseWriter, r *http.Request) {
	x := s.formSession(w, r)
	if x == nil {
		return
	}
	// A field the form does not send is left as it is.
	title, hasTitle := formField(r, "title")
	desc, hasDesc := formField(r, "description")
	if !hasTitle && !hasDesc {
		s.pageErr(w, r, loom.Errorf(loom.EINVALID, "nothing to change: send a title or a description"))
		return
	}
	u := loom.SessionUpdate{Title: title, Description: desc}
	if err := u.Validate(); err != nil {
		if title != nil && loom.ValidTitle(*title) != nil {
			err = badTitle()
		}
		s.pageErr(w, r, err)
		return
	}
	_, err := s.st.UpdateSession(r.Context(), x.ID, u)
	s.done(w, r, "/s/"+x.ID, err)
}

func (s *Server) forkFromPage(w http.ResponseWriter, r *http.Request) {
	x := s.formSession(w, r)
	if x == nil {
		return
	}
	turn := 0
	if v := strings.TrimSpace(r.PostFormValue("turn")); v != "" {
		var err error
		if turn, err = strconv.Atoi(v); err != nil {
			s.pageErr(w, r, loom.Errorf(loom.EINVALID, "turn must be a number from 1 to %d", x.TurnCount))
			return
		}
	}
	// The store's fork plan checks the turn and the title.
	title := strings.TrimSpace(r.PostFormValue("title"))
	f, err := s.st.Fork(r.Context(), x.ID, loom.ForkOptions{Turn: turn, Title: title})
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	s.done(w, r, "/s/"+f.ID, nil)
}

func (s *Server) rewindFromPage(w http.ResponseWriter, r *http.Request) {
	x := s.formSession(w, r)
	if x == nil {
		return
	}
	turn, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("turn")))
	if err != nil {
		turn = 0
	}
	if err := x.CheckRewindTurn(turn); err != nil {
		s.pageErr(w, r, err)
		return
	}
	f, err := s.rewind(r.Context(), userOf(r), x, turn)
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	// The page says what happened and where the later turns went.
	s.done(w, r, "/s/"+x.ID+"?rewound="+url.QueryEscape(f.ID), nil)
}

func (s *Server) deleteFromPage(w http.ResponseWriter, r *http.Request) {
	x := s.formSession(w, r)
	if x == nil {
		return
	}
	_, err := s.st.Delete(r.Context(), x.ID, loom.DeleteOptions{})
	s.done(w, r, "/", err)
}

func (s *Server) archiveFromPage(w http.ResponseWriter, r *http.Request) {
	x := s.formSession(w, r)
	if x == nil {
		return
	}
	archive, err := strconv.ParseBool(r.PostFormValue("archived"))
	if err != nil {
		s.pageErr(w, r, loom.Errorf(loom.EINVALID, "archived must be true or false"))
		return
	}
	_, err = s.st.UpdateSession(r.Context(), x.ID, loom.SessionUpdate{Archived: &archive})
	s.done(w, r, "/s/"+x.ID, err)
}
