package capture

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/paths"
)

// status, with no capture run and no service, says so, and counts an
// agent's sessions in the store beside its files on the machine: one
// session captured before its file went, one file never imported
// (pending since it changed); piped, a row is tab-separated; --json
// gives the same.
func TestStatusRun(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := map[string]string{"LOOM_HOME": filepath.Join(home, "loom"), "CLAUDE_CONFIG_DIR": filepath.Join(home, "claude")}
	file := filepath.Join(home, "claude", "projects", "-src-api", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c01.jsonl")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(`{"type":"user","sessionId":"0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c01","message":{"role":"user","content":"hi"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := cmdtest.Store(t)
	storetest.AppendTexts(t, st, &loom.Session{ID: loom.NewID(), UserID: "alice", Surface: claudecode.Tool, Kind: loom.KindMain, Key: "claude-code:gone"},
		"a session whose file the agent deleted", "kept")
	now := time.Now()
	changed := now.Add(-2 * time.Hour)
	if err := os.Chtimes(file, changed, changed); err != nil {
		t.Fatal(err)
	}
	status := func(asJSON bool) *term.IOStreams {
		ios, _, _, _ := term.Test()
		opts := &StatusOptions{Options: &Options{
			IO: ios, Getenv: func(k string) string { return env[k] }, Home: func() string { return home },
			Dirs:    func() (paths.Dirs, error) { return paths.Resolve(func(k string) string { return env[k] }) },
			Now:     func() time.Time { return now },
			Formats: []importer.Format{claudecode.Format{}}, GOOS: "plan9",
			ReadStore: func(context.Context) (loom.Engine, error) { return st, nil },
			User:      func() string { return "alice" }, JSON: func() bool { return asJSON },
		}}
		if err := statusRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		return ios
	}

	out, _ := cmdtest.Outputs(status(false))
	want := "Capture: not running (no capture has run: no state file)\n" +
		"Service: not installed (loom capture install sets it up)\n\n" +
		"claude-code\t1\t1\tnever\t-\t1 (oldest " + human.ShortAgo(now, changed) + ")\tno\n"
	if out != want {
		t.Errorf("status:\n%q\nwant\n%q", out, want)
	}

	out, _ = cmdtest.Outputs(status(true))
	var got Status
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Running || got.Service != nil || len(got.Agents) != 1 {
		t.Fatalf("status --json: %s", out)
	}
	if a := got.Agents[0]; a.Agent != claudecode.Tool || a.Sessions != 1 || a.Files != 1 || a.Pending != 1 || a.LastCaptureAt != nil || a.Hooks == nil || *a.Hooks {
		t.Errorf("status --json's agent: %+v", a)
	}
}
