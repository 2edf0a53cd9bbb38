package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/share"
)

// sharedSession is a session as a sharer's machine holds it: the hub
// never stores it, only its sealed form.
func sharedSession(secret string) (*loom.Session, []*loom.Message) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s := &loom.Session{ID: loom.NewID(), Title: "Rotate the staging deploy keys", Surface: "cli", CreatedAt: at, UpdatedAt: at}
	tool := &loom.Message{Seq: 2, Turn: 1, Role: loom.RoleAssistant, CreatedAt: at, Parts: []loom.Part{
		{Type: loom.PartText, Text: "The pelican migration finished; <b>bold</b> <script>window.__xss = 1</script>"},
		{Type: loom.PartTool, CallID: "c1", Name: "bash", Status: loom.ToolCompleted, Input: json.RawMessage(`{"command":"cat .env"}`),
			Output: json.RawMessage(`"AWS_SECRET=` + secret + `\nquokka telemetry ok"`)},
	}}
	user := &loom.Message{Seq: 1, Turn: 1, Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{Type: loom.PartText, Text: "Check the marmoset deploy"}}}
	return s, []*loom.Message{user, tool}
}

// upload seals the shared session and publishes it through the hub as
// token; it returns the share and the link.
func (e *env) upload(token string, expires time.Time) (*loom.Share, string) {
	e.t.Helper()
	s, msgs := sharedSession("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	p, _, err := share.Build(s, msgs, share.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	blob, key, err := share.Seal(p)
	if err != nil {
		e.t.Fatal(err)
	}
	c := &share.Client{URL: e.ts.URL, Token: token}
	sh, err := c.Create(context.Background(), blob, expires)
	if err != nil {
		e.t.Fatalf("create share: %v", err)
	}
	return sh, share.Link(e.ts.URL, sh.ID, key)
}

// A share-only token makes, lists and revokes its user's shares and
// nothing else: the API, sync and MCP refuse it with 403. Anyone with
// the id gets the ciphertext while the share is live, and 404 once it is
// revoked; only its user revokes it.
func TestShareAPI(t *testing.T) {
	e := newEnv(t, withMCP(0, 0, time.Minute))
	ctx := context.Background()
	_, shareTok, err := e.st.CreateScopedToken(ctx, "alice", "sharing", loom.ScopeShare, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/sessions", "/api/v1/usage", hub.HostsPath} {
		resp, body := e.request("GET", path, shareTok, nil)
		wantError(t, "share-only token on "+path, resp, body, http.StatusForbidden, "forbidden")
	}
	resp, body := e.request("POST", hub.RecordsPath, shareTok, map[string]any{"records": []any{}})
	wantError(t, "share-only token pushing sync records", resp, body, http.StatusForbidden, "forbidden")
	mcp := e.send(http.MethodPost, "/mcp", shareTok, mcpInitialize, http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}})
	var mb bytes.Buffer
	mb.ReadFrom(mcp.Body)
	mcp.Body.Close()
	wantError(t, "share-only token on /mcp", mcp, mb.Bytes(), http.StatusForbidden, "forbidden")
	if resp, _ := e.request("GET", "/?token="+shareTok, "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("dashboard link with a share-only token: %d, want 401", resp.StatusCode)
	}

	sh, _ := e.upload(shareTok, time.Now().Add(time.Hour))
	var list share.List
	e.getJSON(share.SharesPath, shareTok, &list)
	if len(list.Shares) != 1 || list.Shares[0].ID != sh.ID || list.Shares[0].Size == 0 {
		t.Fatalf("alice's shares: %+v", list.Shares)
	}
	e.getJSON(share.SharesPath, e.alice, &list)
	if len(list.Shares) != 1 {
		t.Errorf("alice's full token lists %d shares, want 1", len(list.Shares))
	}
	e.getJSON(share.SharesPath, e.bob, &list)
	if len(list.Shares) != 0 {
		t.Errorf("bob lists alice's shares: %+v", list.Shares)
	}

	// The ciphertext and the page, to anyone.
	resp, blob := e.request("GET", share.BlobPath(sh.ID), "", nil)
	if resp.StatusCode != 200 || int64(len(blob)) != sh.Size || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("blob: %d, %d bytes (want %d), cache %q", resp.StatusCode, len(blob), sh.Size, resp.Header.Get("Cache-Control"))
	}
	if resp, _ := e.request("GET", share.PagePath+sh.ID, "", nil); resp.StatusCode != 200 {
		t.Errorf("page of a live share: %d", resp.StatusCode)
	}
	for _, id := range []string{loom.NewShareID(), "short", strings.Repeat("x", 200)} {
		resp, body := e.request("GET", share.BlobPath(id), "", nil)
		wantError(t, "blob of "+id, resp, body, http.StatusNotFound, loom.ENOTFOUND)
	}

	// Refusals: no token, an expiry past, no body.
	resp, body = e.request("POST", share.SharesPath+"?expires_at=2030-01-01T00:00:00Z", "", []byte("x"))
	wantError(t, "create without a token", resp, body, http.StatusUnauthorized, "unauthorized")
	resp, body = e.request("POST", share.SharesPath+"?expires_at=2020-01-01T00:00:00Z", shareTok, []byte("x"))
	wantError(t, "create expired", resp, body, http.StatusBadRequest, loom.EINVALID)
	resp, body = e.request("POST", share.SharesPath+"?expires_at=soon", shareTok, []byte("x"))
	wantError(t, "create with a bad expiry", resp, body, http.StatusBadRequest, loom.EINVALID)
	resp, body = e.request("POST", share.SharesPath+"?expires_at=2099-01-01T00:00:00Z", shareTok, make([]byte, loom.MaxShareBytes+1))
	wantError(t, "create too large", resp, body, http.StatusRequestEntityTooLarge, "too_large")
	e.getJSON(share.SharesPath, shareTok, &list)
	if len(list.Shares) != 1 {
		t.Errorf("refused uploads left shares: %+v", list.Shares)
	}

	// Only alice revokes; then it is gone.
	resp, body = e.request("DELETE", share.SharesPath+"/"+sh.ID, e.bob, nil)
	wantError(t, "bob revokes alice's share", resp, body, http.StatusNotFound, loom.ENOTFOUND)
	if resp, _ := e.request("DELETE", share.SharesPath+"/"+sh.ID, shareTok, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	resp, body = e.request("GET", share.BlobPath(sh.ID), "", nil)
	wantError(t, "blob of a revoked share", resp, body, http.StatusNotFound, loom.ENOTFOUND)
	if resp, body := e.request("GET", share.PagePath+sh.ID, "", nil); resp.StatusCode != 404 || !bytes.Contains(body, []byte("revoked")) {
		t.Errorf("page of a revoked share: %d %s", resp.StatusCode, body)
	}
}

