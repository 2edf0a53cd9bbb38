package traeagent

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real/proj/trajectories/trajectory_20261127_184210.json was
// written by Trae Agent's own TrajectoryRecorder, run from its source at
// commit e839e559ac61bdd0e057c375dd1dee391fee797d by testdata/gen.py in
// the order its agent calls it: the task, a reply with a bash call
// (run for real: wc -l notes.txt), its result, and a reply that ends the
// run with task_done. The project directory is renamed /home/u/proj.
var (
	real = filepath.Join("testdata", "real")
	file = filepath.Join(real, "proj", "trajectories", "trajectory_20261127_184210.json")
	id   = "trajectory_20261127_184210"
)

// The system prompt and the task as sent, each response with its calls
// and usage (the cached tokens apart from the input that counts them),
// the bash call completed with its output; the agent_steps, which
// repeat the interactions, add nothing.
func TestRead(t *testing.T) {
	res := importertest.ReadClean(t, Format{}, real, 1)
	s := importertest.Session(t, res, id)
	importertest.CheckRoles(t, s, "system user assistant assistant")
	if u := importertest.Texts(s, loom.RoleUser); len(u) != 1 || !strings.HasSuffix(u[0], "Here's the issue text:\nHow many lines does notes.txt have?\n") {
		t.Errorf("prompts %q", u)
	}
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Let me count the lines.", "notes.txt has 2 lines.")
	if calls := importertest.Calls(s); !slices.Equal(calls, []string{`bash completed {"command":"wc -l notes.txt"} "2 notes.txt\n"`, `task_done running {} `}) {
		t.Errorf("calls %q", calls)
	}
	if u := importertest.SumUsage(s); u.InputTokens != 1200+(1500-1024) || u.CacheReadTokens != 1024 || u.OutputTokens != 30+20 || u.ReasoningTokens != 8 || u.APICalls != 2 {
		t.Errorf("usage %+v", u)
	}
	if s.Cwd != "/home/u/proj" || s.Model != "gpt-fake-2026" {
		t.Errorf("cwd %q, model %q", s.Cwd, s.Model)
	}
}

// A run is followed as Trae Agent rewrites its file after each call;
// the file named alone is read whatever its name (--trajectory-file).
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 1, 4)
	importertest.ImportsOnce(t, Format{}, file, 1, 4)
	data := importertest.ReadBytes(t, file)
	root := t.TempDir()
	path := filepath.Join(root, "trajectories", filepath.Base(file))
	importertest.MkdirAll(t, filepath.Dir(path))
	// The file as the recorder left it after the first call.
	first := string(data)
	cut := strings.Index(first, "    },\n    {\n      \"timestamp\"")
	if cut < 0 {
		t.Fatal("testdata has no second interaction")
	}
	importertest.WriteFile(t, path, []byte(first[:cut]+"    }\n  ],\n  \"agent_steps\": []\n}\n"), 0o644)
	importertest.Follows(t, Format{}, root, func() {
		importertest.WriteFile(t, path, data, 0o644)
	}, 1)
}
