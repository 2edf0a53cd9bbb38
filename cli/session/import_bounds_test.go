package session_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/fsfault"
)

// zeros is /dev/zero as a reader, for a pipe.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Importing loom's own format refuses what is not a regular file
// without opening it for long (a named pipe would block open(2) until a
// writer comes), a file over the limit before reading it, and standard
// input that is a device or does not start like an export: each at
// once, in little memory, with one line and exit status 1.
func TestImportOwnFormatBounded(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	fifo := filepath.Join(fx.Home, "fifo.jsonl")
	fsfault.Fifo(t, fifo)
	sparse := filepath.Join(fx.Home, "sparse.jsonl")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		f.Close()
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	fx.ExecBounded(t, nil, cli.ExitError, "not a regular file (a named pipe)", "session", "import", fifo)
	fx.ExecBounded(t, nil, cli.ExitError, "not a regular file (a character device)", "session", "import", "/dev/zero")
	fx.ExecBounded(t, nil, cli.ExitError, "too large: 2 GB, over the limit of 1 GB", "session", "import", sparse)
	// head -c 300M /dev/zero | loom session import -
	fx.ExecBounded(t, io.LimitReader(zeros{}, 300<<20), cli.ExitError, "<stdin>:1: not a loom export", "session", "import", "-")
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	defer zero.Close()
	fx.ExecBounded(t, zero, cli.ExitError, "<stdin>: not a regular file (a character device)", "session", "import", "-")
	big, err := os.Open(sparse)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	fx.ExecBounded(t, big, cli.ExitError, "<stdin>: too large: 2 GB", "session", "import", "-")
	if n := fx.CountSessions(t); n != 0 {
		t.Errorf("%d sessions in the store after refused imports", n)
	}
}

// SIGTERM and Ctrl+C stop an import of loom's own format within a
// second, also while it waits on a pipe that says nothing, and the store
// is as it was: nothing of the input is written.
func TestImportOwnFormatStopsOnSignal(t *testing.T) {
	t.Parallel()
	src := clitest.NewFixture(t)
	out := src.MustExec(t, "session", "export", "--all", "--format", "jsonl")
	head := strings.Join(strings.SplitN(out, "\n", 3)[:2], "\n") + "\n"
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		for _, stall := range []bool{false, true} {
			fx := clitest.NewEmptyFixture(t)
			cmd, stdin, stderr := startOnPipe(t, fx, "session", "import", "-")
			// A valid start, then either blank lines without end (a long
			// import, read on) or nothing (a pipe that waits).
			if _, err := io.WriteString(stdin, head); err != nil {
				t.Fatal(err)
			}
			if !stall {
				go func() {
					blank := []byte(strings.Repeat("\n", 64<<10))
					for {
						if _, err := stdin.Write(blank); err != nil {
							return
						}
					}
				}()
			}
			// The signal comes once loom reads its input: it is
			// listening for signals by then, however slow its start.
			waitRead(t, stdin)
			what := fmt.Sprintf("%v during an import (stall %v)", sig, stall)
			checkInterrupted(t, cmd, stderr, sig, what)
			stdin.Close()
			clitest.CheckBounds(t, cmd, 0, what)
			if n := fx.CountSessions(t); n != 0 {
				t.Errorf("%s (stall %v): %d sessions written", what, stall, n)
			}
		}
	}
}

// hasProblem reports whether tr has a problem of path whose reason holds
// want.
func hasProblem(tr *importer.ToolReport, path, want string) bool {
	for _, p := range tr.Problems {
		if p.File == path && strings.Contains(p.Reason, want) {
			return true
		}
	}
	return false
}

// One rule for a source that cannot be read, whichever it is: a problem
// with its path in the report, the other tools imported, exit status 1
// and one line that names no tool twice.
func TestImportAllWhenASourceFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		nobody bool // needs a directory that cannot be read
		break_ func(t *testing.T, home string) (tool, path, reason string)
	}{
		{"unreadable claude-code project", true, func(t *testing.T, home string) (string, string, string) {
			p := filepath.Join(home, ".claude", "projects", "-home-user-spotter")
			return "claude-code", p, "permission denied"
		}},
		{"unreadable codex day", true, func(t *testing.T, home string) (string, string, string) {
			return "codex", filepath.Join(home, ".codex", "sessions", "2025", "09", "20"), "permission denied"
		}},
		{"unreadable codex sessions", true, func(t *testing.T, home string) (string, string, string) {
			return "codex", filepath.Join(home, ".codex", "sessions"), "permission denied"
		}},
		{"unreadable gemini project", true, func(t *testing.T, home string) (string, string, string) {
			return "gemini", filepath.Join(home, ".gemini", "tmp", "9e6a1b5c", "chats"), "permission denied"
		}},
		{"claude-code projects a file", false, func(t *testing.T, home string) (string, string, string) {
			p := filepath.Join(home, ".claude", "projects")
			os.RemoveAll(p)
			os.WriteFile(p, []byte("{}\n"), 0o644)
			return "claude-code", p, "not a directory (a regular file)"
		}},
		{"dangling gemini tmp", false, func(t *testing.T, home string) (string, string, string) {
			p := filepath.Join(home, ".gemini", "tmp")
			os.RemoveAll(p)
			os.Symlink(filepath.Join(home, "gone"), p)
			return "gemini", p, "a symbolic link to " + filepath.Join(home, "gone") + ", which does not exist"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.nobody && os.Geteuid() != 0 {
				t.Skip("makes directories unreadable as root's tests do: by running loom as another user")
			}
			fx := clitest.NewEmptyFixture(t)
			installAgentSessions(t, fx.Home)
			tool, path, reason := tc.break_(t, fx.Home)
			if tc.nobody {
				// Everything is nobody's but the directory, root's and
				// 0700: unreadable to loom run as nobody.
				fx.HandToNobody(t)
				os.Chown(path, 0, 0)
				os.Chmod(path, 0o700)
			}
			code, rep, stderr := fx.ImportAll(t, tc.nobody)
			if code != cli.ExitError {
				t.Errorf("exit %d, want %d", code, cli.ExitError)
			}
			line := strings.TrimSuffix(stderr, "\n")
			if strings.Contains(line, "\n") || !strings.Contains(line, "could not be read") || strings.Contains(line, tool+": "+tool) {
				t.Errorf("stderr %q, want one line", stderr)
			}
			tr := clitest.ToolReport(t, rep, tool)
			if tr.FilesFailed == 0 || !hasProblem(tr, path, reason) {
				t.Errorf("%s: no problem %q for %s: %+v", tool, reason, path, tr.Problems)
			}
			for _, other := range rep.Tools {
				if other.RootsFound == 0 {
					continue // an agent whose sessions the test did not put there
				}
				if other.Tool != tool && hasProblem(other, path, reason) {
					continue // an agent that keeps its files in the same broken place (Open Codex beside Codex)
				}
				if other.Tool != tool && (other.SessionsNew == 0 || other.FilesFailed != 0) {
					t.Errorf("%s was not imported beside %s's failure: %+v", other.Tool, tool, other)
				}
			}
		})
	}
}

