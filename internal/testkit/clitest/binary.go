package clitest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loomhq/loom/internal/testkit/termtest"
)

// The loom binary is built once, on first use, into binDir.
var (
	binDir  string
	binOnce sync.Once
	binPath string
	binErr  error
)

// Main runs the tests of a package that uses this package's helpers: it
// is the package's TestMain. Started again as the peak-memory wrapper of
// WrapRSS, it runs that instead; otherwise it makes the directory the
// loom binary is built into, runs the tests and removes it. Each of
// after is given the tests' exit code and returns the one to exit with
// (a check over what several tests found).
func Main(m *testing.M, after ...func(code int) int) {
	if file := os.Getenv(RssWrapEnv); file != "" {
		os.Exit(runRSSWrapper(file))
	}
	dir, err := os.MkdirTemp("", "loom-cli-test-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	for _, f := range after {
		code = f(code)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// moduleRoot returns the directory of loom's go.mod, found from the
// working directory up, for tests that read the repository's files.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := findModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// findModuleRoot returns the directory of loom's go.mod, found from the
// working directory up.
func findModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

// LoomBinary builds cmd/loom once and returns its path.
func LoomBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the loom binary")
	}
	binOnce.Do(func() {
		gotool, err := exec.LookPath("go")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(binDir, "loom")
		build := exec.Command(gotool, "build", "-o", binPath, "./cmd/loom")
		build.Dir = moduleRoot(t)
		out, err := build.CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("build loom: %v", binErr)
	}
	return binPath
}

// BinEnv is the environment of a loom process: only what loom reads, so
// the developer's own LOOM_* variables never leak in. A recall hook run
// with it starts no warm recall (LOOM_RECALL_WARM=false), which would
// outlive the test and write in its directory while it is removed;
// the tests of the warm recall add LOOM_RECALL_WARM=true.
func (fx *Fixture) BinEnv(extra ...string) []string {
	env := []string{"LOOM_HOME=" + fx.Home, "HOME=" + fx.Home, "PATH=" + os.Getenv("PATH"), "LOOM_RECALL_WARM=false"}
	if OnPostgres() {
		env = append(env, "LOOM_DB="+fx.DB)
	}
	if RedactingOnWrite() {
		env = append(env, "LOOM_REDACT_ON_WRITE=true")
	}
	env = append(env, fx.ExtraEnv...)
	return append(env, extra...)
}

// Exec runs the loom binary in the project directory with input, output
// and errors on pipes.
func (fx *Fixture) Exec(t *testing.T, stdin string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(LoomBinary(t), args...)
	cmd.Dir = fx.Project
	cmd.Env = fx.BinEnv()
	return ExecCmd(t, cmd, stdin)
}

// RunCmd runs cmd with stdin on a pipe and returns its exit code and
// output. An error other than a non-zero exit (the program could not be
// started) is returned as is.
func RunCmd(cmd *exec.Cmd, stdin string) (Result, error) {
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errOut.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.Code, err = ee.ExitCode(), nil
	}
	return r, err
}

// ExecCmd is runCmd for a program that must start.
func ExecCmd(t *testing.T, cmd *exec.Cmd, stdin string) Result {
	t.Helper()
	r, err := RunCmd(cmd, stdin)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (fx *Fixture) MustExec(t *testing.T, args ...string) string {
	t.Helper()
	r := fx.Exec(t, "", args...)
	if r.Code != 0 {
		t.Fatalf("loom %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// StartPTY runs loom in the project directory on a 120×40 terminal.
func (fx *Fixture) StartPTY(t *testing.T, args ...string) *termtest.Term {
	t.Helper()
	return fx.StartPTYSize(t, 120, 40, args...)
}

// StartPTYSize runs loom in the project directory on a cols×rows
// terminal.
func (fx *Fixture) StartPTYSize(t *testing.T, cols, rows int, args ...string) *termtest.Term {
	t.Helper()
	cmd := exec.Command(LoomBinary(t), args...)
	cmd.Dir = fx.Project
	cmd.Env = fx.BinEnv("TERM=xterm-256color")
	return termtest.Start(t, cmd, cols, rows)
}
