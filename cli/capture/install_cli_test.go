package capture_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli/capture"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// fakeSystemctl puts a systemctl on a PATH of its own that records its
// arguments, a line a call, answers `show` as systemd 252 does, and
// fails with a message when failWith is set; it returns the PATH and
// the record's file.
func fakeSystemctl(t *testing.T, failWith string) (path, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$*\" >> '" + record + "'\n"
	if failWith != "" {
		script += "echo '" + failWith + "' >&2\nexit 1\n"
	} else {
		script += `case "$*" in *show*) printf 'ActiveState=active\nSubState=running\nUnitFileState=enabled\nMainPID=4242\nNRestarts=2\n';; esac` + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), record
}

func runLoom(t *testing.T, fx *clitest.Fixture, env []string, args ...string) clitest.Result {
	t.Helper()
	cmd := exec.Command(clitest.LoomBinary(t), args...)
	cmd.Dir, cmd.Env = fx.Project, append(fx.BinEnv(), env...)
	return clitest.ExecCmd(t, cmd, "")
}

// TestCaptureInstallSystemd: install writes the user unit (accepted by
// systemd-analyze verify), has systemctl reload, enable and restart it,
// adds the import hooks to the agents found, and keeps a hook the user
// had; status reads the unit's state from systemctl; uninstall disables
// and stops it, removes the unit and the hooks install added, and
// leaves the user's own.
func TestCaptureInstallSystemd(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	path, record := fakeSystemctl(t, "")
	env := []string{"PATH=" + path, "USER=tester"}
	// Claude Code with a hook of the user's; Gemini CLI bare; no Codex.
	clitest.WriteSettings(t, filepath.Join(fx.Home, ".claude", "settings.json"),
		`{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}`)
	if err := os.MkdirAll(filepath.Join(fx.Home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runLoom(t, fx, env, "capture", "install")
	if r.Code != 0 {
		t.Fatalf("install: exit %d: %s%s", r.Code, r.Stdout, r.Stderr)
	}
	unit := filepath.Join(fx.Home, ".config", "systemd", "user", "loom-capture.service")
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatalf("no unit written: %v\n%s", err, r.Stdout)
	}
	for _, want := range []string{"ExecStart=" + clitest.LoomBinary(t) + " capture run\n", "Environment=LOOM_HOME=" + fx.Home + "\n", "Environment=HOME=" + fx.Home + "\n", "Restart=always\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the unit lacks %q:\n%s", want, b)
		}
	}
	verifyUnit(t, unit)
	calls, _ := os.ReadFile(record)
	if want := "--user daemon-reload\n--user enable loom-capture.service\n--user restart loom-capture.service\n"; string(calls) != want {
		t.Fatalf("systemctl was called with:\n%s\nwant\n%s", calls, want)
	}
	for _, f := range []string{".claude/settings.json", ".gemini/settings.json"} {
		s, _ := os.ReadFile(filepath.Join(fx.Home, f))
		if !strings.Contains(string(s), "session import --hook") {
			t.Errorf("%s has no import hook:\n%s", f, s)
		}
	}
	if !strings.Contains(r.Stdout, "Started it") || !strings.Contains(r.Stdout, "Claude Code hooks") {
		t.Errorf("install says:\n%s", r.Stdout)
	}

	st := runLoom(t, fx, env, "capture", "status", "--json")
	s := clitest.DecodeJSON[capture.Status](t, st.Stdout)
	if s.Running || s.Service.State != "active (running)" || s.Service.Enabled == nil || !*s.Service.Enabled || s.Service.PID != 4242 || s.Service.Restarts == nil || *s.Service.Restarts != 2 {
		t.Fatalf("status: %s", st.Stdout)
	}

	os.WriteFile(record, nil, 0o644)
	r = runLoom(t, fx, env, "capture", "uninstall")
	if r.Code != 0 {
		t.Fatalf("uninstall: exit %d: %s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Fatalf("the unit is still there: %v", err)
	}
	calls, _ = os.ReadFile(record)
	if want := "--user disable --now loom-capture.service\n--user daemon-reload\n"; string(calls) != want {
		t.Fatalf("systemctl was called with:\n%s\nwant\n%s", calls, want)
	}
	claude, _ := os.ReadFile(filepath.Join(fx.Home, ".claude", "settings.json"))
	if strings.Contains(string(claude), "session import --hook") || !strings.Contains(string(claude), "notify-send done") || !strings.Contains(string(claude), `"opus"`) {
		t.Fatalf("Claude Code's settings after uninstall:\n%s", claude)
	}
}

// verifyUnit runs systemd-analyze verify on an installed unit, where
// systemd is installed.
func verifyUnit(t *testing.T, unit string) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit is not verified")
		return
	}
	cmd := exec.Command(analyze, "--user", "verify", unit)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir(), "SYSTEMD_LOG_COLOR=0")
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "Failed to initialize manager") {
		t.Logf("systemd-analyze cannot run a user manager here: %s", out)
		return
	}
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify %s: %v\n%s", unit, err, out)
	}
}

