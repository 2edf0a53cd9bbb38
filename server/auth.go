package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// cookieName holds the dashboard's token. It is HttpOnly (no script can
// read it) and SameSite=Strict (no other site's page can make the browser
// send it).
const cookieName = "loom_token"

// cookieAge is how long a dashboard login lasts; revoking the token ends
// it sooner.
const cookieAge = 30 * 24 * time.Hour

// linkCookie holds the token of a login link (the address loom serve
// prints) until the user confirms, on the login page, that they mean to
// log in as its user. It logs nobody in: only a same-origin POST /login
// turns it into the login cookie, so a link that carries someone else's
// token cannot log a browser into that account unnoticed. It is sent to
// /login only, and Lax so that a link followed from another site still
// reaches the confirmation.
const (
	linkCookie = "loom_link"
	linkAge    = 10 * time.Minute
)

type userKey struct{}

// userOf returns the authenticated user of a request.
func userOf(r *http.Request) string {
	u, _ := r.Context().Value(userKey{}).(string)
	return u
}

func withUser(r *http.Request, user string) *http.Request {
	infoOf(r).user = user
	return r.WithContext(context.WithValue(r.Context(), userKey{}, user))
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// authenticate returns the user of a full token, or an unauthorized
// error; a share-only token is forbidden.
func (s *Server) authenticate(ctx context.Context, secret string) (string, error) {
	return s.authenticateScope(ctx, secret, loom.ScopeFull)
}

// authenticateScope returns the token's user when the token may do what
// scope names: a full token may do everything, a share-only one only
// what ScopeShare allows.
func (s *Server) authenticateScope(ctx context.Context, secret, scope string) (string, error) {
	tok, err := s.tokens.Authenticate(ctx, secret)
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		return "", codedError(eUnauthorized, "unknown, revoked or expired token")
	}
	if err != nil {
		return "", err
	}
	if tok.Scope == loom.ScopeShare && scope != loom.ScopeShare {
		return "", codedError(eForbidden, "this token may only create, list and revoke share links")
	}
	return tok.UserID, nil
}

// api authenticates an API request by its bearer token, and bounds its
// store reads by the request timeout. Reads also accept the dashboard's
// cookie, so that the dashboard's EventSource can follow a session;
// anything that changes state needs the header, which no other site can
// make a browser send.
func (s *Server) api(next http.HandlerFunc) http.HandlerFunc {
	return s.authorized(s.withTimeout(next))
}

// apiStream is api for the endpoints that stream for as long as they
// have to (event streams, turns): they bound their own reads.
func (s *Server) apiStream(next http.HandlerFunc) http.HandlerFunc {
	return s.authorized(next)
}

// authorized authenticates a request as api says, the token's check
// bounded by the request timeout.
func (s *Server) authorized(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		secret, ok := bearer(r)
		if !ok && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			if c, err := r.Cookie(cookieName); err == nil && c.Value != "" {
				secret, ok = c.Value, true
			}
		}
		if r, ok = s.authorize(w, r, secret, ok); ok {
			next(w, r)
		}
	}
}

// authorize checks secret, the request's token (ok false when it sent
// none), and returns r with the token's user; else it answers the API's
// error (401 with WWW-Authenticate) and false.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, secret string, ok bool) (*http.Request, bool) {
	return s.authorizeScope(w, r, secret, ok, loom.ScopeFull)
}

// authorizeScope is authorize for what scope allows.
func (s *Server) authorizeScope(w http.ResponseWriter, r *http.Request, secret string, ok bool, scope string) (*http.Request, bool) {
	if !ok {
		s.writeError(w, r, codedError(eUnauthorized, "missing token: send Authorization: Bearer TOKEN"))
		return r, false
	}
	ctx, cancel := s.bounded(r.Context())
	defer cancel()
	user, err := s.authenticateScope(ctx, secret, scope)
	if err != nil {
		s.writeError(w, r.WithContext(ctx), err)
		return r, false
	}
	return withUser(r, user), true
}

// setCookie logs the browser in with secret.
func setCookie(w http.ResponseWriter, r *http.Request, secret string) {
	cookie(w, r, cookieName, secret, "/", cookieAge, http.SameSiteStrictMode)
}

// setLinkCookie keeps a login link's token for the confirmation.
func setLinkCookie(w http.ResponseWriter, r *http.Request, secret string) {
	cookie(w, r, linkCookie, secret, "/login", linkAge, http.SameSiteLaxMode)
}

func clearLinkCookie(w http.ResponseWriter, r *http.Request) {
	cookie(w, r, linkCookie, "", "/login", -1, http.SameSiteLaxMode)
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	cookie(w, r, cookieName, "", "/", -1, http.SameSiteStrictMode)
}

// cookie sets an HttpOnly cookie of loom's for age (negative: deletes
// it), Secure over HTTPS.
func cookie(w http.ResponseWriter, r *http.Request, name, value, path string, age time.Duration, same http.SameSite) {
	maxAge := -1
	if age >= 0 {
		maxAge = int(age / time.Second)
	}
	http.SetCookie(w, &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     path,
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   isHTTPS(r),
		SameSite: same,
	})
}

// isHTTPS reports whether the browser reached us over TLS, directly or
// through a proxy that says so.
func isHTTPS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}
