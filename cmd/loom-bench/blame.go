package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sqlite"
)

// blameMain measures loom blame of file rel of the work tree repo as
// whole processes, beside plain git blame of the same file in the same
// run (docs/performance.md, "loom blame on a real repository"): for
// each count of editing sessions, a store (generated once under dir)
// of that many sessions that each made one Edit of the file putting in
// the lines one of its commits brought, among others that wrote other
// files of the repository or worked elsewhere. Each of runs rounds
// times, in turn, plain git blame; loom blame cold (its line-age cache
// deleted) with each store; then two repeats with each store.
func blameMain(ctx context.Context, out io.Writer, dir, bin, repo, rel string, editors []int, runs int) error {
	if repo == "" || rel == "" {
		return fmt.Errorf("-blame needs -blame-repo (a git work tree) and -blame-file (a file of it)")
	}
	if real, err := filepath.EvalSymlinks(repo); err == nil {
		repo = real
	}
	work := filepath.Join(dir, "blame")
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	if bin == "" {
		bin = filepath.Join(work, "loom")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/loom")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build loom: %w", err)
		}
	}
	commits, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-list", "--count", "HEAD").Output()
	if err != nil {
		return fmt.Errorf("git rev-list: %w", err)
	}
	homes := make([]string, len(editors))
	stored := make([]int, len(editors))
	totals := make([]int, len(editors))
	for k, n := range editors {
		homes[k] = filepath.Join(work, fmt.Sprintf("%s-%d", strings.NewReplacer("/", "_").Replace(strings.Trim(repo, "/")), n))
		db := filepath.Join(homes[k], "data", "sessions.db")
		total := max(1503, 2*n)
		totals[k] = total
		if _, err := os.Stat(db); err != nil {
			if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "writing a store of %d sessions, %d of which edit %s\n", total, n, rel)
			if stored[k], err = blameStore(ctx, repo, rel, db, total, n); err != nil {
				return err
			}
		}
	}
	file := filepath.Join(repo, filepath.FromSlash(rel))
	timeRun := func(cmd *exec.Cmd) (time.Duration, []byte, error) {
		r, out, err := timed(cmd)
		return r.wall, out, err
	}
	loomBlame := func(home string) (time.Duration, map[string]int, error) {
		cmd := exec.CommandContext(ctx, bin, "blame", "--json", file)
		cmd.Dir, cmd.Env = repo, []string{"LOOM_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}
		d, b, err := timeRun(cmd)
		if err != nil {
			return 0, nil, err
		}
		var res blame.Result
		if err := json.Unmarshal(b, &res); err != nil {
			return 0, nil, err
		}
		return d, res.Counts(), nil
	}
	loadBefore := loadAverage()
	var git []time.Duration
	cold := make([][]time.Duration, len(editors))
	warm := make([][]time.Duration, len(editors))
	counts := make([]map[string]int, len(editors))
	for round := range runs {
		d, _, err := timeRun(exec.CommandContext(ctx, "git", "-C", repo, "blame", "--porcelain", "--", rel))
		if err != nil {
			return err
		}
		git = append(git, d)
		for k, home := range homes {
			if err := os.RemoveAll(filepath.Join(home, "cache")); err != nil {
				return err
			}
			d, c, err := loomBlame(home)
			if err != nil {
				return err
			}
			cold[k] = append(cold[k], d)
			if round == 0 {
				counts[k] = c
			}
		}
		for range 2 {
			for k, home := range homes {
				d, c, err := loomBlame(home)
				if err != nil {
					return err
				}
				if fmt.Sprint(c) != fmt.Sprint(counts[k]) {
					return fmt.Errorf("a repeat with %d editing sessions gave %v, the first blame %v", editors[k], c, counts[k])
				}
				warm[k] = append(warm[k], d)
			}
		}
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
	fmt.Fprintf(out, "loom blame %s (%s lines) in %s (%s commits), %d rounds; load average %s before, %s after\n\n",
		rel, lineCount(file), repo, strings.TrimSpace(string(commits)), runs, loadBefore, loadAverage())
	fmt.Fprintf(out, "| | p50 | range | p50 ÷ plain git blame |\n|---|---|---|---|\n")
	gp := pct(git, 0.5)
	fmt.Fprintf(out, "| plain git blame --porcelain | %s | %s–%s | |\n", ms(gp), ms(slices.Min(git)), ms(slices.Max(git)))
	for k, n := range editors {
		cp, wp := pct(cold[k], 0.5), pct(warm[k], 0.5)
		fmt.Fprintf(out, "| loom cold, %d editing sessions (%d in the store) | %s | %s–%s | %.2f× |\n", n, totals[k], ms(cp), ms(slices.Min(cold[k])), ms(slices.Max(cold[k])), float64(cp)/float64(gp))
		fmt.Fprintf(out, "| loom repeat, %d editing sessions | %s | %s–%s | %.2f× |\n", n, ms(wp), ms(slices.Min(warm[k])), ms(slices.Max(warm[k])), float64(wp)/float64(gp))
	}
	fmt.Fprintln(out)
	for k, n := range editors {
		fmt.Fprintf(out, "%d editing sessions: lines by kind %v\n", n, counts[k])
		if stored[k] > 0 {
			fmt.Fprintf(out, "  (the store was written now: its sessions' edits put in %d of the file's lines)\n", stored[k])
		}
	}
	return nil
}

// loadAverage is the machine's load average over the last minute, five
// and fifteen, "?" where the system does not tell it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

// lineCount is how many lines file has, as text.
func lineCount(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return "?"
	}
	return fmt.Sprint(strings.Count(string(b), "\n"))
}

