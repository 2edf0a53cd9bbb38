//go:build unix

package mcpclient_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/loomhq/loom/agent/mcpclient"
	"github.com/loomhq/loom/config"
)

// A server that never answers does not hold loom once its context is
// cancelled: connecting fails, saying so, and the server process is
// ended (stopped and reaped) before Tools returns.
func TestStalledServerCancelled(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &mcpclient.Clients{}
	t.Cleanup(func() { c.Close() })
	type result struct {
		tools []mcpclient.RemoteTool
		errs  []error
	}
	done := make(chan result, 1)
	go func() {
		// A startup timeout far beyond the test's: only the
		// cancellation can end the wait.
		s := server("stall", map[string]string{"STALL_FIFO": fifo})
		s.StartupTimeout = "1h"
		tools, errs := c.Tools(ctx, map[string]config.MCPServer{"slow": s})
		done <- result{tools, errs}
	}()

	// The server has started, and stalls, once it says its pid.
	f, err := os.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("the server's pid: %q, %v %v", line, err, perr)
	}
	cancel()
	r := <-done
	if len(r.tools) != 0 || len(r.errs) != 1 || !strings.HasPrefix(r.errs[0].Error(), "MCP server slow: cannot connect: ") || !errors.Is(r.errs[0], context.Canceled) {
		t.Fatalf("a stalled server, cancelled: %v, %v", toolNames(r.tools), r.errs)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the stalled server (pid %d) is still there: %v", pid, err)
	}
}