// One file named as the PATH of --from opencode is read or refused,
// never passed over: a file that is not opencode's, a named pipe and
// /dev/zero are each a problem, at once, and exit status 1.
func TestImportOpencodeRefusesAWrongFile(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	fifo := filepath.Join(fx.Home, "opencode.db")
	fsfault.Fifo(t, fifo)
	passwd := filepath.Join(fx.Home, "passwd")
	os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644)
	for _, tc := range []struct{ path, want string }{
		{passwd, "not a session file of opencode"},
		{fifo, "not a regular file (a named pipe)"},
		{"/dev/zero", "not a regular file (a character device)"},
	} {
		code, rep, stderr := fx.ImportAll(t, false, "--from", "opencode", tc.path)
		tr := clitest.ToolReport(t, rep, "opencode")
		if code != cli.ExitError || tr.FilesFailed != 1 || !hasProblem(tr, tc.path, tc.want) {
			t.Errorf("%s: exit %d, %+v, stderr %q", tc.path, code, tr, stderr)
		}
	}
}

// SIGTERM ends --hook while the hook's stdin is a pipe that sends
// nothing, within a second.
func TestImportHookStopsOnSignal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	cmd, stdin, stderr := startOnPipe(t, fx, "session", "import", "--hook", "claude-code")
	defer stdin.Close()
	// The start of a payload, and no more: the signal comes once the
	// hook has read it, listening for signals by then.
	if _, err := io.WriteString(stdin, "{"); err != nil {
		t.Fatal(err)
	}
	waitRead(t, stdin)
	checkInterrupted(t, cmd, stderr, syscall.SIGTERM, "--hook")
}

// startOnPipe starts the loom binary with args in fx (under WrapRSS)
// reading a pipe, and returns the command, the pipe's end to write to
// and what the program writes to stderr.
func startOnPipe(t *testing.T, fx *clitest.Fixture, args ...string) (*exec.Cmd, *os.File, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(clitest.LoomBinary(t), args...)
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv()
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = r
	clitest.WrapRSS(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	return cmd, w, stderr
}

// checkInterrupted sends sig to the running cmd and checks that it ends
// within clitest.SignalTime as loom ends when interrupted: exit status
// cli.ExitError and "loom: interrupted" alone on stderr. The test stops
// when cmd goes on past twice that (cmd is then killed).
func checkInterrupted(t *testing.T, cmd *exec.Cmd, stderr *strings.Builder, sig os.Signal, what string) {
	t.Helper()
	start := time.Now()
	cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * clitest.SignalTime):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s went on %s after %v", what, 2*clitest.SignalTime, sig)
	}
	if took := time.Since(start); took > clitest.SignalTime {
		t.Errorf("%s: ended %s after %v", what, took.Round(time.Millisecond), sig)
	}
	if code := cmd.ProcessState.ExitCode(); code != cli.ExitError || strings.TrimSpace(stderr.String()) != "loom: interrupted" {
		t.Errorf("%s: exit %d after %v, stderr %q", what, code, sig, stderr.String())
	}
}

// waitRead waits until the program at the other end of pipe w has read
// what was written to it (on a pipe written without end, until it has
// read something): an event, whatever the machine's load.
func waitRead(t *testing.T, w *os.File) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	most := 0 // the most bytes seen waiting: fewer later is a read
	for {
		n, err := bytesWaiting(w)
		if err != nil {
			t.Fatalf("bytes waiting in the pipe: %v", err)
		}
		if n == 0 || n < most {
			return
		}
		most = n
		if time.Now().After(deadline) {
			t.Fatal("the program read nothing of its input in a minute")
		}
		time.Sleep(5 * time.Millisecond) // poll: a pipe says nothing when it is read
	}
}
