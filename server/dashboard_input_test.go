package server_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// /static/ serves files, never a listing of a directory.
func TestStaticServesFilesOnly(t *testing.T) {
	e := newEnv(t)
	for path, want := range map[string]int{
		"/static/app.js":    200,
		"/static/style.css": 200,
		"/static/":          404,
		"/static/nope.js":   404,
		"/static/../":       404,
	} {
		resp, body := e.request("GET", path, "", nil)
		if resp.StatusCode != want && !(want == 404 && resp.StatusCode >= 300 && resp.StatusCode < 400) {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
		if want == 404 && strings.Contains(string(body), `<a href="app.js">`) {
			t.Errorf("GET %s lists files:\n%s", path, body)
		}
	}
}

// After logging in the browser goes to next only when it is a path of
// this site; anything else goes to /.
func TestLoginNextIsLocal(t *testing.T) {
	e := newEnv(t)
	for next, want := range map[string]string{
		"/s/abc?before=10":      "/s/abc?before=10",
		"/search?q=http://x":    "/search?q=http://x",
		"//evil.example":        "/",
		"/\\evil.example":       "/",
		"/a\\b":                 "/",
		"/\t/evil.example":      "/",
		"/\n/evil.example":      "/",
		"/\x00x":                "/",
		"https://evil.example/": "/",
		"evil":                  "/",
		"":                      "/",
	} {
		form := url.Values{"token": {e.alice}, "next": {next}}
		resp := e.send("POST", "/login", "", form.Encode(), http.Header{
			"Content-Type": {"application/x-www-form-urlencoded"},
			"Origin":       {e.ts.URL},
		})
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != want {
			t.Errorf("next %q: %d to %q, want %q", next, resp.StatusCode, loc, want)
		}
		_, page := e.request("GET", "/login?next="+url.QueryEscape(next), "", nil)
		if !strings.Contains(string(page), `name="next" value="`+html.EscapeString(want)+`"`) {
			t.Errorf("login page for next %q does not carry %q", next, want)
		}
	}
}

// The login page shows only its own messages, chosen by a code: text in
// the address is never shown.
func TestLoginShowsOnlyItsOwnMessages(t *testing.T) {
	e := newEnv(t)
	_, page := e.request("GET", "/login?msg="+url.QueryEscape("Your account is locked: call +1 555 0100"), "", nil)
	if strings.Contains(string(page), "call +1 555") || strings.Contains(string(page), "flash err") {
		t.Errorf("the login page shows text from the address:\n%s", page)
	}
	// A revoked token is sent to the login page with a message of its
	// own.
	tok, secret, err := e.st.CreateToken(context.Background(), "alice", "short", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.RevokeToken(context.Background(), tok.ID); err != nil {
		t.Fatal(err)
	}
	resp := e.send("GET", "/", "", nil, http.Header{"Cookie": {"loom_token=" + secret}})
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?") {
		t.Fatalf("revoked cookie: %d to %q", resp.StatusCode, loc)
	}
	_, page = e.request("GET", loc, "", nil)
	if !strings.Contains(string(page), "revoked or has expired") {
		t.Errorf("the login page does not say why:\n%s", page)
	}
}
