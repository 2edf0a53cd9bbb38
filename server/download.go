package server

import (
	"bytes"
	"mime"
	"net/http"

	"github.com/loomhq/loom/export"
	"github.com/loomhq/loom/htmlview"
)

// downloadHTML is the session page's "Download HTML": the html export of
// the session and its sub-agent sessions (as loom session export
// --format html writes it), as a file to save.
func (s *Server) downloadHTML(w http.ResponseWriter, r *http.Request) {
	ctx, user := r.Context(), userOf(r)
	x, err := s.session(ctx, user, r.PathValue("id"))
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	data, err := export.Family(ctx, s.st, user, x)
	if err != nil {
		s.pageErr(w, r, err)
		return
	}
	var b bytes.Buffer
	if err := export.Write(&b, export.HTML, data); err != nil {
		s.pageErr(w, r, err)
		return
	}
	name := "loom-session-" + htmlview.ShortID(x.ID) + ".html"
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}
