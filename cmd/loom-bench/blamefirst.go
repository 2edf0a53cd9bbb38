package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loomhq/loom/blame"
)

// blameFirstMain measures the first `loom blame FILE` of one file
// (docs/blame.md, "Speed: one file's first blame") as whole processes,
// wall clock and CPU (the process's and the git processes it waited
// for), beside plain git blame of the file in the same round: each of
// runs rounds times git blame --porcelain, then for each loom binary of
// bins in turn a blame with the file's line-age and answer entries
// removed (the cache directory kept, as it is for any file but the
// first one ever blamed) and one repeat. home is the LOOM_HOME whose
// store holds the sessions (as -blame writes one); each binary gets a
// copy of it, so that a migration one applies does not serve the other.
func blameFirstMain(ctx context.Context, out io.Writer, bins []string, repo, rel, home string, runs int) error {
	if repo == "" || rel == "" || home == "" || len(bins) == 0 || bins[0] == "" {
		return fmt.Errorf("-blame-first needs -blame-repo (a git work tree), -blame-home (a LOOM_HOME whose store holds its sessions) and -loom (one binary or more, by commas)")
	}
	homes := make([]string, len(bins))
	for k := range bins {
		homes[k] = fmt.Sprintf("%s.first-%d", strings.TrimSuffix(home, "/"), k)
		if err := os.RemoveAll(homes[k]); err != nil {
			return err
		}
		if err := exec.CommandContext(ctx, "cp", "-r", home, homes[k]).Run(); err != nil {
			return fmt.Errorf("copy %s: %w", home, err)
		}
	}
	forget := func(home string) error {
		dir := filepath.Join(home, "cache", "blame")
		es, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".ages") || strings.HasSuffix(e.Name(), ".attr") {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
			}
		}
		return nil
	}
	run := func(bin, home string) (dirRun, map[string]int, error) {
		cmd := exec.CommandContext(ctx, bin, "blame", "--json", rel)
		cmd.Dir, cmd.Env = repo, []string{"LOOM_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}
		r, b, err := timed(cmd)
		if err != nil {
			return r, nil, err
		}
		var res blame.Result
		if err := json.Unmarshal(b, &res); err != nil {
			return r, nil, err
		}
		return r, res.Counts(), nil
	}
	// A blame of each first: the store brought up to date, its
	// migrations applied.
	for k, bin := range bins {
		if _, _, err := run(bin, homes[k]); err != nil {
			return err
		}
	}
	loadBefore := loadAverage()
	var git []dirRun
	cold := make([][]dirRun, len(bins))
	repeat := make([][]dirRun, len(bins))
	var counts map[string]int
	for range runs {
		r, _, err := timed(exec.CommandContext(ctx, "git", "-C", repo, "blame", "--porcelain", "--", rel))
		if err != nil {
			return err
		}
		git = append(git, r)
		for k, bin := range bins {
			if err := forget(homes[k]); err != nil {
				return err
			}
			for _, into := range []*[][]dirRun{&cold, &repeat} {
				r, c, err := run(bin, homes[k])
				if err != nil {
					return err
				}
				if counts == nil {
					counts = c
				} else if fmt.Sprint(c) != fmt.Sprint(counts) {
					return fmt.Errorf("%s gave %v, before %v", bin, c, counts)
				}
				(*into)[k] = append((*into)[k], r)
			}
		}
	}
	p50 := func(rs []dirRun) dirRun {
		var w, c []time.Duration
		for _, r := range rs {
			w, c = append(w, r.wall), append(c, r.cpu)
		}
		return dirRun{pct(w, 0.5), pct(c, 0.5)}
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	fmt.Fprintf(out, "first loom blame of %s in %s, %d rounds; load average %s before, %s after\n\n", rel, repo, runs, loadBefore, loadAverage())
	fmt.Fprintf(out, "| | wall p50 | CPU p50 | ÷ git, wall / CPU |\n|---|---|---|---|\n")
	g := p50(git)
	row := func(name string, rs []dirRun) {
		p := p50(rs)
		fmt.Fprintf(out, "| %s | %s | %s | %.2f× / %.2f× |\n", name, ms(p.wall), ms(p.cpu), float64(p.wall)/float64(g.wall), float64(p.cpu)/float64(g.cpu))
	}
	row("git blame --porcelain", git)
	for k, bin := range bins {
		row(bin+" first blame", cold[k])
		row(bin+" repeat", repeat[k])
	}
	fmt.Fprintf(out, "\nlines by kind, every run: %v\n", counts)
	return nil
}
