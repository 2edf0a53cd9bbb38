package usage

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/insights"
)

// TestProjectsOfTheSameNameToldApart: three repositories named cli are
// three rows that say which is which, and a session of no project (a
// Gemini CLI chat imported from no repository) is "(no project)", not
// its agent's name, in loom usage and loom insights alike.
func TestProjectsOfTheSameNameToldApart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	now := time.Now()
	for i, root := range []string{"/src/a/cli", "/src/b/cli", "/src/c/cli"} {
		s := &loom.Session{ID: loom.NewID(), UserID: "local", Title: "work on " + root, Surface: "claude-code",
			Project: loom.Project{ID: "p-cli-" + string(rune('a'+i)), Name: "cli", Root: root}}
		w.turn(t, s, now.Add(-time.Duration(i+3)*time.Second), "anthropic", "house-model", loom.Usage{InputTokens: 1000, OutputTokens: 100, APICalls: 1})
	}
	g := &loom.Session{ID: loom.NewID(), UserID: "local", Title: "a chat", Surface: "gemini"}
	w.turn(t, g, now.Add(-10*time.Second), "google", "gemini-2.5-flash", loom.Usage{InputTokens: 500, OutputTokens: 50, APICalls: 1})
	want := []string{"(no project)", "api", "cli (/src/a/cli)", "cli (/src/b/cli)", "cli (/src/c/cli)", "web"}

	opts, ios := w.options()
	opts.JSON = true
	if err := usageRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var u loom.UsageReport
	if err := json.Unmarshal([]byte(text(ios.Out)), &u); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range u.ByProject {
		got = append(got, r.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("loom usage's projects: %q, want %q", got, want)
	}

	opts, ios = w.options()
	opts.insights.top, opts.JSON = insights.DefaultTop, true
	if err := opts.insights.check("local", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := insightsRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var rep insights.Report
	if err := json.Unmarshal([]byte(text(ios.Out)), &rep); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, s := range rep.Projects {
		got = append(got, s.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("loom insights' projects: %q, want %q", got, want)
	}
}
