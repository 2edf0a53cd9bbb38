package cli

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// bounds is how an import of hostile input must end: within maxTime, in
// at most maxRSS of memory, with one line on stderr.
const (
	boundsTime = 2 * time.Second
	boundsRSS  = 100 << 20
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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
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
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss*1024 > boundsRSS {
		t.Errorf("%s grew to %d MB, over %d MB", what, ru.Maxrss>>10, boundsRSS>>20)
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
	src := newFixture(t)
	out := src.mustExec(t, "session", "export", "--all", "--format", "jsonl")
	head := strings.Join(strings.SplitN(out, "\n", 3)[:2], "\n") + "\n"
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		for _, stall := range []bool{false, true} {
			fx := newEmptyFixture(t)
			cmd := exec.Command(loomBinary(t), "session", "import", "-")
			cmd.Dir, cmd.Env = fx.project, fx.binEnv()
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// A valid start, then either blank lines without end (a long
			// import, read on) or nothing (a pipe that waits).
			go func() {
				io.WriteString(stdin, head)
				if stall {
					return
				}
				blank := []byte(strings.Repeat("\n", 64<<10))
				for {
					if _, err := stdin.Write(blank); err != nil {
						return
					}
				}
			}()
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			cmd.Process.Signal(sig)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("%v (stall %v): the import went on 5 s after the signal", sig, stall)
			}
			stdin.Close()
			what := sig.String() + " during an import"
			if took := time.Since(start); took > time.Second {
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
