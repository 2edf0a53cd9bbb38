package capture

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// awkward are words that need quoting in a unit file and escaping in a
// plist: spaces, systemd's specifier and variable signs, quotes, a
// backslash, XML's specials, non-ASCII.
var awkward = []string{`/tmp/My Tools/50% "loom"`, `C:\odd`, `a&b<c>`, `$HOME`, `ünï`}

func service(t *testing.T, program string) Service {
	return Service{
		Program: program,
		Args:    []string{"capture", "run", "--db", awkward[0] + "/sessions.db"},
		Env:     []string{"LOOM_HOME=" + awkward[0], "CLAUDE_CONFIG_DIR=" + awkward[2], "LOOM_USER=" + awkward[3] + awkward[4], "CODEX_HOME=" + awkward[1]},
		Log:     filepath.Join(t.TempDir(), "capture & log.txt"),
	}
}

// TestSystemdUnitVerifies: the unit, with a program in a directory
// whose name needs quoting, is accepted by systemd's own checker
// (systemd-analyze verify, as a user unit), which also checks that the
// program it names, quoted, is an executable file.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian's systemd package has it)")
	}
	dir := filepath.Join(t.TempDir(), "My Tools", `50% $dir; ü`)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "loom")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, s Service) string {
		unitDir := t.TempDir()
		unit := filepath.Join(unitDir, UnitName)
		if err := os.WriteFile(unit, []byte(unitOf(t, s)), 0o600); err != nil {
			t.Fatal(err)
		}
		runtime := t.TempDir()
		cmd := exec.Command(analyze, "--user", "verify", unit)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "SYSTEMD_LOG_COLOR=0")
		out, err := cmd.CombinedOutput()
		if err != nil && strings.Contains(string(out), "Failed to initialize manager") {
			t.Skipf("systemd-analyze cannot run a user manager here: %s", out)
		}
		if err != nil {
			return "exit " + err.Error() + ": " + string(out)
		}
		return strings.TrimSpace(string(out))
	}
	t.Run("accepted", func(t *testing.T) {
		s := service(t, prog)
		if out := check(t, s); out != "" {
			t.Fatalf("systemd-analyze verify complains:\n%s\n\nunit:\n%s", out, unitOf(t, s))
		}
	})
	t.Run("a program that is not there is refused", func(t *testing.T) {
		// The checker can fail: quoting that split the path would name
		// a file that is not there, as this does.
		s := service(t, filepath.Join(dir, "nothing"))
		if out := check(t, s); !strings.Contains(out, "nothing") {
			t.Fatalf("systemd-analyze verify accepted a missing program: %q", out)
		}
	})
	t.Run("a program systemd cannot name is refused", func(t *testing.T) {
		// systemd refuses quotes and backslashes in a program's name
		// (checked by hand with systemd-analyze 252), quoted or not.
		for _, p := range []string{`/opt/a"b/loom`, `/opt/a'b/loom`, `/opt/a\b/loom`} {
			if _, err := SystemdUnit(service(t, p)); err == nil {
				t.Errorf("a unit was made for %s", p)
			}
		}
	})
	unit := unitOf(t, service(t, prog))
	for _, want := range []string{"Restart=always", "WantedBy=default.target", "StartLimitIntervalSec=0"} {
		if !strings.Contains(unit, want+"\n") {
			t.Errorf("the unit lacks %s:\n%s", want, unit)
		}
	}
}

func unitOf(t *testing.T, s Service) string {
	t.Helper()
	u, err := SystemdUnit(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestLaunchdPlistParses: the plist, full of strings XML must escape,
// is read by a real property-list parser (Python's plistlib) as the
// launch agent loom means: its label, the program and arguments word
// for word, the environment, kept alive and run at load.
func TestLaunchdPlistParses(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 (with plistlib) is not installed")
	}
	s := service(t, "/Applications/My Tools/loom")
	path := filepath.Join(t.TempDir(), Label+".plist")
	if err := os.WriteFile(path, LaunchdPlist(s), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", `import json, plistlib, sys
with open(sys.argv[1], "rb") as f:
    print(json.dumps(plistlib.load(f, fmt=plistlib.FMT_XML)))`, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("plistlib refuses the plist: %v\n%s\n%s", err, stderr.String(), LaunchdPlist(s))
	}
	var got struct {
		Label                string
		ProgramArguments     []string
		EnvironmentVariables map[string]string
		RunAtLoad, KeepAlive bool
		StandardOutPath      string
		ThrottleInterval     int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if got.Label != Label || !reflect.DeepEqual(got.ProgramArguments, append([]string{s.Program}, s.Args...)) ||
		!reflect.DeepEqual(got.EnvironmentVariables, env) || !got.RunAtLoad || !got.KeepAlive || got.StandardOutPath != s.Log || got.ThrottleInterval != 5 {
		t.Fatalf("plistlib reads %+v\nfrom a plist of %+v", got, s)
	}
}

// TestLive: a state file is of a running capture only when its process
// is alive and its heartbeat fresh.
func TestLive(t *testing.T) {
	now := time.Now()
	host, _ := os.Hostname()
	me := &State{PID: os.Getpid(), Host: host, Heartbeat: now.Add(-time.Second), IntervalMS: 1000}
	if l := Live(me, now); !l.Running {
		t.Errorf("a fresh heartbeat of a live process: %+v", l)
	}
	stale := *me
	stale.Heartbeat = now.Add(-10 * time.Second)
	if l := Live(&stale, now); l.Running || !strings.Contains(l.Why, "heartbeat") {
		t.Errorf("a heartbeat ten intervals old: %+v", l)
	}
	stopped := *me
	stopped.Stopped = &now
	if l := Live(&stopped, now); l.Running || !strings.Contains(l.Why, "stopped") {
		t.Errorf("a capture that stopped: %+v", l)
	}
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	gone := *me
	gone.PID = cmd.Process.Pid
	if l := Live(&gone, now); l.Running || !strings.Contains(l.Why, "gone") {
		t.Errorf("a process that ended: %+v", l)
	}
	if l := Live(nil, now); l.Running {
		t.Errorf("no state file: %+v", l)
	}
}

// TestStateFile: written whole and read back; none is no error.
func TestStateFile(t *testing.T) {
	path := StatePath(t.TempDir())
	if s, err := ReadState(path); s != nil || err != nil {
		t.Fatalf("no file: %v, %v", s, err)
	}
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	want := &State{PID: 7, Host: "h", StartedAt: at, Heartbeat: at, IntervalMS: 5000, Runs: 2,
		Agents: []*AgentState{{Agent: "claude-code", Roots: []string{"/r"}, Found: true, LastCapture: &at, Sessions: 3, Messages: 40}}}
	if err := WriteState(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(path)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if a := got.Agent("claude-code"); a == nil || a.Messages != 40 {
		t.Fatalf("Agent: %+v", a)
	}
}
