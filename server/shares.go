package server

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/share"
)

// shareRoutes mounts share links: the API that makes, lists and revokes
// them (any token of the user's, share-only ones included) and what
// anyone with a link reaches: the page /share/{id}, which decrypts in
// the browser with the key of the link's fragment, and the ciphertext it
// fetches. The server never holds a key or a plaintext: it keeps the
// blob it was given and serves it back. Without a store of shares they
// answer 404.
func (s *Server) shareRoutes(mux *router) {
	mux.HandleFunc("POST "+share.SharesPath, s.shareAPI(s.createShare))
	mux.HandleFunc("GET "+share.SharesPath, s.shareAPI(s.listShares))
	mux.HandleFunc("DELETE "+share.SharesPath+"/{id}", s.shareAPI(s.revokeShare))
	mux.HandleFunc("GET "+share.SharesPath+"/{id}/blob", s.withTimeout(s.shareBlob))
	mux.HandleFunc("GET "+share.PagePath+"{id}", s.withTimeout(s.sharePage))
}

// shares returns the store's shares service, or a not-found error when
// the server has none.
func (s *Server) shares() (loom.ShareStore, error) {
	st := s.svc.Shares
	if st == nil {
		return nil, codedError(loom.ENOTFOUND, "this server keeps no shares")
	}
	return st, nil
}

// shareAPI authenticates a request by its bearer token (full or
// share-only; no cookie: nothing of a share is for the dashboard's
// browser to do unasked) and bounds it by the request timeout.
func (s *Server) shareAPI(next http.HandlerFunc) http.HandlerFunc {
	return s.withTimeout(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := bearer(r)
		if r, ok = s.authorizeScope(w, r, secret, ok, loom.ScopeShare); ok {
			next(w, r)
		}
	})
}

// createShare keeps the request's body, a sealed session, until the
// query's expires_at. The body is read whole before anything is stored:
// an upload cut short publishes nothing.
func (s *Server) createShare(w http.ResponseWriter, r *http.Request) {
	st, err := s.shares()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	expires, err := loom.ParseTime(r.URL.Query().Get("expires_at"))
	if err != nil {
		s.writeError(w, r, codedError(loom.EINVALID, "expires_at must be a time such as 2026-01-02T03:04:05Z"))
		return
	}
	blob, err := io.ReadAll(http.MaxBytesReader(w, r.Body, loom.MaxShareBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		s.writeError(w, r, codedError(eTooLarge, "a share holds at most %d bytes sealed: share fewer turns", loom.MaxShareBytes))
		return
	case err != nil:
		s.writeError(w, r, codedError(loom.EINVALID, "the upload was cut short: nothing was published"))
		return
	}
	sh, err := st.CreateShare(r.Context(), userOf(r), blob, expires)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", share.PagePath+sh.ID)
	writeJSON(w, http.StatusCreated, sh)
}

func (s *Server) listShares(w http.ResponseWriter, r *http.Request) {
	st, err := s.shares()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := st.Shares(r.Context(), userOf(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if list == nil {
		list = []*loom.Share{}
	}
	writeJSON(w, http.StatusOK, share.List{Shares: list})
}

func (s *Server) revokeShare(w http.ResponseWriter, r *http.Request) {
	st, err := s.shares()
	if err == nil {
		err = st.RevokeShare(r.Context(), userOf(r), r.PathValue("id"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// liveBlob returns the ciphertext of the live share the request names.
func (s *Server) liveBlob(r *http.Request) ([]byte, error) {
	id := r.PathValue("id")
	if !loom.ValidShareID(id) {
		return nil, loom.ShareNotFound()
	}
	st, err := s.shares()
	if err != nil {
		return nil, loom.ShareNotFound()
	}
	return st.ShareBlob(r.Context(), id)
}

// shareBlob serves a live share's ciphertext to anyone: it opens only
// with the key of the link's fragment.
func (s *Server) shareBlob(w http.ResponseWriter, r *http.Request) {
	blob, err := s.liveBlob(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.Itoa(len(blob)))
	h.Set("Cache-Control", "no-store")
	w.Write(blob)
}

// sharePage serves the page that opens a share link: 200 while the
// share is live, 404 (and a page that says so) once it is revoked or
// expired, or for an id that never was one.
func (s *Server) sharePage(w http.ResponseWriter, r *http.Request) {
	status := http.StatusOK
	_, err := s.liveBlob(r)
	switch {
	case loom.ErrorCode(err) == loom.ENOTFOUND:
		status = http.StatusNotFound
	case err != nil:
		s.pageErr(w, r, err)
		return
	}
	s.render(w, r, status, "share", layoutData{Title: "Shared session", Body: map[string]any{
		"Live": status == http.StatusOK,
		"Blob": share.BlobPath(r.PathValue("id")),
	}})
}
