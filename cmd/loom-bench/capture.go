package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/loomhq/loom/capture"
	"github.com/loomhq/loom/internal/agentfiles"
	"github.com/loomhq/loom/sqlite"
)

// captureMain measures capture's latency: `loom capture run` runs as its
// own process over a home directory of its own, and n sessions of Claude
// Code, Codex and Gemini CLI (copies of the sample files, each with ids
// of its own) are written into the agents' directories one at a time, a
// random gap of up to twice gap apart; each one's latency is from the
// end of its writing to the store's record of its import (the time the
// import's transaction stamped it with). Beside it, in this process, the
// minimal baseline: a file notification watcher on the same
// directories, the least a capture must wait for, timed from the same
// writes to its notification.
func captureMain(ctx context.Context, w io.Writer, dir, loomBin, samplesDir string, n int, gap time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bins, err := buildPrograms(ctx, dir, loomBin)
	if err != nil {
		return err
	}
	home := filepath.Join(dir, "capture-home")
	if err := os.RemoveAll(home); err != nil {
		return err
	}
	dirs := map[string]string{
		"claude-code": filepath.Join(home, ".claude", "projects"),
		"codex":       filepath.Join(home, ".codex", "sessions"),
		"gemini":      filepath.Join(home, ".gemini", "tmp", "bench", "chats"),
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	samples := map[string][]byte{}
	for agent, name := range map[string]string{"claude-code": "claude-code/spotter/short.jsonl", "codex": "codex/vibecodingtracker-codex.jsonl", "gemini": "gemini/vibecodingtracker-gemini.jsonl"} {
		if samples[agent], err = os.ReadFile(filepath.Join(samplesDir, name)); err != nil {
			return err
		}
	}

	// The baseline's watcher, on every directory a write may land in
	// (Codex's dated directories are made by the writes: watched as
	// they appear).
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer watcher.Close()
	var mu sync.Mutex
	notified := map[string]time.Time{}
	var watch func(string)
	watch = func(d string) {
		watcher.Add(d)
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.IsDir() {
				watch(filepath.Join(d, e.Name()))
			}
		}
	}
	for _, d := range dirs {
		watch(d)
	}
	go func() {
		for ev := range watcher.Events {
			at := time.Now()
			if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
				watch(ev.Name)
				continue
			}
			mu.Lock()
			if _, ok := notified[ev.Name]; !ok {
				notified[ev.Name] = at
			}
			mu.Unlock()
		}
	}()

	loomHome := filepath.Join(home, "loom")
	cmd := exec.CommandContext(ctx, bins["loom"], "capture", "run")
	cmd.Env = []string{"HOME=" + home, "LOOM_HOME=" + loomHome, "PATH=" + os.Getenv("PATH")}
	logf, err := os.Create(filepath.Join(dir, "capture-bench.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	state := capture.StatePath(filepath.Join(loomHome, "state"))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if s, _ := capture.ReadState(state); s != nil && s.Runs > 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("loom capture run wrote no state in a minute (see %s)", logf.Name())
		}
	}

	type sample struct {
		agent, path string
		written     time.Time
	}
	var written []sample
	agents := []string{"claude-code", "codex", "gemini"}
	fmt.Fprintf(os.Stderr, "capture: writing %d sessions, about %s apart\n", n, gap)
	for i := range n {
		agent := agents[i%len(agents)]
		seed := fmt.Sprintf("bench-%d", i)
		var p string
		switch agent {
		case "claude-code":
			p, err = agentfiles.ClaudeCode(dirs[agent], "-bench", samples[agent], seed, time.Time{})
		case "codex":
			p, err = agentfiles.Codex(dirs[agent], samples[agent], seed, time.Time{})
		case "gemini":
			p, err = agentfiles.Gemini(dirs[agent], samples[agent], seed, time.Time{})
		}
		if err != nil {
			return err
		}
		written = append(written, sample{agent, p, time.Now()})
		time.Sleep(time.Duration(rand.Int64N(int64(2*gap) + 1)))
	}

	st, err := sqlite.OpenMode(ctx, filepath.Join(loomHome, "data", "sessions.db"), sqlite.ModeRead)
	if err != nil {
		return err
	}
	defer st.Close()
	imported := map[string]time.Time{}
	for deadline := time.Now().Add(5 * time.Minute); len(imported) < len(written); time.Sleep(200 * time.Millisecond) {
		for _, agent := range agents {
			recs, err := st.ImportedFiles(ctx, "local", agent)
			if err != nil {
				return err
			}
			for _, r := range recs {
				imported[r.Path] = r.ImportedAt
			}
		}
		missing := 0
		for _, s := range written {
			if _, ok := imported[s.path]; !ok {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d sessions not captured in 5 minutes (see %s)", missing, len(written), logf.Name())
		}
	}
	var lat, base []time.Duration
	byAgent := map[string][]time.Duration{}
	mu.Lock()
	for _, s := range written {
		d := imported[s.path].Sub(s.written)
		lat = append(lat, d)
		byAgent[s.agent] = append(byAgent[s.agent], d)
		if at, ok := notified[s.path]; ok {
			base = append(base, at.Sub(s.written))
		}
	}
	mu.Unlock()
	ms := func(d time.Duration) string {
		return fmt.Sprintf("%.0f ms", float64(max(d, 0))/float64(time.Millisecond))
	}
	fmt.Fprintf(w, "| capture latency, %d sessions written ~%s apart | p50 | p90 | p99 | max |\n|---|---|---|---|---|\n", len(written), gap)
	fmt.Fprintf(w, "| loom capture run: write → import recorded in the store | %s | %s | %s | %s |\n", ms(pct(lat, 0.5)), ms(pct(lat, 0.9)), ms(pct(lat, 0.99)), ms(pct(lat, 1)))
	for _, a := range agents {
		d := byAgent[a]
		fmt.Fprintf(w, "| … %s (%d) | %s | %s | %s | %s |\n", a, len(d), ms(pct(d, 0.5)), ms(pct(d, 0.9)), ms(pct(d, 0.99)), ms(pct(d, 1)))
	}
	fmt.Fprintf(w, "| baseline: a file notification watcher told of the write (%d) | %s | %s | %s | %s |\n", len(base), ms(pct(base, 0.5)), ms(pct(base, 0.9)), ms(pct(base, 0.99)), ms(pct(base, 1)))
	fmt.Fprintf(w, "\nbudget: p99 ≤ 60 s — %s\n", map[bool]string{true: "met", false: "NOT met"}[pct(lat, 0.99) <= time.Minute])
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "load average at the end: %s\n", strings.TrimSpace(string(load)))
	return nil
}
