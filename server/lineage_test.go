package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/server"
)

// The session page reads the lineage it shows in one store call, however
// large the tree, and bounds what it shows.
func TestSessionPageLineageQueries(t *testing.T) {
	var cs *storetest.Counting
	e := newEnv(t, func(c *server.Config) {
		cs = storetest.NewCounting(c.Store)
		c.Store = cs
	})
	// A root with 200 forks, each with a sub-agent: 401 sessions.
	at := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Hour)
	var data []*loom.SessionData
	mk := func(kind, parent, title string) *loom.Session {
		at = at.Add(time.Millisecond)
		s := &loom.Session{ID: loom.NewID(), UserID: "alice", Kind: kind, ParentID: parent, Title: title, CreatedAt: at, UpdatedAt: at}
		data = append(data, &loom.SessionData{Session: s})
		return s
	}
	root := mk(loom.KindMain, "", "the root")
	first := mk(loom.KindFork, root.ID, "first fork")
	sub := mk(loom.KindSubagent, first.ID, "first helper")
	for i := 1; i < 200; i++ {
		f := mk(loom.KindFork, root.ID, "another fork")
		mk(loom.KindSubagent, f.ID, "another helper")
	}
	if err := e.st.Import(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	resp := e.send("GET", "/s/"+sub.ID, "", nil, http.Header{"Cookie": {"loom_token=" + e.alice}})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /s/%s = %d", sub.ID, resp.StatusCode)
	}
	page := string(body)
	lineage := page[strings.Index(page, `class="card lineage"`):]
	lineage = lineage[:strings.Index(lineage, "</section>")]
	// The whole tree from its root, the page's session marked, and no
	// more nodes than the page shows.
	if !strings.Contains(lineage, "/s/"+root.ID) || !strings.Contains(lineage, `<strong aria-current="true">first helper</strong>`) {
		t.Fatalf("lineage does not hold the root and the current session:\n%s", lineage)
	}
	if n := strings.Count(lineage, "<li>"); n != 300 {
		t.Fatalf("lineage shows %d sessions, want the bound of 300", n)
	}
	if cs.Calls()["Family"] != 1 || cs.Calls()["Sessions"] != 0 || cs.Calls()["Session"] > 2 {
		t.Fatalf("the session page read the lineage with %v", cs.Calls())
	}
}
