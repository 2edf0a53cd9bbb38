package capture_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom/cli/capture"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/syncio"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// captureCmd is `loom capture run` on fx, with env added.
func captureCmd(t *testing.T, fx *clitest.Fixture, env ...string) *exec.Cmd {
	cmd := exec.Command(clitest.LoomBinary(t), "capture", "run", "--interval", "200ms", "--rescan", "2s")
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv(env...)
	return cmd
}

// status is `loom capture status --json` on fx.
func status(t *testing.T, fx *clitest.Fixture, env ...string) capture.Status {
	t.Helper()
	cmd := exec.Command(clitest.LoomBinary(t), "capture", "status", "--json")
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv(env...)
	r := clitest.ExecCmd(t, cmd, "")
	if r.Code != 0 {
		t.Fatalf("capture status: exit %d: %s", r.Code, r.Stderr)
	}
	return clitest.DecodeJSON[capture.Status](t, r.Stdout)
}

// waitStatus waits until cond holds of the status (the capture's
// heartbeat and the store are what it reads), or fails after a long
// while, showing the last status and the capture's output.
func waitStatus(t *testing.T, fx *clitest.Fixture, env []string, out fmt.Stringer, what string, cond func(capture.Status) bool) capture.Status {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		s := status(t, fx, env...)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(s, "", "  ")
			t.Fatalf("never %s: status %s\ncapture's output:\n%s", what, b, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func agent(s capture.Status, name string) *capture.AgentStatus {
	for i := range s.Agents {
		if s.Agents[i].Agent == name {
			return &s.Agents[i]
		}
	}
	return nil
}

func caughtUp(tool string) func(capture.Status) bool {
	return func(s capture.Status) bool {
		a := agent(s, tool)
		return s.Running && a != nil && a.Sessions > 0 && a.Pending == 0
	}
}

// TestCaptureKilledAndRestarted: the capture process, killed with
// SIGKILL while it imports (several times, each time once the store has
// grown), is seen as not running (its pid gone), and once started again
// captures everything: the store then holds what one import into an
// empty store holds, nothing lost and nothing twice; a session written
// while it runs is captured; stopped with SIGTERM, it says so.
func TestCaptureKilledAndRestarted(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "the kill comes when the SQLite file grows")
	corpus := clitest.ClaudeCorpus(t, "k", 12)
	env := []string{"CLAUDE_CONFIG_DIR=" + filepath.Dir(corpus)}

	clean := clitest.NewEmptyFixture(t)
	clean.MustExec(t, "session", "import", "--from", "claude-code", corpus)
	want := clitest.StoreView(t, clean)

	fx := clitest.NewEmptyFixture(t)
	kills, seen := 0, 0
	for range 5 {
		if clitest.KillWhenGrown(t, captureCmd(t, fx, env...), fx.DB, 0) {
			kills++
		}
		// Killed as it made the store, it had written no state yet.
		s := status(t, fx, env...)
		if s.Running || s.HeartbeatAt != nil && !strings.Contains(s.Why, "is gone") {
			t.Fatalf("after kill -9, status says running=%v: %s", s.Running, s.Why)
		}
		if s.HeartbeatAt != nil {
			seen++
		}
	}
	if kills < 5 || seen == 0 {
		t.Fatalf("%d of 5 captures killed while they wrote, %d after their first heartbeat", kills, seen)
	}
	var out strings.Builder
	cmd := captureCmd(t, fx, env...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	waitStatus(t, fx, env, &out, "caught up after the restart", caughtUp("claude-code"))
	if got := clitest.StoreView(t, fx); !slices.Equal(got, want) {
		t.Fatalf("after %d kills and a restart, the store holds %d sessions, one clean import %d:\n%v\nwant\n%v", kills, len(got), len(want), got, want)
	}

	// A new session while it runs is captured, within its lag.
	src, err := os.ReadFile(filepath.Join(corpus, "k00", "spotter", "short.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	fresh := strings.ReplaceAll(string(src), `"sessionId":"`, `"sessionId":"new`)
	if err := os.WriteFile(filepath.Join(corpus, "k00", "spotter", "new.jsonl"), []byte(fresh), 0o644); err != nil {
		t.Fatal(err)
	}
	s := waitStatus(t, fx, env, &out, "captured the new session", caughtUp("claude-code"))
	if a := agent(s, "claude-code"); a.LagMS == nil || a.LastCaptureAt == nil {
		t.Fatalf("no last capture or lag: %+v", a)
	}
	if got := clitest.StoreView(t, fx); len(got) != len(want)+1 {
		t.Fatalf("the store holds %d sessions; want %d", len(got), len(want)+1)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := <-done; err != nil {
		t.Fatalf("capture run ended with %v on SIGTERM:\n%s", err, out.String())
	}
	if s := status(t, fx, env...); s.Running || !strings.Contains(s.Why, "stopped") {
		t.Fatalf("after SIGTERM: running=%v, %s", s.Running, s.Why)
	}
	t.Logf("%d kills; capture's output:\n%s", kills, out.String())
}

// TestCaptureWaitsForAnother: a second capture on the same store and
// state waits while the first runs, and takes over when it is killed.
func TestCaptureWaitsForAnother(t *testing.T) {
	t.Parallel()
	corpus := clitest.ClaudeCorpus(t, "w", 1)
	env := []string{"CLAUDE_CONFIG_DIR=" + filepath.Dir(corpus)}
	fx := clitest.NewEmptyFixture(t)
	var out1 syncio.Buffer
	first := captureCmd(t, fx, env...)
	first.Stdout, first.Stderr = &out1, &out1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Process.Kill(); first.Wait() })
	s := waitStatus(t, fx, env, &out1, "running", caughtUp("claude-code"))
	second := captureCmd(t, fx, env...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	second.Stdout, second.Stderr = pw, pw
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { second.Process.Kill(); second.Wait() })
	// All the second capture says is read (so that it never waits on a
	// full pipe) and kept, to be shown if it does not take over.
	var said syncio.Buffer
	waiting, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		buf := make([]byte, 4096)
		told := false
		for {
			n, err := pr.Read(buf)
			said.Write(buf[:n])
			if !told && strings.Contains(said.String(), "waiting for it to end") {
				told = true
				close(waiting)
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-waiting:
	case <-ended:
		t.Fatalf("the second capture did not say it waits: %q", said.String())
	}
	if got := status(t, fx, env...); got.PID != s.PID {
		t.Fatalf("the second capture took over from a live one: pid %d, was %d", got.PID, s.PID)
	}
	first.Process.Kill()
	first.Wait()
	waitStatus(t, fx, env, &said, "taken over by the second capture", func(st capture.Status) bool {
		return st.Running && st.PID == second.Process.Pid
	})
	// The recall hooks too: the first capture's warm recall ended with
	// it, and the second answers them.
	dirs, err := paths.Resolve(func(k string) string { return map[string]string{"LOOM_HOME": fx.Home}[k] })
	if err != nil {
		t.Fatal(err)
	}
	sock := recall.WarmSocket(dirs.State, paths.DBURL("", func(k string) string {
		for _, kv := range fx.BinEnv() {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}, dirs))
	none := make(chan struct{})
	defer time.AfterFunc(2*time.Minute, func() { close(none) }).Stop()
	for recall.Holder(sock) != second.Process.Pid {
		select {
		case <-none:
			t.Fatalf("two minutes after the first capture ended, the recall hooks are answered by pid %d, not the second capture's %d", recall.Holder(sock), second.Process.Pid)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Once the agent deleted its session files (its own clean-up), loom
// capture status still says what loom captured from it: the sessions
// the store keeps and the last capture, not "0 never", nor no row at
// all once its directory is gone.
func TestCaptureStatusAfterTheAgentDeletedItsFiles(t *testing.T) {
	t.Parallel()
	corpus := clitest.ClaudeCorpus(t, "d", 2)
	env := []string{"CLAUDE_CONFIG_DIR=" + filepath.Dir(corpus)}
	fx := clitest.NewEmptyFixture(t)
	fx.MustExec(t, "session", "import", "--from", "claude-code", corpus)
	before := agent(status(t, fx, env...), "claude-code")
	if before == nil || before.Sessions == 0 || before.Files == 0 || before.LastCaptureAt == nil {
		t.Fatalf("after the import: %+v", before)
	}
	if err := os.RemoveAll(corpus); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"its files", "its directory"} {
		if gone == "its files" {
			if err := os.Mkdir(corpus, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Remove(corpus); err != nil {
			t.Fatal(err)
		}
		a := agent(status(t, fx, env...), "claude-code")
		if a == nil || a.Sessions != before.Sessions || a.Files != 0 || a.LastCaptureAt == nil || !a.LastCaptureAt.Equal(*before.LastCaptureAt) || a.Pending != 0 {
			t.Errorf("with %s deleted: %+v, want %d sessions captured at %v", gone, a, before.Sessions, before.LastCaptureAt)
		}
	}
}
