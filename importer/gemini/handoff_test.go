package gemini

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer/importertest"
)

// TestProjectSlug: a handoff finds the directory Gemini CLI's project
// registry gives a project, and registers a new one as Gemini CLI does.
func TestProjectSlug(t *testing.T) {
	gdir := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(gdir, rel)
		importertest.MkdirAll(t, filepath.Dir(p))
		importertest.WriteFile(t, p, []byte(data), 0o600)
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

// geminiShortID is how Gemini CLI 0.61's session cleanup reads the id
// prefix of a recording's file name (sessionCleanup.ts, SHORT_ID_REGEX):
// when a recording holds nothing to resume, every file whose name ends
// with its prefix is deleted with it.
var geminiShortID = regexp.MustCompile(`-([a-zA-Z0-9]{8})\.jsonl?$`)

// TestHandoffSurvivesCleanup: resuming a handed-off session, Gemini CLI
// starts a recording of its own for it (session-<now>-<id prefix>.jsonl,
// its session context alone), which its cleanup deletes at the next
// start with every file whose name ends with the same prefix. The
// handed-off recording's name is not one of them, Gemini CLI still finds
// it by its id, loom's import still ties sub-agents to it, and the
// context-only recording is no session of its own.
func TestHandoffSurvivesCleanup(t *testing.T) {
	home := t.TempDir()
	h := &handoff.Handoff{Session: &loom.Session{ID: "s"}, Dir: filepath.Join(home, "notes"), Home: home, Env: func(string) string { return "" },
		Messages: []*loom.Message{
			{Role: loom.RoleUser, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "What is in this folder?"}}},
			{Role: loom.RoleAssistant, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "Two notes."}}},
		}}
	out := importertest.HandOff(t, Format{}, h)
	name := filepath.Base(out.Path)
	if !strings.HasPrefix(name, "session-") || !strings.HasSuffix(name, ".jsonl") || geminiShortID.MatchString(name) {
		t.Errorf("the handed-off recording is %s: Gemini CLI's cleanup would take it with a context-only file of its id", name)
	}
	if got := shortID(name); got != out.SessionID[:8] {
		t.Errorf("shortID(%s) = %q, want %q", name, got, out.SessionID[:8])
	}

	// What Gemini CLI 0.61 writes when it resumes the session a minute
	// later: a recording of its own with the session context alone.
	chats := filepath.Dir(out.Path)
	ownFile := filepath.Join(chats, "session-2099-01-01T00-00-"+out.SessionID[:8]+".jsonl")
	own := `{"sessionId":"` + out.SessionID + `","projectHash":"x","startTime":"2099-01-01T00:00:00.000Z","lastUpdated":"2099-01-01T00:00:00.000Z","kind":"main"}
{"$set":{"messages":[{"id":"d04923d38bb0f6017037e74183378ef4","timestamp":"2099-01-01T00:00:00.001Z","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>"}]}]}}
`
	importertest.WriteFile(t, ownFile, []byte(own), 0o600)
	res := read(t, ownFile)
	if len(res.Sessions) != 0 || res.Skipped["empty-session"] != 1 {
		t.Errorf("the context-only recording: %d sessions, skipped %v", len(res.Sessions), res.Skipped)
	}
	m := geminiShortID.FindStringSubmatch(filepath.Base(ownFile))
	files, _ := filepath.Glob(filepath.Join(chats, "session-*"))
	for _, f := range files {
		if strings.HasSuffix(f, "-"+m[1]+".jsonl") && f == out.Path {
			t.Errorf("cleanup would delete the handed-off recording with %s", filepath.Base(ownFile))
		}
	}
}
