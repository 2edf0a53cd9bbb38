package capture

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer/agents"
	"github.com/loomhq/loom/paths"
)

// platformOptions are the options of a run on goos, in a home of its
// own, with a service manager that records its calls.
func platformOptions(t *testing.T, goos string, calls *[]string) *Options {
	home := t.TempDir()
	env := map[string]string{"LOOM_HOME": filepath.Join(home, "loom"), "CLAUDE_CONFIG_DIR": filepath.Join(home, "claude & co")}
	ios, _, _, _ := term.Test()
	return &Options{
		IO: ios, Getenv: func(k string) string { return env[k] }, Home: func() string { return home },
		Dirs: func() (paths.Dirs, error) { return paths.Resolve(func(k string) string { return env[k] }) },
		Now:  time.Now, DBFlag: func() string { return "" }, UserFlag: func() string { return "" }, JSON: func() bool { return false },
		GOOS: goos, Formats: agents.Formats(), Program: func() (string, error) { return "/Applications/loom tools/loom", nil },
		LookPath: func(name string) (string, error) { return "/bin/" + name, nil },
		Manager: func(ctx context.Context, name string, args ...string) (string, error) {
			*calls = append(*calls, name+" "+strings.Join(args, " "))
			if len(args) > 0 && args[0] == "bootout" {
				return "Boot-out failed: 3: No such process", errors.New("exit status 3")
			}
			return "", nil
		},
	}
}

// TestCaptureInstallLaunchd: on macOS, install writes the launch agent's
// plist (read back by Python's plistlib as the agent loom means: this
// loom's capture run, kept alive, with LOOM_HOME and the agents'
// variables), and loads it with launchctl bootstrap in the user's GUI
// domain; uninstall boots it out and removes the plist.
func TestCaptureInstallLaunchd(t *testing.T) {
	var calls []string
	opts := platformOptions(t, "darwin", &calls)
	if err := installRun(context.Background(), &InstallOptions{Options: opts, Start: true, Hooks: false}); err != nil {
		t.Fatal(err)
	}
	plist := filepath.Join(opts.Home(), "Library", "LaunchAgents", "dev.loom.capture.plist")
	domain := "gui/" + strconv.Itoa(os.Getuid())
	if want := []string{"launchctl bootout " + domain + "/dev.loom.capture", "launchctl bootstrap " + domain + " " + plist}; strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("launchctl calls:\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if py, err := exec.LookPath("python3"); err == nil {
		out, err := exec.Command(py, "-c", `import json, plistlib, sys
print(json.dumps(plistlib.load(open(sys.argv[1], "rb"))))`, plist).CombinedOutput()
		if err != nil {
			t.Fatalf("plistlib: %v\n%s", err, out)
		}
		var got struct {
			Label                string
			ProgramArguments     []string
			EnvironmentVariables map[string]string
			KeepAlive            bool
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if got.Label != "dev.loom.capture" || strings.Join(got.ProgramArguments, "|") != "/Applications/loom tools/loom|capture|run" || !got.KeepAlive ||
			got.EnvironmentVariables["LOOM_HOME"] != opts.Getenv("LOOM_HOME") || got.EnvironmentVariables["CLAUDE_CONFIG_DIR"] != opts.Getenv("CLAUDE_CONFIG_DIR") {
			t.Fatalf("plistlib reads %+v", got)
		}
	} else {
		t.Log("python3 is not installed: the plist is not parsed")
	}
	calls = nil
	if err := uninstallRun(context.Background(), &UninstallOptions{Options: opts, Hooks: false}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] != "launchctl bootout "+domain+"/dev.loom.capture" {
		t.Fatalf("uninstall called %q", calls)
	}
	if _, err := os.Stat(plist); !os.IsNotExist(err) {
		t.Fatalf("the plist is still there: %v", err)
	}
}

// TestCaptureInstallElsewhere: where loom knows no service manager,
// install writes nothing and says what to do instead.
func TestCaptureInstallElsewhere(t *testing.T) {
	var calls []string
	opts := platformOptions(t, "windows", &calls)
	err := installRun(context.Background(), &InstallOptions{Options: opts, Start: true, Hooks: true})
	if err == nil || !strings.Contains(err.Error(), "schtasks") || !strings.Contains(err.Error(), "loom capture run") {
		t.Fatalf("on windows: %v", err)
	}
	opts = platformOptions(t, "freebsd", &calls)
	if err := installRun(context.Background(), &InstallOptions{Options: opts, Start: true, Hooks: true}); err == nil || !strings.Contains(err.Error(), "loom capture run") {
		t.Fatalf("on freebsd: %v", err)
	}
	if len(calls) > 0 {
		t.Fatalf("a service manager was called: %q", calls)
	}
	if entries, _ := os.ReadDir(opts.Home()); len(entries) > 0 {
		t.Fatalf("files were written in the home directory: %v", entries)
	}
}
