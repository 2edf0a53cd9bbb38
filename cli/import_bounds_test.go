package cli

import (
	"context"
	"encoding/json"
	"golang.org/x/sys/unix"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// bounds is how an import of hostile input must end: within boundsTime,
// in at most boundsRSS of memory, with one line on stderr. Each ends in
// well under the 2 s docs/import.md gives on a quiet machine; the test
// allows more, so that a machine loaded many times over its cores still
// passes, and still fails an import that reads without end or hangs.
const (
	boundsTime = 15 * time.Second
	boundsRSS  = 100 << 20
	// signalTime bounds how long an import goes on after SIGTERM or
	// SIGINT (within a second on a quiet machine).
	signalTime = 5 * time.Second
)

// execBounded runs the loom binary with stdin and checks that it ended
// within the bounds, with exit status code and one line of stderr
// holding want.
func (fx *fixture) execBounded(t *testing.T, stdin io.Reader, code int, want string, args ...string) {
	t.Helper()
	cmd := exec.Command(loomBinary(t), args...)
	cmd.Dir, cmd.Env = fx.project, fx.binEnv()
	cmd.Stdin = stdin
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	wrapRSS(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*boundsTime, func() { cmd.Process.Kill() })
	cmd.Wait()
	timer.Stop()
	took := time.Since(start)
	checkBounds(t, cmd, took, strings.Join(args, " "))
	if got := cmd.ProcessState.ExitCode(); got != code {
		t.Errorf("loom %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), got, code, stderr.String())
	}
	line := strings.TrimSuffix(stderr.String(), "\n")
	if !strings.Contains(line, want) || strings.Contains(line, "\n") {
		t.Errorf("loom %s: stderr %q, want one line with %q", strings.Join(args, " "), stderr.String(), want)
	}
}

// checkBounds fails t when the finished cmd took longer than boundsTime
// or grew past boundsRSS.
func checkBounds(t *testing.T, cmd *exec.Cmd, took time.Duration, what string) {
	t.Helper()
	if took > boundsTime {
		t.Errorf("%s took %s, over %s", what, took.Round(time.Millisecond), boundsTime)
	}
	if rss := maxRSS(t, cmd); rss > boundsRSS {
		t.Errorf("%s grew to %d MB, over %d MB", what, rss>>20, boundsRSS>>20)
	}
}

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
	fx := newEmptyFixture(t)
	fifo := filepath.Join(fx.home, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sparse := filepath.Join(fx.home, "sparse.jsonl")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		f.Close()
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	fx.execBounded(t, nil, ExitError, "not a regular file (a named pipe)", "session", "import", fifo)
	fx.execBounded(t, nil, ExitError, "not a regular file (a character device)", "session", "import", "/dev/zero")
	fx.execBounded(t, nil, ExitError, "too large: 2 GB, over the limit of 1 GB", "session", "import", sparse)
	// head -c 300M /dev/zero | loom session import -
	fx.execBounded(t, io.LimitReader(zeros{}, 300<<20), ExitError, "<stdin>:1: not a loom export", "session", "import", "-")
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	defer zero.Close()
	fx.execBounded(t, zero, ExitError, "<stdin>: not a regular file (a character device)", "session", "import", "-")
	big, err := os.Open(sparse)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	fx.execBounded(t, big, ExitError, "<stdin>: too large: 2 GB", "session", "import", "-")
	if n := fx.countSessions(t); n != 0 {
		t.Errorf("%d sessions in the store after refused imports", n)
	}
}

func (fx *fixture) countSessions(t *testing.T) int {
	t.Helper()
	ss, err := fx.openStore(t).Sessions(context.Background(), loom.SessionFilter{UserID: "local", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	return len(ss)
}

// SIGTERM and Ctrl+C stop an import of loom's own format within a
// second, also while it waits on a pipe that says nothing, and the store
// is as it was: nothing of the input is written.
func TestImportOwnFormatStopsOnSignal(t *testing.T) {
	t.Parallel()
	src := newFixture(t)
	out := src.mustExec(t, "session", "export", "--all", "--format", "jsonl")
	head := strings.Join(strings.SplitN(out, "\n", 3)[:2], "\n") + "\n"
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		for _, stall := range []bool{false, true} {
			fx := newEmptyFixture(t)
			cmd := exec.Command(loomBinary(t), "session", "import", "-")
			cmd.Dir, cmd.Env = fx.project, fx.binEnv()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdin := startOnPipe(t, cmd)
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
			start := time.Now()
			cmd.Process.Signal(sig)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * signalTime):
				cmd.Process.Kill()
				<-done
				t.Fatalf("%v (stall %v): the import went on %s after the signal", sig, stall, 2*signalTime)
			}
			stdin.Close()
			what := sig.String() + " during an import"
			if took := time.Since(start); took > signalTime {
				t.Errorf("%s: ended %s after the signal", what, took.Round(time.Millisecond))
			}
			checkBounds(t, cmd, 0, what)
			if code := cmd.ProcessState.ExitCode(); code != ExitError || strings.TrimSpace(stderr.String()) != "loom: interrupted" {
				t.Errorf("%s (stall %v): exit %d, stderr %q", what, stall, code, stderr.String())
			}
			if n := fx.countSessions(t); n != 0 {
				t.Errorf("%s (stall %v): %d sessions written", what, stall, n)
			}
		}
	}
}

// nobody is the user loom runs as when the tests run as root (who
// reads every directory, whatever its mode): an unreadable directory can
// only be tested so.
const nobody = 65534

// handToNobody gives fx's home to nobody, and lets nobody reach it and
// the loom binary through root's 0700 temporary directories.
func (fx *fixture) handToNobody(t *testing.T) {
	t.Helper()
	for _, start := range []string{filepath.Dir(fx.home), filepath.Dir(loomBinary(t))} {
		for dir := start; dir != "/"; dir = filepath.Dir(dir) {
			if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o001 == 0 {
				os.Chmod(dir, fi.Mode().Perm()|0o011)
			}
		}
	}
	filepath.WalkDir(fx.home, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Lchown(p, nobody, nobody)
		}
		return nil
	})
}

