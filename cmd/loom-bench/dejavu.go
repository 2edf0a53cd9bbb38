package main

// The peer run: a whole `loom search` process against a whole `deja
// search` process (github.com/vshulcz/deja-vu) per question, on the same
// Claude Code session files, in turns.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/loomhq/loom/sqlite"
)

// dejaOptions say how the peer run is made.
type dejaOptions struct {
	deja  string // the deja binary
	loom  string // the loom binary; built from ./cmd/loom when empty
	every int    // every n-th question is asked
	out   string
}

// dejaMain writes each set's conversations as Claude Code session files
// in one directory that both tools read, imports them into a loom store
// (as `loom session import` does) and lets deja index them (its first
// search, untimed), then times each question's search by each tool as a
// whole process, across all projects, the order alternating.
func dejaMain(ctx context.Context, out io.Writer, dir string, sets []*retrievalSet, o dejaOptions) error {
	home, err := os.MkdirTemp(dir, "deja-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	bins, err := buildPrograms(ctx, home, o.loom)
	if err != nil {
		return err
	}
	root := filepath.Join(home, ".claude", "projects")
	pl, err := plantScale(root, "", sets)
	if err != nil {
		return err
	}
	db := filepath.Join(home, "loom.db")
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		return err
	}
	err = importRetrieval(ctx, st, root, pl.names, map[string]string{})
	if err == nil {
		err = st.MergeIndex(ctx)
	}
	st.Close()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "HOME="+home, "LOOM_DB="+db, "LOOM_USER=bench", "LOOM_HOME="+filepath.Join(home, "loom"), "NO_COLOR=1",
		"DEJA_CLAUDE_ROOT="+root, "DEJA_INDEX_DIR="+filepath.Join(home, "deja-index.db"), "DEJA_EMBED_URL=")
	run := func(bin string, args ...string) (procRun, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env, cmd.Dir = env, home
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		t0 := time.Now()
		err := cmd.Run()
		wall := time.Since(t0)
		if err != nil {
			return procRun{}, fmt.Errorf("%s %s: %v: %.300s", filepath.Base(bin), strings.Join(args, " "), err, b.Bytes())
		}
		return usageOf(cmd.ProcessState, wall), nil
	}
	loomArgs := func(q string) []string { return []string{"search", "--all-projects", "--limit", "20", "--", q} }
	dejaArgs := func(q string) []string { return []string{"search", "--no-embed", "--limit", "20", "--", q} }
	// deja indexes on its first search; loom's store is imported. Neither
	// first run is timed.
	if _, err := run(o.deja, dejaArgs("warm up")...); err != nil {
		return err
	}
	if _, err := run(bins["loom"], loomArgs("warm up")...); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Whole processes per question, across all projects (`loom search --all-projects --limit 20` and `deja search --no-embed --limit 20`), one store of %s; the order alternating by question; %d cores, %s.\n\n",
		pl.describe(), runtime.NumCPU(), runtime.Version())
	fmt.Fprintln(&b, "| benchmark | questions | loom p50 / p99 | deja p50 / p99 | ratio p50 / p99 | CPU p50 loom / deja | load |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|")
	for _, set := range sets {
		var lw, dw, lc, dc []time.Duration
		load0 := load1()
		for n := 0; n < len(set.qs); n += max(o.every, 1) {
			q := set.qs[n].text
			first, second := func() (procRun, error) { return run(bins["loom"], loomArgs(q)...) }, func() (procRun, error) { return run(o.deja, dejaArgs(q)...) }
			if (n/max(o.every, 1))%2 == 1 {
				first, second = second, first
			}
			a, err := first()
			if err != nil {
				return err
			}
			c, err := second()
			if err != nil {
				return err
			}
			if (n/max(o.every, 1))%2 == 1 {
				a, c = c, a
			}
			lw, dw, lc, dc = append(lw, a.wall), append(dw, c.wall), append(lc, a.cpu), append(dc, c.cpu)
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f / %.1f ms | %.1f / %.1f ms | %.2f / %.2f | %.1f / %.1f ms | %s → %s |\n", set.name, len(lw),
			ms(pct(lw, 0.5)), ms(pct(lw, 0.99)), ms(pct(dw, 0.5)), ms(pct(dw, 0.99)),
			float64(pct(lw, 0.5))/float64(pct(dw, 0.5)), float64(pct(lw, 0.99))/float64(pct(dw, 0.99)),
			ms(pct(lc, 0.5)), ms(pct(dc, 0.5)), load0, load1())
		fmt.Fprintf(os.Stderr, "deja: %s timed\n", set.name)
	}
	fmt.Fprint(out, b.String())
	if o.out != "" {
		return os.WriteFile(o.out, []byte(b.String()), 0o644)
	}
	return nil
}
