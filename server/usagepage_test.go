package server_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// The usage page without usage says so; bad settings are refused as
// the API refuses them; beyond six agents or models the rest are drawn
// as one "other".
func TestUsagePageEdges(t *testing.T) {
	e := newEnv(t)
	get := func(path string) (int, string) {
		t.Helper()
		resp := e.send("GET", path, "", nil, cookieOf(e.alice))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, page := get("/usage"); code != 200 || !strings.Contains(page, "No usage in these 30 days.") ||
		!strings.Contains(page, "No block is active") || !strings.Contains(page, "No session has a cost yet.") {
		t.Errorf("an empty store's usage page: %d\n%s", code, page)
	}
	for _, bad := range []string{"/usage?days=0", "/usage?days=367", "/usage?days=x", "/usage?tz=Mars/Base"} {
		if code, _ := get(bad); code != 400 {
			t.Errorf("GET %s: %d, want 400", bad, code)
		}
	}

	var msgs []*loom.Message
	for i := range 8 {
		msgs = append(msgs, &loom.Message{Role: loom.RoleAssistant, Provider: "openai", Model: fmt.Sprintf("model-%d", i),
			CreatedAt: time.Now().Add(-time.Duration(i+1) * time.Minute), Usage: loom.Usage{InputTokens: int64(1000 * (8 - i))},
			Parts: []loom.Part{{Type: loom.PartText, Text: "ok"}}})
	}
	e.seed(&loom.Session{UserID: "alice", Key: "cli:many", Title: "Many models", Surface: "cli"}, msgs...)
	code, page := get("/usage?by=model&tz=UTC")
	if code != 200 {
		t.Fatalf("by model: %d", code)
	}
	legend := page[strings.Index(page, `<ul class="legend">`):]
	legend = legend[:strings.Index(legend, "</ul>")]
	for _, want := range []string{"model-0", "model-5", "other"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the legend lacks %s:\n%s", want, legend)
		}
	}
	// The models have no price: the tokens chart alone has bars, the
	// seventh and eighth models' in the colour of the rest.
	if strings.Contains(legend, "model-6") || strings.Count(page, `class="s-other"`) != 2 {
		t.Errorf("models beyond six are not drawn as other:\n%s", legend)
	}
}

// Two repositories named cli are told apart on every page that names
// projects, as loom usage and loom insights name them: the insights
// page's share of projects and the sessions page's project filter.
func TestPagesTellProjectsOfTheSameNameApart(t *testing.T) {
	e := newEnv(t)
	for i, root := range []string{"/src/a/cli", "/src/b/cli"} {
		e.seed(&loom.Session{UserID: "alice", Key: fmt.Sprintf("cli:%d", i), Title: "work in " + root, Surface: "cli",
			Project: loom.Project{ID: fmt.Sprintf("p-cli-%d", i), Name: "cli", Root: root}},
			&loom.Message{Role: loom.RoleAssistant, Provider: "openai", Model: "model-a", CreatedAt: time.Now().Add(-time.Minute),
				Usage: loom.Usage{InputTokens: 1000}, Parts: []loom.Part{{Type: loom.PartText, Text: "ok"}}})
	}
	for _, path := range []string{"/insights", "/"} {
		resp := e.send("GET", path, "", nil, cookieOf(e.alice))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "cli (/src/a/cli)") || !strings.Contains(string(b), "cli (/src/b/cli)") {
			t.Errorf("GET %s: %d, the two projects named cli are not told apart:\n%s", path, resp.StatusCode, b)
		}
	}
}
