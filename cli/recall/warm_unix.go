//go:build unix

package recall

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// startWarm starts loom recall serve for store in the background, in a
// session of its own with no terminal and nothing of the hook's open
// (an agent reads a hook's output until it is closed), and does not
// wait for it.
func startWarm(store string) error {
	if testing.Testing() {
		// A test's binary is not loom: started so, it would run its
		// tests again.
		return errors.ErrUnsupported
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, "recall", "serve")
	cmd.Env = append(os.Environ(), "LOOM_DB="+store)
	// No directory held, and no project adopted.
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
