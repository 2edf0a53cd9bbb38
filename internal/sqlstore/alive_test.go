//go:build unix

package sqlstore

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is reported dead")
	}
	if Alive(0) || Alive(-1) {
		t.Fatal("pid 0 or -1 reported alive")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Fatal("a running child is reported dead")
	}
	// Killed but not yet reaped: a zombie, which will never write again.
	cmd.Process.Signal(syscall.SIGKILL)
	deadline := time.Now().Add(5 * time.Second)
	for Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatal("a killed, unreaped child is still reported alive")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Wait()
	if Alive(pid) {
		t.Fatal("a reaped child is reported alive")
	}
}
