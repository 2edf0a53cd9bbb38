package main

// The peers of an import: the same session files imported by another
// tool that does the same job (agentsview, deja-vu), a process of its
// own, in turns with loom's import, so that the wall time, the CPU time
// and the peak memory are measured on the same machine in the same run
// (docs/performance.md, "Import growth" and "A heavy user's history").
// Nothing of the peers is part of loom: their binaries are given by
// path, built by whoever runs the benchmark.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// importPeer is a peer's binary, and the way it is run: its name says
// how it is pointed at the files and how it is known to be done.
type importPeer struct {
	name string // "agentsview" or "deja"
	bin  string
}

// parsePeers reads -import-peers: name=path pairs, comma-separated.
func parsePeers(s string) ([]importPeer, error) {
	var peers []importPeer
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		name, bin, ok := strings.Cut(f, "=")
		if !ok || (name != "agentsview" && name != "deja" && !strings.HasPrefix(name, "loom")) {
			return nil, fmt.Errorf("-import-peers %q: want agentsview=PATH, deja=PATH, or loom-NAME=PATH (another build of loom-bench)", s)
		}
		abs, err := filepath.Abs(bin)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("-import-peers: %w", err)
		}
		peers = append(peers, importPeer{name: name, bin: abs})
	}
	return peers, nil
}

// peerRow is one import by a peer.
type peerRow struct {
	Name     string
	Sessions int // what the peer said it imported; 0 when it says nothing
	Messages int // loom's builds only
	Wall     time.Duration
	CPU      time.Duration
	PeakRSS  int64 // bytes
	Disk     int64 // its data directory, bytes
}

// runPeer imports the Claude Code projects directory claude and the
// Codex home codex (either may be a directory that does not exist) with
// p, into a fresh data directory under dir that is removed afterwards.
//
// agentsview (wesm/agentsview) has no command that only imports: its
// server syncs every file into its SQLite database before it listens,
// and prints "Sync complete: N sessions synced". The import is timed
// from the start of the process to that line; its CPU time and peak
// memory are read from /proc then, and the server is stopped.
//
// deja (vshulcz/deja-vu) builds its index with `deja index`, timed from
// start to exit, its CPU time and peak memory those of the process.
//
// Each runs with HOME a directory of its own, so that neither reads
// anything but the files given.
//
// A name that starts with "loom" (loom-before=PATH) is another build of
// loom-bench, whose import (the -import-growth child) of corpus is run
// as loom's own is: the build before a change, in the same turns.
func runPeer(ctx context.Context, p importPeer, corpus, claude, codex, dir string) (peerRow, error) {
	if strings.HasPrefix(p.name, "loom") {
		r, err := growthChild(ctx, p.bin, "sqlite", corpus, growthOptions{dir: dir}, 0)
		return peerRow{Name: p.name, Sessions: r.Sessions, Messages: r.Messages, Wall: r.Wall, CPU: r.CPU, PeakRSS: r.PeakRSS, Disk: r.Disk}, err
	}
	home, err := os.MkdirTemp(dir, "peer-"+p.name+"-")
	if err != nil {
		return peerRow{}, err
	}
	defer os.RemoveAll(home)
	data := filepath.Join(home, "data")
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + home, "TZ=UTC"}
	r := peerRow{Name: p.name}
	switch p.name {
	case "agentsview":
		port, err := freePort()
		if err != nil {
			return r, err
		}
		env = append(env, "AGENT_VIEWER_DATA_DIR="+data, "CLAUDE_PROJECTS_DIR="+claude,
			"CODEX_SESSIONS_DIR="+filepath.Join(codex, "sessions"))
		cmd := exec.CommandContext(ctx, p.bin, "serve", "-no-browser", "-host", "127.0.0.1", "-port", strconv.Itoa(port))
		cmd.Env = env
		cmd.Stderr = io.Discard
		out, err := cmd.StdoutPipe()
		if err != nil {
			return r, err
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			return r, err
		}
		defer func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}()
		done := regexp.MustCompile(`Sync complete: (\d+) sessions synced`)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		found := false
		for sc.Scan() {
			if m := done.FindStringSubmatch(sc.Text()); m != nil {
				r.Wall = time.Since(t0)
				r.Sessions, _ = strconv.Atoi(m[1])
				found = true
				break
			}
		}
		if !found {
			return r, fmt.Errorf("agentsview ended before it said its sync was complete")
		}
		if r.CPU, r.PeakRSS, err = procUsage(cmd.Process.Pid); err != nil {
			return r, err
		}
		go io.Copy(io.Discard, out)
	case "deja":
		env = append(env, "DEJA_INDEX_DIR="+data, "DEJA_CLAUDE_ROOT="+claude, "DEJA_CODEX_ROOT="+codex)
		cmd := exec.CommandContext(ctx, p.bin, "index")
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stdout = io.Discard
		cmd.Stderr = &stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return r, fmt.Errorf("deja index: %w: %s", err, stderr.String())
		}
		r.Wall = time.Since(t0)
		r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.PeakRSS = ru.Maxrss << 10
		}
		if m := regexp.MustCompile(`(?i)(\d[\d,]*) sessions?`).FindStringSubmatch(stderr.String()); m != nil {
			r.Sessions, _ = strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		}
	}
	r.Disk = dirSize(data)
	return r, nil
}

// procUsage reads a running process's CPU time (user and system) and
// its peak resident memory from /proc.
func procUsage(pid int) (time.Duration, int64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The fields after the command's name, which is in parentheses.
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	cpu := time.Duration(utime+stime) * time.Second / 100 // USER_HZ is 100 on Linux
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	var peak int64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			peak = kb << 10
		}
	}
	return cpu, peak, nil
}

// freePort is a TCP port of the loopback that nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var total int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}