// A share link opened in a real browser shows the session, drawn as
// text (the HTML it holds does not run); the hub's store file and its
// logs hold none of its text; a wrong key and a revoked link each get a
// page that says so.
func TestBrowserShare(t *testing.T) {
	e := newEnv(t)
	sh, link := e.upload(e.alice, time.Now().Add(time.Hour))
	bctx := browser(t)
	do(t, bctx, "open the link",
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS("#messages article.role-assistant")),
	)
	text := eval[string](t, bctx, "document.getElementById('share').innerText")
	for _, want := range []string{"Rotate the staging deploy keys", "Check the marmoset deploy", "The pelican migration finished", "<b>bold</b>", "bash"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q:\n%s", want, text)
		}
	}
	if eval[bool](t, bctx, "window.__xss !== undefined || document.querySelector('#share b, #share script') !== null") {
		t.Error("HTML of the shared session ran or became elements")
	}
	do(t, bctx, "open the tool call", chromedp.Click(chromedp.CSS("details.tool summary")))
	if out := eval[string](t, bctx, "document.querySelector('details.tool').innerText"); !strings.Contains(out, "quokka telemetry ok") || !strings.Contains(out, "cat .env") {
		t.Errorf("tool call shows %q", out)
	}
	// What the hub holds: ciphertext only.
	for _, f := range []string{e.dbPath, e.dbPath + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, plain := range []string{"marmoset", "pelican", "quokka", "Rotate the staging"} {
			if bytes.Contains(b, []byte(plain)) {
				t.Errorf("the hub's %s holds %q", f, plain)
			}
		}
	}
	for _, plain := range []string{"marmoset", "pelican", "quokka", "#k="} {
		if strings.Contains(e.logs.String(), plain) {
			t.Errorf("the hub's log holds %q", plain)
		}
	}

	// A key that is not this share's.
	wrong := link[:strings.Index(link, "#k=")] + "#k=" + strings.Repeat("A", 43)
	do(t, bctx, "open with a wrong key", chromedp.Navigate(wrong), chromedp.WaitVisible(chromedp.CSS("#share-status[data-state=failed]")))
	if got := eval[string](t, bctx, "document.getElementById('share-status').innerText"); !strings.Contains(got, "Wrong key") {
		t.Errorf("a wrong key shows %q", got)
	}
	do(t, bctx, "open without a key", chromedp.Navigate(link[:strings.Index(link, "#")]), chromedp.WaitVisible(chromedp.CSS("#share-status[data-state=failed]")))
	if got := eval[string](t, bctx, "document.getElementById('share-status').innerText"); !strings.Contains(got, "No key") {
		t.Errorf("a link without its key shows %q", got)
	}

	// Revoked: the link answers 404 and the page says so.
	c := &share.Client{URL: e.ts.URL, Token: e.alice}
	if err := c.Revoke(context.Background(), sh.ID); err != nil {
		t.Fatal(err)
	}
	do(t, bctx, "open a revoked link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#share-status")))
	if got := eval[string](t, bctx, "document.getElementById('share-status').innerText"); !strings.Contains(got, "revoked") {
		t.Errorf("a revoked link shows %q", got)
	}
}