// blameStore writes the store of the blame benchmark to dbPath: total
// sessions, of which editors each made one Edit of rel that put in the
// lines one of its commits brought (30 s before that commit; when there
// are more editors than runs of lines, more sessions wrote the same
// lines earlier), a third of the rest wrote other files of the
// repository, and the others worked elsewhere. It returns how many of
// the file's lines the edits put in.
func blameStore(ctx context.Context, repo, rel, dbPath string, total, editors int) (int, error) {
	g := blame.Git{Dir: repo}
	lines, err := g.Blame(ctx, "", rel)
	if err != nil {
		return 0, err
	}
	// The runs of lines of each commit, in the file as it is.
	type run struct {
		commit string
		at     time.Time
		from   int
		lines  []string
	}
	var runs []run
	for i, l := range lines {
		if n := len(runs); n > 0 && runs[n-1].commit == l.Commit && runs[n-1].from+len(runs[n-1].lines) == i && len(runs[n-1].lines) < 30 {
			runs[n-1].lines = append(runs[n-1].lines, l.Text)
			continue
		}
		runs = append(runs, run{commit: l.Commit, at: l.Time, from: i, lines: []string{l.Text}})
	}
	// The longest run of each commit, the commits with the longest
	// first, as many as there are editors.
	best := map[string]run{}
	for _, r := range runs {
		if b, ok := best[r.commit]; !ok || len(r.lines) > len(b.lines) {
			best[r.commit] = r
		}
	}
	var picked []run
	for _, r := range best {
		picked = append(picked, r)
	}
	slices.SortFunc(picked, func(a, b run) int { return len(b.lines) - len(a.lines) })
	if len(picked) > editors {
		picked = picked[:editors]
	}
	// Fewer commits than editors: more runs of the same commits (a
	// commit whose lines two sessions wrote).
	for _, r := range runs {
		if len(picked) >= editors {
			break
		}
		if best[r.commit].from != r.from && len(r.lines) >= 2 {
			picked = append(picked, r)
		}
	}
	// Still fewer: sessions that wrote the same lines again, earlier
	// (an hour before the last, each time round), so that the file's
	// lines have more editing sessions than commits.
	for k, n := 1, len(picked); len(picked) < editors && n > 0; k++ {
		for _, r := range picked[:n] {
			if len(picked) >= editors {
				break
			}
			r.at = r.at.Add(-time.Duration(k) * time.Hour)
			picked = append(picked, r)
		}
	}
	othersOut, err := exec.CommandContext(ctx, "git", "-C", repo, "ls-files", "-z").Output()
	if err != nil {
		return 0, err
	}
	var otherFiles []string
	for _, f := range strings.Split(string(othersOut), "\x00") {
		if f != "" && f != rel {
			otherFiles = append(otherFiles, f)
		}
	}
	st, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	proj, err := paths.DetectProject(repo)
	if err != nil {
		return 0, err
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var batch []*loom.SessionData
	for i := range total {
		s := &loom.Session{ID: loom.NewID(), UserID: "local", Source: &loom.Source{Tool: "claude-code"}, Model: "m"}
		var tool, input string
		var when time.Time
		switch {
		case i < len(picked):
			r := picked[i]
			old := ""
			if r.from > 0 {
				old = lines[r.from-1].Text
			}
			in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(repo, rel), "old_string": old, "new_string": old + "\n" + strings.Join(r.lines, "\n")})
			tool, input, when = "Edit", string(in), r.at.Add(-30*time.Second)
			s.Project, s.Cwd = proj, repo
		case i%3 == 0:
			f := otherFiles[i%len(otherFiles)]
			in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(repo, f), "old_string": "#include <ngx_config.h>", "new_string": fmt.Sprintf("#include <ngx_config.h>\n/* note %d of the benchmark */", i)})
			tool, input, when = "Edit", string(in), start.Add(time.Duration(i)*time.Minute)
			s.Project, s.Cwd = proj, repo
		default:
			elsewhere := fmt.Sprintf("/work/other%03d", i%50)
			in, _ := json.Marshal(map[string]string{"file_path": fmt.Sprintf("%s/src/m%d.py", elsewhere, i%97), "content": fmt.Sprintf("x = %d\ny = x * 2\n", i)})
			tool, input, when = "Write", string(in), start.Add(time.Duration(i)*time.Second)
			s.Project, s.Cwd = loom.Project{ID: fmt.Sprintf("%016x", i%50), Name: "other", Root: elsewhere}, elsewhere
		}
		s.CreatedAt, s.UpdatedAt = when.Add(-time.Second), when
		msgs := []*loom.Message{
			{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: when.Add(-time.Second), Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "change it"}}},
			{ID: loom.NewID(), Seq: 2, Role: loom.RoleAssistant, Model: "m", CreatedAt: when, Parts: []loom.Part{
				{ID: loom.NewID(), Type: loom.PartTool, CallID: "c", Name: tool, Status: loom.ToolCompleted, Input: json.RawMessage(input), Output: json.RawMessage(`"ok"`)}}},
		}
		batch = append(batch, &loom.SessionData{Session: s, Messages: msgs})
		if len(batch) == 500 || i == total-1 {
			if err := st.Import(ctx, batch); err != nil {
				return 0, err
			}
			batch = nil
		}
	}
	if _, err := fileedit.Index(ctx, st); err != nil {
		return 0, err
	}
	n, seen := 0, map[int]bool{}
	for _, r := range picked {
		if !seen[r.from] {
			seen[r.from], n = true, n+len(r.lines)
		}
	}
	return n, nil
}
