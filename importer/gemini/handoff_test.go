package gemini

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProjectSlug: a handoff finds the directory Gemini CLI's project
// registry gives a project, and registers a new one as Gemini CLI does.
func TestProjectSlug(t *testing.T) {
	gdir := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(gdir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("projects.json", `{"projects": {"/src/known": "known-one", "/src/stolen": "api"}}`)
	write("tmp/api/.project_root", "/other/api")
	write("tmp/marked/.project_root", "/src/marked")
	for _, c := range []struct{ root, want string }{
		{"/src/known", "known-one"},        // the registry's
		{"/src/marked", "marked"},          // found by its marker
		{"/src/My Project!", "my-project"}, // new: slugified base name
		{"/src/api", "api-1"},              // new, its name taken by another project
		{"/src/stolen", "stolen"},          // the registry's slug is another's marker: a new one
		{"/src/My Project!", "my-project"}, // registered above
	} {
		got, err := projectSlug(gdir, c.root)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("projectSlug(%q) = %q, want %q", c.root, got, c.want)
		}
		for _, base := range []string{"tmp", "history"} {
			b, err := os.ReadFile(filepath.Join(gdir, base, got, markerName))
			if err != nil || string(b) != c.root {
				t.Errorf("%s/%s marker %q, %v; want %q", base, got, b, err, c.root)
			}
		}
	}
}
