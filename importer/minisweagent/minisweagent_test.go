package minisweagent

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real/last_mini_run.traj.json is what mini-swe-agent 2.4.6's
// own DefaultAgent, LocalEnvironment and save() wrote, run from its
// source at commit a83fcae82d2a08f0ee0c688f9d137b3566c097f8 with the
// templates of its mini.yaml by testdata/gen.py: the model's three
// replies given in the form its LitellmModel.query returns (the
// message's model_dump, the API response with its usage), the commands
// run for real in a directory holding notes.txt, the last one
// submitting. The paths are renamed /home/u, the kernel's name shortened.
var (
	real = filepath.Join("testdata", "real")
	file = filepath.Join(real, "last_mini_run.traj.json")
)

// The system prompt and the task as sent, each reply with its call, each
// call completed with the output the program rendered for the model,
// usage with the cached tokens apart from the prompt that counts them;
// the exit is no message.
func TestRead(t *testing.T) {
	res := importertest.ReadClean(t, Format{}, real, 1)
	s := res.Sessions[0]
	if !strings.HasPrefix(s.SourceID, "last_mini_run-") {
		t.Errorf("id %q", s.SourceID)
	}
	importertest.CheckRoles(t, s, "system user assistant assistant assistant")
	if u := importertest.Texts(s, loom.RoleUser); len(u) != 1 || !strings.HasPrefix(u[0], "Please solve this issue: How many lines does notes.txt have?") {
		t.Errorf("prompts %q", u)
	}
	importertest.CheckTexts(t, s, loom.RoleAssistant, "I will list the files first.", "Now I read notes.txt.", "Done; submitting.")
	tl := importertest.TallyOf(s)
	if tl.Tools[loom.ToolCompleted] != 2 || tl.Tools[loom.ToolRunning] != 1 {
		t.Errorf("calls %+v: two completed, the submitting one ends the run unanswered", tl.Tools)
	}
	var outputs []string
	for _, p := range importertest.Parts(s, loom.PartTool) {
		if p.Name != "bash" || !json.Valid(p.Input) {
			t.Errorf("call %s input %s", p.Name, p.Input)
		}
		outputs = append(outputs, string(p.Output))
	}
	if !slices.Equal(outputs, []string{`"{\n  \"returncode\": 0,\n  \"output\": \"notes.txt\\n\"\n}"`, `"{\n  \"returncode\": 0,\n  \"output\": \"alpha\\nbeta\\n\"\n}"`, ""}) {
		t.Errorf("outputs %q", outputs)
	}
	if u := importertest.SumUsage(s); u.InputTokens != 1200+(1500-1024)+(1700-1280) || u.CacheReadTokens != 1024+1280 || u.OutputTokens != 30+25+20 || u.APICalls != 3 {
		t.Errorf("usage %+v", u)
	}
	if s.Cwd != "/home/u/proj" || s.Model != "gpt-fake" || s.Kind != loom.KindMain {
		t.Errorf("cwd %q, model %q, kind %s", s.Cwd, s.Model, s.Kind)
	}
}

// prefix writes, as path, the trajectory as mini saved it after its
// first n messages: mini rewrites the whole file after every step.
func prefix(t *testing.T, path string, n int) {
	t.Helper()
	data := importertest.ReadBytes(t, file)
	var doc map[string]json.RawMessage
	var msgs []json.RawMessage
	if json.Unmarshal(data, &doc) != nil || json.Unmarshal(doc["messages"], &msgs) != nil {
		t.Fatal("testdata is not a trajectory")
	}
	doc["messages"], _ = json.Marshal(msgs[:n])
	out, _ := json.MarshalIndent(doc, "", "  ")
	importertest.WriteFile(t, path, out, 0o644)
}

// A run is followed as mini rewrites its file after each step; the
// trajectory read again is the same session, grown.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 1, 5)
	root := t.TempDir()
	path := filepath.Join(root, "last_mini_run.traj.json")
	prefix(t, path, 5)
	importertest.Follows(t, Format{}, root, func() {
		data := importertest.ReadBytes(t, file)
		importertest.WriteFile(t, path, data, 0o644)
	}, 1)
}

// A file cut short (mini killed while writing) is one problem naming
// it, and the import goes on.
func TestReadCut(t *testing.T) {
	data := importertest.ReadBytes(t, file)
	importertest.ReadsAsOneProblem(t, Format{}, "run.traj.json", data[:len(data)/2])
}