// TestCaptureInstallWithoutManager: where systemctl is not installed,
// or no user service manager runs (a container, WSL without systemd:
// systemctl fails to reach the bus), install writes the unit, says in
// one line (exit 1) that nothing starts it, and prints a command that
// starts capture now with what the machine has (nohup, else sh), and
// the crontab line that keeps it running only where crontab exists;
// never systemctl commands that cannot run. The start command starts a
// capture of this home; the crontab line, run as cron runs it (a bare
// environment, another HOME), does too, and uninstall stops it rather
// than say nothing of it.
func TestCaptureInstallWithoutManager(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	bare := t.TempDir() // no systemctl, no crontab, no nohup
	r := runLoom(t, fx, []string{"PATH=" + bare}, "capture", "install", "--no-hooks")
	if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "systemctl is not installed") ||
		!strings.Contains(r.Stderr, "no cron here either") || strings.Contains(r.Stdout, "systemctl --user") || strings.Contains(r.Stdout, "crontab") {
		t.Fatalf("without systemctl or cron: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	start := ""
	for _, l := range strings.Split(r.Stdout, "\n") {
		if l = strings.TrimSpace(l); strings.HasSuffix(l, " &") {
			start = l
		}
	}
	if !strings.Contains(start, "HOME="+fx.Home+" sh -c ") || !strings.Contains(start, clitest.LoomBinary(t)+" capture run >>") {
		t.Fatalf("no start command with the home, sh and loom:\n%s", r.Stdout)
	}
	if r := runLoom(t, fx, []string{"PATH=" + bare}, "capture", "install", "--no-hooks", "--no-start"); r.Code != 1 || strings.Contains(r.Stdout, "systemctl --user") {
		t.Fatalf("--no-start without systemctl: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	// The start command, run by a shell with only what this machine's
	// PATH has: capture runs; uninstall stops it.
	now := exec.Command("/bin/sh", "-c", start)
	now.Env = []string{"PATH=/usr/bin:/bin", "LOOM_RECALL_WARM=false"}
	if out, err := now.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", start, err, out)
	}
	var quiet strings.Builder
	s := waitStatus(t, fx, []string{"PATH=" + bare}, &quiet, "running from the start command", func(st capture.Status) bool { return st.Running })
	r = runLoom(t, fx, []string{"PATH=" + bare}, "capture", "uninstall")
	if r.Code != 0 || !strings.Contains(r.Stdout, fmt.Sprintf("Stopped the capture started otherwise (pid %d)", s.PID)) {
		t.Fatalf("uninstall with a capture started by hand: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}

	path, _ := fakeSystemctl(t, "Failed to connect to bus: No medium found")
	fakeDir, _, _ := strings.Cut(path, string(os.PathListSeparator))
	if err := os.WriteFile(filepath.Join(fakeDir, "crontab"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = runLoom(t, fx, []string{"PATH=" + path}, "capture", "install", "--no-hooks")
	if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "no user service manager runs here (systemctl: Failed to connect to bus") ||
		!strings.Contains(r.Stderr, "crontab -e") || !strings.Contains(r.Stdout, "Start capture now with:") {
		t.Fatalf("with no user bus: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	var line string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "@reboot ") {
			line = l
		}
	}
	if !strings.Contains(line, "HOME="+fx.Home+" ") || !strings.Contains(line, clitest.LoomBinary(t)+" capture run >>") {
		t.Fatalf("no crontab line with the home and loom:\n%s", r.Stdout)
	}
	// Installed: doctor no longer advises installing it.
	doc := runLoom(t, fx, []string{"PATH=" + path}, "doctor")
	if doc.Code != 0 || strings.Contains(doc.Stdout, "capture install") || !strings.Contains(doc.Stdout, "its service is installed (~/.config/systemd/user/loom-capture.service) but does not run") {
		t.Fatalf("doctor after install: exit %d\n%s%s", doc.Code, doc.Stdout, doc.Stderr)
	}
	cron := exec.Command("/bin/sh", "-c", strings.TrimPrefix(line, "@reboot "))
	cron.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LOOM_RECALL_WARM=false"}
	if err := cron.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cron.Wait() }()
	t.Cleanup(func() { cron.Process.Kill() })
	var none strings.Builder
	s = waitStatus(t, fx, []string{"PATH=" + path}, &none, "running from the crontab line", func(st capture.Status) bool { return st.Running })

	r = runLoom(t, fx, []string{"PATH=" + path}, "capture", "uninstall")
	if r.Code != 0 || !strings.Contains(r.Stdout, fmt.Sprintf("Stopped the capture started otherwise (pid %d)", s.PID)) || strings.Contains(r.Stdout, "Stopped it.") {
		t.Fatalf("uninstall with a capture started by cron: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the capture started by the crontab line still runs after uninstall")
	}
	if st := status(t, fx, "PATH="+path); st.Running {
		t.Fatalf("after uninstall, status says capture runs: %+v", st)
	}
	r = runLoom(t, fx, []string{"PATH=" + t.TempDir()}, "capture", "uninstall")
	if r.Code != 1 || !strings.Contains(r.Stderr, "no capture service is installed") {
		t.Fatalf("uninstall twice: exit %d: %s", r.Code, r.Stderr)
	}
}
