package claudecode

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer/importertest"
)

// TestProjectSlug: the directory names Claude Code 2.1.330 gives working
// directories (the expected values are its own function's, run in
// Node): every UTF-16 code unit but an ASCII letter or digit is '-', and
// a name over 200 characters is cut and followed by a hash.
func TestProjectSlug(t *testing.T) {
	long := "/home/me/src/" + strings.Repeat("very-long-directory-name/", 10) + "api"
	for _, c := range []struct{ dir, want string }{
		{"/tmp/demo/src/api", "-tmp-demo-src-api"},
		{"/home/me/my_project.v2", "-home-me-my-project-v2"},
		{"/tmp/émoji😀/x", "-tmp--moji---x"},
		{long, "-home-me-src-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-di-df747t"},
	} {
		if got := ProjectSlug(c.dir); got != c.want {
			t.Errorf("ProjectSlug(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
}

// TestHandoffReadPathsAbsolute: loom's own read_file calls name files
// relative to the session's directory; Claude Code's Read takes only an
// absolute file_path, so the hand-off writes the path from that
// directory (else from the one Claude Code continues in).
func TestHandoffReadPathsAbsolute(t *testing.T) {
	home := t.TempDir()
	read := func(id, path string) loom.Part {
		return loom.Part{Type: loom.PartTool, CallID: id, Name: "read_file", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"path":"` + path + `"}`), Output: json.RawMessage(`"hello"`)}
	}
	h := &handoff.Handoff{
		Session: &loom.Session{ID: "s", Cwd: "/home/dev/notes"},
		Dir:     "/home/dev/other", Env: func(string) string { return "" }, Home: home,
		Messages: []*loom.Message{
			{Role: loom.RoleUser, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "read my notes"}}},
			{Role: loom.RoleAssistant, Turn: 1, Parts: []loom.Part{read("c1", "notes-hc.txt"), read("c2", "/etc/hostname")}},
		},
	}
	out := importertest.HandOff(t, Format{}, h)
	var paths []string
	for _, l := range readLines(t, out.Path) {
		var line struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		json.Unmarshal([]byte(l), &line)
		var blocks []struct {
			Type  string `json:"type"`
			Input struct {
				FilePath string `json:"file_path"`
			} `json:"input"`
		}
		if line.Type == "assistant" && json.Unmarshal(line.Message.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_use" {
					paths = append(paths, b.Input.FilePath)
				}
			}
		}
	}
	if want := []string{"/home/dev/notes/notes-hc.txt", "/etc/hostname"}; !slices.Equal(paths, want) {
		t.Errorf("Read paths %q, want %q", paths, want)
	}
	h.Session.Cwd = ""
	if name, input, _ := ccTool(h, read("c1", "notes-hc.txt")); name != "Read" || input.(obj)["file_path"] != "/home/dev/other/notes-hc.txt" {
		t.Errorf("without the session's directory: %s %v", name, input)
	}
}

// readLines is the lines of the file at path.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b := importertest.ReadBytes(t, path)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
