package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/sqlite"
)

// secretsMain measures `loom secrets scan --full` as a whole process on
// a SQLite store of n messages (secrets.db in dir, generated once, out
// of the timing, and reused): sessions of 100 messages of secretstest's
// workload, a third prompts, a third replies of 600 bytes, a third tool
// calls whose output is 2 KB of this repository's code, one message in
// fifty with a fake secret. The baseline is the least any scan does:
// one query reading every message's stored parts and text, in this
// process. SPEC's budget: a million messages in under 60 s.
func secretsMain(ctx context.Context, out, dir string, n, runs int, loomBin string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "secrets.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	if err := secretsFill(ctx, st, n); err != nil {
		st.Close()
		return err
	}
	total, err := number(st.DB().QueryRowContext(ctx, `SELECT count(*) FROM messages`))
	st.Close()
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "loom-bench-secrets-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if loomBin == "" {
		loomBin = filepath.Join(home, "loom")
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", loomBin, "./cmd/loom")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build loom: %w", err)
		}
	}
	var scans, bases []time.Duration
	var cpus []time.Duration
	for run := -1; run < runs; run++ {
		// The scan: the built binary, every message read (--full).
		cmd := exec.CommandContext(ctx, loomBin, "secrets", "scan", "--full", "--json")
		cmd.Env = append(os.Environ(), "LOOM_HOME="+home, "LOOM_DB="+path, "LOOM_USER=bench")
		t0 := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("loom secrets scan: %v: %.300s", err, b)
		}
		took := time.Since(t0)
		ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		// The baseline: read what a scan must read.
		t1 := time.Now()
		if err := secretsBaseline(ctx, path); err != nil {
			return err
		}
		base := time.Since(t1)
		if run < 0 {
			continue // the first run warms the page cache
		}
		scans, bases = append(scans, took), append(bases, base)
		if ru != nil {
			cpus = append(cpus, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
		}
	}
	rep := &report{}
	r := result{op: fmt.Sprintf("loom secrets scan --full, %d messages (whole process)", total), budget: "≤ 60 s for 1,000,000", limit: 60000, loom: scans, base: bases}
	rep.add(r)
	if len(cpus) > 0 {
		c := pct(cpus, 50)
		rep.addNote(fmt.Sprintf("CPU time of the scan's process (user + system), median: %s on %d cores: %.0f messages a second of CPU.",
			c.Round(time.Millisecond), runtime.NumCPU(), float64(total)/c.Seconds()))
	}
	rep.addNote("The baseline reads every message's stored parts and text (SELECT parts, content FROM bodies) in one query, in this process: the least a scan of every message reads, with no detection.")
	rep.scale = fmt.Sprintf("SQLite %d messages in sessions of 100, one in fifty with a fake secret; %s, %d cores, %s", total, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	return rep.print(out)
}

// secretsFill generates n messages into st unless it holds some already.
func secretsFill(ctx context.Context, st *sqlite.Store, n int) error {
	have, err := number(st.DB().QueryRowContext(ctx, `SELECT count(*) FROM messages`))
	if err != nil || have > 0 {
		return err
	}
	w, err := secretstest.NewWorkload("*.go", 9)
	if err != nil {
		return fmt.Errorf("%w (run loom-bench from the repository's root: the workload is its code)", err)
	}
	fmt.Fprintf(os.Stderr, "generating %d messages into %s …\n", n, st.Path())
	const per = 100
	start := time.Now().Add(-time.Duration(n) * time.Second)
	var batch []*loom.SessionData
	for k := 0; k < n; k += per {
		s := &loom.Session{ID: loom.NewID(), Key: fmt.Sprintf("cli:bench:%d", k/per), UserID: "bench", Surface: "cli", Title: fmt.Sprintf("session %d", k/per),
			CreatedAt: start.Add(time.Duration(k) * time.Second)}
		s.Project = loom.Project{ID: "benchproject0000", Name: "bench", Root: "/bench"}
		var msgs []*loom.Message
		for i := k; i < min(n, k+per); i++ {
			m := w.Message(i - k)
			m.SessionID, m.CreatedAt = s.ID, start.Add(time.Duration(i)*time.Second)
			msgs = append(msgs, m)
		}
		s.UpdatedAt = msgs[len(msgs)-1].CreatedAt
		batch = append(batch, &loom.SessionData{Session: s, Messages: msgs})
		if len(batch) == 50 {
			if err := st.Import(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		return st.Import(ctx, batch)
	}
	return nil
}

// secretsBaseline reads every body's parts and text.
func secretsBaseline(ctx context.Context, path string) error {
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	rows, err := st.DB().QueryContext(ctx, `SELECT parts, content FROM bodies`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var parts, content []byte
	for rows.Next() {
		if err := rows.Scan(&parts, &content); err != nil {
			return err
		}
	}
	return rows.Err()
}
