package clitest

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// A child's peak RSS (getrusage's ru_maxrss) counts the memory of the
// process it was forked from: a loom forked by this test binary, which
// holds a hundred megabytes and more by then, would show as that large.
// So bounded commands run under a small wrapper, this binary started
// afresh (rssWrapEnv set), which forks loom and writes loom's own peak
// to a file.
const (
	RssWrapEnv     = "LOOM_TEST_RSS_FILE"
	RssWrapUserEnv = "LOOM_TEST_RSS_AS" // uid:gid loom runs as
)

// rssFiles maps a wrapped command to the file its child's peak RSS goes
// to.
var rssFiles sync.Map

// WrapRSS makes cmd, set up to run loom (its Env set), run under the
// wrapper; maxRSS then reads loom's peak.
func WrapRSS(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "maxrss")
	cmd.Args = append([]string{self, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = self
	cmd.Env = append(cmd.Env, RssWrapEnv+"="+file)
	if a := cmd.SysProcAttr; a != nil && a.Credential != nil {
		// loom runs as that user, the wrapper as this test does.
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d:%d", RssWrapUserEnv, a.Credential.Uid, a.Credential.Gid))
		cmd.SysProcAttr = nil
	}
	rssFiles.Store(cmd, file)
}

// maxRSS returns the peak RSS in bytes of the loom a finished cmd ran:
// read from the wrapper's file when wrapRSS wrapped it.
func maxRSS(t *testing.T, cmd *exec.Cmd) int64 {
	t.Helper()
	if file, ok := rssFiles.Load(cmd); ok {
		b, err := os.ReadFile(file.(string))
		if err != nil {
			t.Fatalf("the wrapper wrote no peak RSS: %v", err)
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return kb << 10
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}

// runRSSWrapper is the wrapper: it runs os.Args[1:] with this process's
// standard streams, passes SIGTERM and SIGINT on, writes the child's
// peak RSS in KiB to file, and exits as the child did.
func runRSSWrapper(file string) int {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, RssWrapEnv+"=") && !strings.HasPrefix(e, RssWrapUserEnv+"=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	var uid, gid uint32
	if _, err := fmt.Sscanf(os.Getenv(RssWrapUserEnv), "%d:%d", &uid, &gid); err == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 127
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	cmd.Wait()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		os.WriteFile(file, []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o644)
	}
	return cmd.ProcessState.ExitCode()
}
