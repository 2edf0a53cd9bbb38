package server_test

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/loomhq/loom/export"
)

// cookieOf is the header a browser logged in with token sends.
func cookieOf(token string) http.Header {
	return http.Header{"Cookie": {"loom_token=" + token}}
}

// form posts a form as a same-origin browser would, with token's cookie.
func (e *env) form(path, token string, values url.Values) (*http.Response, string) {
	e.t.Helper()
	h := cookieOf(token)
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("Origin", e.ts.URL)
	h.Set("Sec-Fetch-Site", "same-origin")
	resp := e.send("POST", path, "", values.Encode(), h)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// "Download HTML" gives the same page as loom session export --format
// html, as a file, to its owner alone.
func TestDownloadHTML(t *testing.T) {
	e := newEnv(t)
	fx := seedDashboard(t, e)
	path := "/s/" + fx.main.ID + "/export.html"

	resp := e.send("GET", path, "", nil, cookieOf(e.alice))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	disp, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
	if err != nil || disp != "attachment" || params["filename"] != "loom-session-"+fx.main.ID[:8]+".html" {
		t.Errorf("Content-Disposition %q", resp.Header.Get("Content-Disposition"))
	}
	data, err := export.Family(context.Background(), e.st, "alice", fx.main)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := export.Write(&want, export.HTML, data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want.Bytes()) {
		t.Errorf("the download differs from the html export")
	}
	for _, s := range []string{"Fix the flaky deploy test", `id="session-` + fx.sub.ID + `"`, "ci-log-reader: read the CI log"} {
		if !bytes.Contains(body, []byte(s)) {
			t.Errorf("download lacks %q", s)
		}
	}
	if bytes.Contains(body, []byte("Try pinning the port")) {
		t.Error("download holds the fork, which is not a sub-agent session")
	}

	// Without a cookie: the login page. Bob, or anyone, for a session that
	// is not theirs: 404, and nothing of it.
	resp = e.send("GET", path, "", nil, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login?") {
		t.Errorf("GET %s without a cookie: %d to %q", path, resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, p := range []string{path, "/s/" + fx.sub.ID + "/export.html", "/s/" + fx.main.ID[:len(fx.main.ID)-3] + "/export.html", "/s/nope/export.html"} {
		resp = e.send("GET", p, "", nil, cookieOf(e.bob))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || bytes.Contains(b, []byte("flaky")) || resp.Header.Get("Content-Disposition") != "" {
			t.Errorf("bob: GET %s = %d %s", p, resp.StatusCode, resp.Header.Get("Content-Disposition"))
		}
	}
}

// The archive button's form: the owner's, same-site, true or false.
func TestArchiveFromPage(t *testing.T) {
	e := newEnv(t)
	fx := seedDashboard(t, e)
	ctx := context.Background()
	path := "/s/" + fx.tg.ID + "/archive"

	resp, body := e.form(path, e.alice, url.Values{"archived": {"true"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/s/"+fx.tg.ID {
		t.Fatalf("archive: %d to %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	got, err := e.st.Session(ctx, fx.tg.ID)
	if err != nil || got.ArchivedAt == nil || !got.UpdatedAt.Equal(fx.tg.UpdatedAt) {
		t.Fatalf("after archive: %+v, %v (archiving is not activity)", got, err)
	}
	if resp, _ := e.form(path, e.alice, url.Values{"archived": {"false"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("unarchive: %d", resp.StatusCode)
	}
	if got, _ := e.st.Session(ctx, fx.tg.ID); got.ArchivedAt != nil {
		t.Fatal("unarchive left the session archived")
	}

	// Refused: bob, another site, a value that is not a boolean, no
	// cookie. None of them changes the session.
	h := cookieOf(e.alice)
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("Sec-Fetch-Site", "cross-site")
	h.Set("Origin", "https://evil.example")
	cross := e.send("POST", path, "", "archived=true", h)
	cross.Body.Close()
	for _, tc := range []struct {
		what   string
		status int
		resp   func() int
	}{
		{"bob", 404, func() int { r, _ := e.form(path, e.bob, url.Values{"archived": {"true"}}); return r.StatusCode }},
		{"cross-site", 403, func() int { return cross.StatusCode }},
		{"not a boolean", 400, func() int { r, _ := e.form(path, e.alice, url.Values{"archived": {"soon"}}); return r.StatusCode }},
		{"no cookie", 401, func() int { r, _ := e.form(path, "", url.Values{"archived": {"true"}}); return r.StatusCode }},
	} {
		if got := tc.resp(); got != tc.status {
			t.Errorf("%s: %d, want %d", tc.what, got, tc.status)
		}
	}
	if got, _ := e.st.Session(ctx, fx.tg.ID); got.ArchivedAt != nil {
		t.Fatal("a refused archive changed the session")
	}
}

// The sessions table refuses a column it does not have.
func TestSessionsTableBadSort(t *testing.T) {
	e := newEnv(t)
	seedDashboard(t, e)
	resp := e.send("GET", "/?sort=colour", "", nil, cookieOf(e.alice))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "sort must be one of title, surface") {
		t.Errorf("GET /?sort=colour: %d %s", resp.StatusCode, b)
	}
}

// The session page's "Continue in…" menu shows the command that hands
// the session to each agent.
func TestContinueInMenu(t *testing.T) {
	e := newEnv(t)
	fx := seedDashboard(t, e)
	resp := e.send("GET", "/s/"+fx.main.ID, "", nil, cookieOf(e.alice))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d %s", resp.StatusCode, body)
	}
	for _, tool := range []string{"claude-code", "codex", "gemini", "pi", "qwen", "copilot", "opencode", "kilo", "cline", "continue", "droid"} {
		if want := "loom session handoff " + fx.main.ID + " --to " + tool; !bytes.Contains(body, []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
