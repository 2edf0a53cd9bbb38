package server

import (
	"bytes"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
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
	// A downloaded page is made to be passed on: it is read through the
	// secrets gate, as loom session export --format html reads.
	data, err := export.Family(ctx, s.exportGate(), user, x)
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

// exportGate is the store as exports that leave the machine read it:
// through a secrets gate, of the MCP tools' detector when one is set.
func (s *Server) exportGate() loom.Reader {
	d := secrets.Default()
	if s.cfg.MCP != nil && s.cfg.MCP.Redact != nil {
		d = s.cfg.MCP.Redact
	}
	return d.Gate(s.st)
}
