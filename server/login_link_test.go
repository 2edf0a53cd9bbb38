package server_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// setCookieOf returns the cookie name an answer sets, nil when it sets none.
func setCookieOf(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// A link with a token (what loom serve prints) logs nobody in by
// itself: it leads to a login page that says whose the token is, and
// only a same-origin POST from that page sets the login cookie, so a
// link with someone else's token cannot log a browser into their
// account unnoticed (login CSRF).
func TestLoginLinkNeedsConfirmation(t *testing.T) {
	e := newEnv(t)
	resp := e.send("GET", "/search?q=hello&token="+url.QueryEscape(e.alice), "", nil, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || setCookieOf(resp, "loom_token") != nil {
		t.Fatalf("link: %d, cookies %v; want 303 and no login cookie", resp.StatusCode, resp.Cookies())
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Path != "/login" || loc.Query().Get("next") != "/search?q=hello" || strings.Contains(loc.String(), "token") {
		t.Fatalf("link sends the browser to %s, want /login with next=/search?q=hello and no token", loc)
	}
	link := setCookieOf(resp, "loom_link")
	if link == nil || link.Value != e.alice || link.Path != "/login" || !link.HttpOnly || link.MaxAge <= 0 {
		t.Fatalf("link cookie = %+v", link)
	}
	withLink := http.Header{"Cookie": {"loom_link=" + e.alice}}

	// The login page says whom the link logs in as.
	resp = e.send("GET", loc.RequestURI(), "", nil, withLink)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Log in as alice") || !strings.Contains(string(page), `name="link"`) {
		t.Fatalf("login page after a link: %d\n%s", resp.StatusCode, page)
	}
	if setCookieOf(resp, "loom_token") != nil {
		t.Fatal("the login page set the login cookie before any confirmation")
	}
	// The link cookie opens no page.
	resp = e.send("GET", "/", "", nil, withLink)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Fatalf("a page with only the link cookie: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}

	confirm := url.Values{"link": {"1"}, "next": {"/search?q=hello"}}.Encode()
	// Another site cannot post the confirmation.
	cross := http.Header{"Cookie": withLink["Cookie"], "Content-Type": {formType}, "Sec-Fetch-Site": {"cross-site"}}
	resp = e.send("POST", "/login", "", confirm, cross)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || setCookieOf(resp, "loom_token") != nil {
		t.Fatalf("cross-site confirmation: %d, cookies %v; want 403 and no cookie", resp.StatusCode, resp.Cookies())
	}
	// Without the link cookie (expired) there is nothing to confirm.
	resp = e.send("POST", "/login", "", confirm, http.Header{"Content-Type": {formType}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || setCookieOf(resp, "loom_token") != nil {
		t.Fatalf("confirmation without a link: %d, cookies %v; want 400 and no cookie", resp.StatusCode, resp.Cookies())
	}
	// The user's own confirmation logs in and goes on to the page.
	resp = e.send("POST", "/login", "", confirm, http.Header{"Cookie": withLink["Cookie"], "Content-Type": {formType}, "Sec-Fetch-Site": {"same-origin"}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/search?q=hello" {
		t.Fatalf("confirmation: %d to %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if c := setCookieOf(resp, "loom_token"); c == nil || c.Value != e.alice {
		t.Fatalf("confirmation set %v, want the login cookie", resp.Cookies())
	}
	if c := setCookieOf(resp, "loom_link"); c == nil || c.MaxAge >= 0 {
		t.Fatalf("confirmation left the link cookie: %v", resp.Cookies())
	}
}

// A browser already logged in as the link's user goes straight to the
// page; one logged in as someone else is asked first; a dead token in a
// link is refused.
func TestLoginLinkWhenLoggedIn(t *testing.T) {
	e := newEnv(t)
	resp := e.send("GET", "/?token="+url.QueryEscape(e.alice), "", nil, http.Header{"Cookie": {"loom_token=" + e.alice}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || setCookieOf(resp, "loom_link") != nil {
		t.Fatalf("link of the user already logged in: %d to %s, cookies %v", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies())
	}
	resp = e.send("GET", "/?token="+url.QueryEscape(e.alice), "", nil, http.Header{"Cookie": {"loom_token=" + e.bob}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") || setCookieOf(resp, "loom_token") != nil {
		t.Fatalf("alice's link in bob's browser: %d to %s, cookies %v", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies())
	}
	resp, body := e.request("GET", "/?token=loom_not-a-token", "", nil)
	if resp.StatusCode != http.StatusUnauthorized || setCookieOf(resp, "loom_link") != nil || !strings.Contains(string(body), "unknown, revoked or expired") {
		t.Fatalf("a dead token's link: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	// A link cookie whose token died since is dropped, with a message.
	resp = e.send("GET", "/login", "", nil, http.Header{"Cookie": {"loom_link=loom_not-a-token"}})
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if c := setCookieOf(resp, "loom_link"); c == nil || c.MaxAge >= 0 || strings.Contains(string(page), "Log in as") {
		t.Fatalf("login page with a dead link: cookies %v\n%s", resp.Cookies(), page)
	}
}
