package clitest

import (
	"context"
	"encoding/json"
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
// The whole of testdata's sessions imported with --from all peaks at
// 50–92 MB on PostgreSQL with redaction on write, and reached 101 MB
// once with the command tests four at a time on two cores: the bound
// leaves the garbage collector's lag on such a machine room, and still
// fails a reader that holds what it reads.
const (
	boundsTime = 15 * time.Second
	boundsRSS  = 128 << 20
	// SignalTime bounds how long an import goes on after SIGTERM or
	// SIGINT (within a second on a quiet machine).
	SignalTime = 5 * time.Second
)

// ExecBounded runs the loom binary with stdin and checks that it ended
// within the bounds, with exit status code and one line of stderr
// holding want.
func (fx *Fixture) ExecBounded(t *testing.T, stdin io.Reader, code int, want string, args ...string) {
	t.Helper()
	cmd := exec.Command(LoomBinary(t), args...)
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv()
	cmd.Stdin = stdin
	var stderr strings.Builder
	cmd.Stderr = &stderr
	runBounded(t, cmd, strings.Join(args, " "))
	if got := cmd.ProcessState.ExitCode(); got != code {
		t.Errorf("loom %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), got, code, stderr.String())
	}
	line := strings.TrimSuffix(stderr.String(), "\n")
	if !strings.Contains(line, want) || strings.Contains(line, "\n") {
		t.Errorf("loom %s: stderr %q, want one line with %q", strings.Join(args, " "), stderr.String(), want)
	}
}

// runBounded runs cmd (what, for messages) under WrapRSS, killed when
// it goes on past twice boundsTime, and checks its bounds.
func runBounded(t *testing.T, cmd *exec.Cmd, what string) {
	t.Helper()
	start := time.Now()
	WrapRSS(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*boundsTime, func() { cmd.Process.Kill() })
	cmd.Wait()
	timer.Stop()
	CheckBounds(t, cmd, time.Since(start), what)
}

// CheckBounds fails t when the finished cmd took longer than boundsTime
// or grew past boundsRSS.
func CheckBounds(t *testing.T, cmd *exec.Cmd, took time.Duration, what string) {
	t.Helper()
	if took > boundsTime {
		t.Errorf("%s took %s, over %s", what, took.Round(time.Millisecond), boundsTime)
	}
	if rss := maxRSS(t, cmd); rss > boundsRSS {
		t.Errorf("%s grew to %d MB, over %d MB", what, rss>>20, boundsRSS>>20)
	}
}

func (fx *Fixture) CountSessions(t *testing.T) int {
	t.Helper()
	ss, err := fx.OpenStore(t).Sessions(context.Background(), loom.SessionFilter{UserID: "local", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	return len(ss)
}

// nobody is the user loom runs as when the tests run as root (who
// reads every directory, whatever its mode): an unreadable directory can
// only be tested so.
const nobody = 65534

// HandToNobody gives fx's home to nobody, and lets nobody reach it and
// the loom binary through root's 0700 temporary directories.
func (fx *Fixture) HandToNobody(t *testing.T) {
	t.Helper()
	for _, start := range []string{filepath.Dir(fx.Home), filepath.Dir(LoomBinary(t))} {
		for dir := start; dir != "/"; dir = filepath.Dir(dir) {
			if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o001 == 0 {
				os.Chmod(dir, fi.Mode().Perm()|0o011)
			}
		}
	}
	filepath.WalkDir(fx.Home, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Lchown(p, nobody, nobody)
		}
		return nil
	})
}

// ImportAll runs `loom session import --from all --json` (or with the
// given args) and returns its exit status, report and stderr, checking
// the bounds.
func (fx *Fixture) ImportAll(t *testing.T, asNobody bool, args ...string) (int, importer.Report, string) {
	t.Helper()
	if len(args) == 0 {
		args = []string{"--from", "all"}
	}
	cmd := exec.Command(LoomBinary(t), append([]string{"session", "import", "--json"}, args...)...)
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv()
	if asNobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runBounded(t, cmd, strings.Join(args, " "))
	var rep importer.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("%v: no report (%v): stdout %q, stderr %q", args, err, stdout.String(), stderr.String())
	}
	return cmd.ProcessState.ExitCode(), rep, stderr.String()
}
