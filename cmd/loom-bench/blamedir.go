package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom/blame"
)

// dirRun is one whole process's time: its wall clock and its CPU (its
// own and that of the processes it waited for, git's).
type dirRun struct{ wall, cpu time.Duration }

// timed runs cmd and times it, its standard output kept.
func timed(cmd *exec.Cmd) (dirRun, []byte, error) {
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return dirRun{}, nil, fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return dirRun{d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, []byte(stdout.String()), nil
}

// blameDirMain measures `loom blame summary DIR` of the work tree repo
// as whole processes beside git's own blame of the same files in the
// same run (docs/performance.md, "loom blame summary of a
// directory"): each of runs rounds times, in turn, `git blame
// --porcelain` of each file one after another (one git blame a file:
// the floor), the same on every core at once, then for each loom
// binary of bins a summary with its line-age cache deleted (the first)
// and one repeat. home is the HOME of the loom processes, whose store
// holds the sessions (imported beforehand; or a LOOM_HOME, as -blame
// writes one, when it holds data/sessions.db).
//
// With pr (BASE..HEAD) given, it measures `loom blame pr pr` instead
// (docs/blame.md, "Speed"), beside git's blame at HEAD of the files
// the range added or changed.
func blameDirMain(ctx context.Context, out io.Writer, bins []string, repo, dir, pr, home string, runs int) error {
	if repo == "" || home == "" || len(bins) == 0 || bins[0] == "" {
		return fmt.Errorf("-blame-dir and -blame-pr need -blame-repo (a git work tree), -blame-home (the HOME whose store holds its sessions) and -loom (one binary or more, by commas)")
	}
	if dir == "" {
		dir = "."
	}
	list := []string{"ls-files", "-z", "--", dir}
	at := []string{}
	if pr != "" {
		base, _, ok := strings.Cut(pr, "..")
		if !ok {
			return fmt.Errorf("-blame-pr %q: want BASE..HEAD", pr)
		}
		mb, err := exec.CommandContext(ctx, "git", "-C", repo, "merge-base", base, "HEAD").Output()
		if err != nil {
			return fmt.Errorf("git merge-base: %w", err)
		}
		list = []string{"diff", "--name-only", "-M", "--diff-filter=AMR", "-z", strings.TrimSpace(string(mb)), "HEAD", "--"}
		at = []string{"HEAD"}
	}
	ls, err := exec.CommandContext(ctx, "git", slices.Concat([]string{"-C", repo}, list)...).Output()
	if err != nil {
		return fmt.Errorf("git %s: %w", list[0], err)
	}
	var files []string
	for _, f := range strings.Split(string(ls), "\x00") {
		if b, err := os.ReadFile(filepath.Join(repo, f)); f != "" && err == nil && !slices.Contains(b[:min(len(b), 8000)], 0) {
			files = append(files, f)
		}
	}
	commits, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-list", "--count", "HEAD").Output()
	if err != nil {
		return fmt.Errorf("git rev-list: %w", err)
	}
	gitBlame := func(f string) (dirRun, error) {
		r, _, err := timed(exec.CommandContext(ctx, "git", slices.Concat([]string{"-C", repo, "blame", "--porcelain"}, at, []string{"--", f})...))
		return r, err
	}
	// gitFiles blames every file with so many git processes at once.
	gitFiles := func(at int) (dirRun, error) {
		var mu sync.Mutex
		var sum dirRun
		var first error
		work := make(chan string)
		var wg sync.WaitGroup
		t0 := time.Now()
		for range at {
			wg.Go(func() {
				for f := range work {
					r, err := gitBlame(f)
					mu.Lock()
					sum.cpu += r.cpu
					if err != nil && first == nil {
						first = err
					}
					mu.Unlock()
				}
			})
		}
		for _, f := range files {
			work <- f
		}
		close(work)
		wg.Wait()
		sum.wall = time.Since(t0)
		return sum, first
	}
	cacheDir := filepath.Join(home, ".cache")
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + cacheDir, "PATH=" + os.Getenv("PATH")}
	caches := []string{filepath.Join(cacheDir, "loom", "blame")}
	if _, err := os.Stat(filepath.Join(home, "data", "sessions.db")); err == nil {
		env = append(env, "LOOM_HOME="+home)
		caches = append(caches, filepath.Join(home, "cache", "blame"))
	}
	summary := func(bin string) (dirRun, string, error) {
		cmd := exec.CommandContext(ctx, bin, "blame", "summary", "--json", dir)
		if pr != "" {
			cmd = exec.CommandContext(ctx, bin, "blame", "pr", "--json", pr)
		}
		cmd.Dir, cmd.Env = repo, env
		r, b, err := timed(cmd)
		if err != nil {
			return dirRun{}, "", err
		}
		if pr != "" {
			var p blame.PR
			if err := json.Unmarshal(b, &p); err != nil {
				return dirRun{}, "", err
			}
			return r, fmt.Sprintf("%d files, %+v, %d sessions", len(p.Files), p.Lines, len(p.Sessions)), nil
		}
		var s blame.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			return dirRun{}, "", err
		}
		return r, fmt.Sprintf("%d files, %+v, %d sessions", s.Files, s.Lines, len(s.Sessions)), nil
	}
	loadBefore := loadAverage()
	var serial, parallel []dirRun
	cold := make([][]dirRun, len(bins))
	repeat := make([][]dirRun, len(bins))
	answers := make([]string, len(bins))
	for round := range runs {
		r, err := gitFiles(1)
		if err != nil {
			return err
		}
		serial = append(serial, r)
		if r, err = gitFiles(runtime.NumCPU()); err != nil {
			return err
		}
		parallel = append(parallel, r)
		for k, bin := range bins {
			for _, c := range caches {
				if err := os.RemoveAll(c); err != nil {
					return err
				}
			}
			for i, into := range []*[][]dirRun{&cold, &repeat} {
				r, answer, err := summary(bin)
				if err != nil {
					return err
				}
				(*into)[k] = append((*into)[k], r)
				if round == 0 && i == 0 {
					answers[k] = answer
				} else if answer != answers[k] {
					return fmt.Errorf("%s gave %s, at first %s", bin, answer, answers[k])
				}
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
	ms := func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
	what := "summary " + dir
	if pr != "" {
		what = "pr " + pr
	}
	fmt.Fprintf(out, "loom blame %s: %d files of text in %s (%s commits), %d rounds; load average %s before, %s after; %d cores\n\n",
		what, len(files), repo, strings.TrimSpace(string(commits)), runs, loadBefore, loadAverage(), runtime.NumCPU())
	fmt.Fprintf(out, "| | wall p50 | wall range | CPU p50 | wall p50 ÷ git blame a file after another |\n|---|---|---|---|---|\n")
	floor := p50(serial).wall
	row := func(name string, rs []dirRun) {
		walls := make([]time.Duration, len(rs))
		for i, r := range rs {
			walls[i] = r.wall
		}
		p := p50(rs)
		fmt.Fprintf(out, "| %s | %s | %s–%s | %s | %.2f× |\n", name, ms(p.wall), ms(slices.Min(walls)), ms(slices.Max(walls)), ms(p.cpu), float64(p.wall)/float64(floor))
	}
	row("git blame --porcelain, a file after another", serial)
	row(fmt.Sprintf("git blame --porcelain, %d at once", runtime.NumCPU()), parallel)
	for k, bin := range bins {
		row(bin+" cold (cache deleted)", cold[k])
		row(bin+" repeat", repeat[k])
	}
	fmt.Fprintln(out)
	for k, bin := range bins {
		fmt.Fprintf(out, "%s: %s\n", bin, answers[k])
	}
	return nil
}
