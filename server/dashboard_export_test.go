package server_test

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/loomhq/loom/export"
)

// cookieOf is the header a browser logged in with token sends.
func cookieOf(token string) http.Header {
	return http.Header{"Cookie": {"loom_token=" + token}}
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
