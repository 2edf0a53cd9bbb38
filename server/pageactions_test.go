package server_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// postForm posts a URL-encoded form to a dashboard path as alice's
// browser would, with her cookie, and returns the answer and its body.
func (e *env) postForm(path, body, contentType string) (*http.Response, []byte) {
	e.t.Helper()
	resp := e.send(http.MethodPost, path, "", body, http.Header{
		"Cookie":       {"loom_token=" + e.alice},
		"Content-Type": {contentType},
	})
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

const formType = "application/x-www-form-urlencoded"

// The edit form changes only the fields it sends: a description alone
// keeps the title, a title alone keeps the description, and a form with
// neither changes nothing.
func TestEditSessionKeepsFieldsNotSent(t *testing.T) {
	e := newEnv(t)
	x := e.seed(&loom.Session{UserID: "alice", Key: "cli:edit", Title: "Keep this title", Description: "and this description"},
		userMsg("hello"), assistantMsg("hi"))
	check := func(what, title, desc string) {
		t.Helper()
		got, err := e.st.Session(t.Context(), x.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Title != title || got.Description != desc {
			t.Fatalf("%s: title %q, description %q; want %q, %q", what, got.Title, got.Description, title, desc)
		}
	}
	resp, body := e.postForm("/s/"+x.ID+"/edit", url.Values{"description": {"new description"}}.Encode(), formType)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("description alone: %d %s", resp.StatusCode, body)
	}
	check("after a description alone", "Keep this title", "new description")
	resp, body = e.postForm("/s/"+x.ID+"/edit", url.Values{"title": {"New title"}}.Encode(), formType)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("title alone: %d %s", resp.StatusCode, body)
	}
	check("after a title alone", "New title", "new description")
	// The page's form sends both; an empty description clears it.
	resp, body = e.postForm("/s/"+x.ID+"/edit", url.Values{"title": {"Both"}, "description": {""}}.Encode(), formType)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("both: %d %s", resp.StatusCode, body)
	}
	check("after both", "Both", "")
	resp, body = e.postForm("/s/"+x.ID+"/edit", "", formType)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("an empty form: %d %s, want 400", resp.StatusCode, body)
	}
	check("after an empty form", "Both", "")
}

// A form body larger than the dashboard takes is refused with 413, URL
// encoded or multipart, and changes nothing; so is a login's.
func TestFormBodyTooLarge(t *testing.T) {
	e := newEnv(t)
	x := e.seed(&loom.Session{UserID: "alice", Key: "cli:big", Title: "Unchanged", Description: "also unchanged"},
		userMsg("hello"), assistantMsg("hi"))
	big := strings.Repeat("a", 12<<20)
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("title", "x")
	mw.WriteField("description", big)
	mw.Close()
	for _, tc := range []struct {
		what, path, contentType string
		body                    string
	}{
		{"edit, URL-encoded", "/s/" + x.ID + "/edit", formType, "title=x&description=" + big},
		{"edit, multipart", "/s/" + x.ID + "/edit", mw.FormDataContentType(), mp.String()},
		{"rewind", "/s/" + x.ID + "/rewind", formType, "turn=1&pad=" + big},
		{"delete", "/s/" + x.ID + "/delete", formType, "pad=" + big},
		{"login", "/login", formType, "token=" + e.alice + "&pad=" + big},
	} {
		resp, body := e.postForm(tc.path, tc.body, tc.contentType)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: %d, want 413\n%.300s", tc.what, resp.StatusCode, body)
		}
		if resp.Header.Get("Set-Cookie") != "" && tc.path == "/login" {
			t.Errorf("%s: a refused login set a cookie", tc.what)
		}
	}
	got, err := e.st.Session(t.Context(), x.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Unchanged" || got.Description != "also unchanged" || got.DeletedAt != nil {
		t.Fatalf("after refused forms: %+v", got)
	}
}
