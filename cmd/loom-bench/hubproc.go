package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// hubProc is one loom serve process of the hub.
type hubProc struct {
	cmd  *exec.Cmd
	base string
	pid  int
}

// startHubProc runs loom serve on db as its own process.
func startHubProc(ctx context.Context, bin, db, home, logPath string) (*hubProc, error) {
	return startServe(ctx, bin, append(os.Environ(), "LOOM_DB="+db, "LOOM_HOME="+home, "HOME="+home), logPath)
}

// startServe runs loom serve with env on a free port, its log (stderr)
// appended to logPath, and returns once it listens.
func startServe(ctx context.Context, bin string, env []string, logPath string) (*hubProc, error) {
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--grace", "1s")
	cmd.Env = env
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("loom serve: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	go io.Copy(io.Discard, stdout)
	m := regexp.MustCompile(`(http://[^/\s]+)/`).FindStringSubmatch(line)
	if m == nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("loom serve printed %q (%v); see %s", line, err, logPath)
	}
	return &hubProc{cmd: cmd, base: m[1], pid: cmd.Process.Pid}, nil
}

// cpuTicks is a process's user and system CPU time in clock ticks
// (1/100 s).
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

// roundRobin sends each request to the next hub process in turn, as a
// load balancer without sticky sessions does; a request that fails on
// the way (the process was killed, or does not listen) goes to the next
// one, as the client would send it again.
type roundRobin struct {
	mu       sync.Mutex
	backends []string
	n        int
	next     http.RoundTripper
	retried  atomic.Int64
}

func (rr *roundRobin) set(backends []string) {
	rr.mu.Lock()
	rr.backends = slices.Clone(backends)
	rr.mu.Unlock()
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	var last error
	for try := range 20 {
		rr.mu.Lock()
		be := rr.backends[rr.n%len(rr.backends)]
		rr.n++
		rr.mu.Unlock()
		req := r.Clone(r.Context())
		req.URL.Scheme, req.URL.Host, req.Host = "http", strings.TrimPrefix(be, "http://"), ""
		if r.GetBody != nil {
			body, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			req.Body = body
		}
		resp, err := rr.next.RoundTrip(req)
		if err == nil {
			return resp, nil
		}
		if r.Context().Err() != nil {
			return nil, err
		}
		last = err
		rr.retried.Add(1)
		if try > 2 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil, last
}