// importAll runs `loom session import --from all --json` (or with the
// given args) and returns its exit status, report and stderr, checking
// the bounds.
func (fx *fixture) importAll(t *testing.T, asNobody bool, args ...string) (int, importer.Report, string) {
	t.Helper()
	if len(args) == 0 {
		args = []string{"--from", "all"}
	}
	cmd := exec.Command(loomBinary(t), append([]string{"session", "import", "--json"}, args...)...)
	cmd.Dir, cmd.Env = fx.project, fx.binEnv()
	if asNobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	wrapRSS(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*boundsTime, func() { cmd.Process.Kill() })
	cmd.Wait()
	timer.Stop()
	checkBounds(t, cmd, time.Since(start), strings.Join(args, " "))
	var rep importer.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("%v: no report (%v): stdout %q, stderr %q", args, err, stdout.String(), stderr.String())
	}
	return cmd.ProcessState.ExitCode(), rep, stderr.String()
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
			fx := newEmptyFixture(t)
			installAgentSessions(t, fx.home)
			tool, path, reason := tc.break_(t, fx.home)
			if tc.nobody {
				// Everything is nobody's but the directory, root's and
				// 0700: unreadable to loom run as nobody.
				fx.handToNobody(t)
				os.Chown(path, 0, 0)
				os.Chmod(path, 0o700)
			}
			code, rep, stderr := fx.importAll(t, tc.nobody)
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			line := strings.TrimSuffix(stderr, "\n")
			if strings.Contains(line, "\n") || !strings.Contains(line, "could not be read") || strings.Contains(line, tool+": "+tool) {
				t.Errorf("stderr %q, want one line", stderr)
			}
			tr := toolReport(t, rep, tool)
			if tr.FilesFailed == 0 || !hasProblem(tr, path, reason) {
				t.Errorf("%s: no problem %q for %s: %+v", tool, reason, path, tr.Problems)
			}
			for _, other := range rep.Tools {
				if other.RootsFound == 0 {
					continue // an agent whose sessions the test did not put there
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
	fx := newEmptyFixture(t)
	fifo := filepath.Join(fx.home, "opencode.db")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	passwd := filepath.Join(fx.home, "passwd")
	os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644)
	for _, tc := range []struct{ path, want string }{
		{passwd, "not a session file of opencode"},
		{fifo, "not a regular file (a named pipe)"},
		{"/dev/zero", "not a regular file (a character device)"},
	} {
		code, rep, stderr := fx.importAll(t, false, "--from", "opencode", tc.path)
		tr := toolReport(t, rep, "opencode")
		if code != ExitError || tr.FilesFailed != 1 || !hasProblem(tr, tc.path, tc.want) {
			t.Errorf("%s: exit %d, %+v, stderr %q", tc.path, code, tr, stderr)
		}
	}
}

// SIGTERM ends --hook while the hook's stdin is a pipe that sends
// nothing, within a second.
func TestImportHookStopsOnSignal(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	cmd := exec.Command(loomBinary(t), "session", "import", "--hook", "claude-code")
	cmd.Dir, cmd.Env = fx.project, fx.binEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin := startOnPipe(t, cmd)
	defer stdin.Close()
	// The start of a payload, and no more: the signal comes once the
	// hook has read it, listening for signals by then.
	if _, err := io.WriteString(stdin, "{"); err != nil {
		t.Fatal(err)
	}
	waitRead(t, stdin)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * signalTime):
		cmd.Process.Kill()
		<-done
		t.Fatal("--hook went on 5 s after SIGTERM")
	}
	if took := time.Since(start); took > signalTime {
		t.Errorf("ended %s after SIGTERM", took.Round(time.Millisecond))
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitError || strings.TrimSpace(stderr.String()) != "loom: interrupted" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// startOnPipe starts cmd (under wrapRSS) reading a pipe and returns the
// pipe's end to write to.
func startOnPipe(t *testing.T, cmd *exec.Cmd) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = r
	wrapRSS(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	return w
}

// waitRead waits until the program at the other end of pipe w has read
// what was written to it (on a pipe written without end, until it has
// read something): an event, whatever the machine's load.
func waitRead(t *testing.T, w *os.File) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	most := 0 // the most bytes seen waiting: fewer later is a read
	for {
		n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD
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
