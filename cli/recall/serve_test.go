package recall_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/recall"
)

// A hook that finds no warm recall starts one in the background (loom
// recall serve), which the hooks after it ask; never a second one for
// the same store, however many hooks run, also at once. It ends cleanly (its socket
// removed, its lock released) when a hook of another version of loom
// asks, when its store is another file than the one it opened, when no
// question came for its idle time, and when stopped; the next hook
// starts another. A capture started while it runs answers the hooks
// once it has ended.
func TestWarmRecallStartedByHook(t *testing.T) {
	clitest.SkipOnPostgres(t, "the store's file is SQLite's")
	fx := clitest.NewFixture(t)
	fx.MustExec(t, "recall", "enable")
	sock, store := warmSocket(t, fx)
	want := fx.MustExec(t, "recall", "why does TestRetry flake?")
	run := func(event, prompt string) (clitest.Result, error) {
		in := `{"session_id":"x","cwd":"` + fx.Project + `","hook_event_name":"` + event + `","prompt":"` + prompt + `"}`
		cmd := exec.Command(clitest.LoomBinary(t), "recall", "--hook", "claude-code")
		cmd.Env, cmd.Dir = fx.BinEnv("LOOM_RECALL_HOOK_TIME=1m", "LOOM_RECALL_WARM=true"), fx.Project
		return clitest.RunCmd(cmd, in)
	}
	hook := func(event, prompt string) string {
		t.Helper()
		r, err := run(event, prompt)
		if err != nil || r.Code != 0 || r.Stderr != "" {
			t.Fatalf("hook: %v, exit %d, %s", err, r.Code, r.Stderr)
		}
		return r.Stdout
	}
	// started waits until a warm recall other than the one of pid
	// before answers, and returns its pid.
	started := func(before int) int {
		t.Helper()
		none := make(chan struct{})
		defer time.AfterFunc(2*time.Minute, func() { close(none) }).Stop()
		for {
			if pid := recall.Holder(sock); pid != 0 && pid != before {
				if c, err := net.Dial("unix", sock); err == nil {
					c.Close()
					return pid
				}
			}
			select {
			case <-none:
				t.Fatal("no warm recall answers two minutes after a hook")
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	// ended waits until the warm recall of pid has ended cleanly.
	ended := func(pid int, why string) {
		t.Helper()
		none := make(chan struct{})
		defer time.AfterFunc(2*time.Minute, func() { close(none) }).Stop()
		for syscall.Kill(pid, 0) == nil {
			select {
			case <-none:
				t.Fatalf("the warm recall %s still runs two minutes later", why)
			case <-time.After(20 * time.Millisecond):
			}
		}
		if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) || recall.Holder(sock) != 0 {
			t.Fatalf("the warm recall %s left its socket (%v) or its lock", why, err)
		}
	}
	ask := func(q recall.Question) (*recall.Answer, error) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		q.Deadline = time.Now().Add(time.Minute)
		return recall.Ask(ctx, sock, q)
	}

	// Four sessions starting at once: each hook answers, and one warm
	// recall is left (those started alongside it end at once).
	outs := make(chan string, 4)
	for range 4 {
		go func() {
			r, err := run("SessionStart", "")
			if err != nil || r.Code != 0 || r.Stderr != "" {
				r.Stdout = fmt.Sprintf("%v, exit %d, %s", err, r.Code, r.Stderr)
			}
			outs <- r.Stdout
		}()
	}
	for range 4 {
		if out := <-outs; !strings.Contains(out, "additionalContext") {
			t.Fatalf("SessionStart hook: %q", out)
		}
	}
	first := started(0)
	if runtime.GOOS == "linux" {
		none := make(chan struct{})
		stop := time.AfterFunc(2*time.Minute, func() { close(none) })
		for warmRecalls(t, fx.Home) != 1 {
			select {
			case <-none:
				t.Fatalf("two minutes after four SessionStart hooks at once, %d warm recalls run", warmRecalls(t, fx.Home))
			case <-time.After(20 * time.Millisecond):
			}
		}
		stop.Stop()
	}
	for range 2 {
		hook("SessionStart", "")
	}
	if out := hook("UserPromptSubmit", "why does TestRetry flake?"); !strings.Contains(out, fx.Main.ID) || strings.Contains(out, fx.Web.ID) {
		t.Fatalf("the hook asking the warm recall: %q; loom recall prints\n%s", out, want)
	}
	if pid := recall.Holder(sock); pid != first || (runtime.GOOS == "linux" && warmRecalls(t, fx.Home) != 1) {
		t.Fatalf("after 7 hooks the warm recall is pid %d (was %d), and %d run", pid, first, warmRecalls(t, fx.Home))
	}

	// A hook of another version: not answered, and the warm recall ends.
	if a, err := ask(recall.Question{Store: store, Prompt: "TestRetry", UserID: "alice", Version: "0.0.1-other"}); !errors.Is(err, recall.ErrOtherStore) {
		t.Fatalf("asked by another version: %+v, %v", a, err)
	}
	ended(first, "asked by another version")
	hook("UserPromptSubmit", "why does TestRetry flake?")
	second := started(first)

	// The store made again (restored from a copy): another file.
	b, err := os.ReadFile(fx.DB)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx.DB+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fx.DB+".new", fx.DB); err != nil {
		t.Fatal(err)
	}
	if a, err := ask(recall.Question{Store: store, Prompt: "TestRetry", UserID: "alice"}); !errors.Is(err, recall.ErrOtherStore) {
		t.Fatalf("asked once its store is another file: %+v, %v", a, err)
	}
	ended(second, "of a store made again")
	hook("SessionStart", "")
	third := started(second)

	// A capture started now waits, and answers once the hook's warm
	// recall has ended.
	capture := exec.Command(clitest.LoomBinary(t), "capture", "run", "--rescan", "1h")
	capture.Env, capture.Dir = fx.BinEnv(), fx.Project
	logR, logW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	capture.Stderr = logW
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	logW.Close()
	capEnded := make(chan struct{})
	go func() { capture.Wait(); close(capEnded) }()
	t.Cleanup(func() { capture.Process.Kill(); <-capEnded })
	var capLog strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(capLog.String(), "answers them once it ends") {
		n, err := logR.Read(buf)
		capLog.Write(buf[:n])
		if err != nil {
			t.Fatalf("loom capture run: %v\n%s", err, capLog.String())
		}
	}
	if err := syscall.Kill(third, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if pid := started(third); pid != capture.Process.Pid {
		t.Fatalf("the warm recall after the hook's is pid %d, not the capture's %d", pid, capture.Process.Pid)
	}
	if out := hook("UserPromptSubmit", "why does TestRetry flake?"); !strings.Contains(out, fx.Main.ID) {
		t.Fatalf("the hook asking the capture: %q", out)
	}
	capture.Process.Signal(syscall.SIGTERM)
	<-capEnded

	// Without a question for its idle time, it ends.
	serve := exec.Command(clitest.LoomBinary(t), "recall", "serve", "--idle", "300ms")
	serve.Env = fx.BinEnv()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	if err := serve.Wait(); err != nil {
		t.Fatalf("loom recall serve --idle 300ms: %v", err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) || recall.Holder(sock) != 0 {
		t.Fatalf("the idle warm recall left its socket (%v) or its lock", err)
	}
}
