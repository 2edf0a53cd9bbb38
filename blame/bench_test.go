package blame

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sqlite"
)

// The benchmark's workload (docs/performance.md, "loom blame"): a
// repository of 10,000 commits in which big.go grows to 5,000 lines over
// 200 of them (the others change 50 other files), and a store of
// 100,000 sessions, of which the 200 that wrote big.go's lines and 1,800
// that wrote the other files worked in the repository; the rest worked
// elsewhere. Each session is a prompt and a reply with one edit call.
const (
	benchCommits  = 10_000
	benchBigEdits = 200
	benchLinesPer = 25
	benchSessions = 100_000
	benchRepoOnes = 2_000
)

type benchWorld struct {
	dir, rel string
	st       *sqlite.Store
}

var (
	benchOnce sync.Once
	benchW    *benchWorld
	benchErr  error
)

// benchLine is line i of big.go, as the session that wrote it wrote it.
func benchLine(i int) string {
	return fmt.Sprintf("\tvalue%05d := compute(%d, \"entry %d of the generated file\") // %x", i, i, i, i*7919)
}

func benchWorkload(b *testing.B) *benchWorld {
	benchOnce.Do(func() { benchW, benchErr = makeBenchWorld(b.TempDir()) })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchW
}

func makeBenchWorld(tmp string) (*benchWorld, error) {
	ctx := context.Background()
	dir := filepath.Join(tmp, "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &benchWorld{dir: dir, rel: "big.go"}
	if out, err := exec.Command("git", "-C", dir, "init", "-q", "-b", "main").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git init: %v: %s", err, out)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(c int) time.Time { return start.Add(time.Duration(c) * time.Minute) }
	// Commit c changes big.go when c % 50 == 0 (200 times), else other
	// file c % 50.
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(in, 1<<20)
	var big strings.Builder
	big.WriteString("package big\n")
	bigEdits := 0
	for c := 0; c < benchCommits; c++ {
		path, content := "", ""
		if c%(benchCommits/benchBigEdits) == 0 && bigEdits < benchBigEdits {
			for k := range benchLinesPer {
				big.WriteString(benchLine(bigEdits*benchLinesPer+k) + "\n")
			}
			bigEdits++
			path, content = "big.go", big.String()
		} else {
			path, content = fmt.Sprintf("pkg/f%02d.go", c%50), fmt.Sprintf("package pkg\n\nconst V%d = %d\n", c%50, c)
		}
		t := at(c).Unix()
		fmt.Fprintf(bw, "commit refs/heads/main\ncommitter Dev <dev@example.com> %d +0000\ndata %d\n%s\n", t, len(fmt.Sprint("c", c)), fmt.Sprint("c", c))
		fmt.Fprintf(bw, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
	}
	if err := bw.Flush(); err != nil {
		cmd.Wait()
		return nil, fmt.Errorf("git fast-import: %v: %s", err, stderr.String())
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("git fast-import: %w: %s", err, stderr.String())
	}
	if out, err := exec.Command("git", "-C", dir, "checkout", "-q", "main").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git checkout: %v: %s", err, out)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		w.dir = real
	}
	st, err := sqlite.Open(ctx, filepath.Join(tmp, "sessions.db"))
	if err != nil {
		return nil, err
	}
	w.st = st
	proj, err := paths.DetectProject(w.dir)
	if err != nil {
		return nil, err
	}
	var batch []*loom.SessionData
	bigSession := 0
	for i := 0; i < benchSessions; i++ {
		s := &loom.Session{ID: loom.NewID(), UserID: "local", Source: &loom.Source{Tool: "claude-code"}, Model: "m"}
		var path, content string
		var when time.Time
		switch {
		case i%(benchSessions/benchRepoOnes) == 0 && bigSession < benchBigEdits && i/(benchSessions/benchRepoOnes)%10 == 0:
			// One of big.go's writers: its lines, before their commit.
			c := bigSession * (benchCommits / benchBigEdits)
			var lines []string
			for k := range benchLinesPer {
				lines = append(lines, benchLine(bigSession*benchLinesPer+k))
			}
			old := "package big"
			if bigSession > 0 {
				old = benchLine(bigSession*benchLinesPer - 1)
			}
			in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(w.dir, "big.go"), "old_string": old, "new_string": old + "\n" + strings.Join(lines, "\n")})
			content, path, when = string(in), "Edit", at(c).Add(-30*time.Second)
			bigSession++
			s.Project, s.Cwd = proj, w.dir
		case i%(benchSessions/benchRepoOnes) == 0:
			in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(w.dir, fmt.Sprintf("pkg/f%02d.go", i%50)), "content": fmt.Sprintf("package pkg\n\nconst V%d = %d\n", i%50, i)})
			content, path, when = string(in), "Write", at(i%benchCommits).Add(-30*time.Second)
			s.Project, s.Cwd = proj, w.dir
		default:
			elsewhere := fmt.Sprintf("/work/other%03d", i%500)
			in, _ := json.Marshal(map[string]string{"file_path": fmt.Sprintf("%s/src/m%d.py", elsewhere, i%97), "content": fmt.Sprintf("x = %d\ny = x * 2\n", i)})
			content, path, when = string(in), "Write", start.Add(time.Duration(i)*time.Second)
			s.Project, s.Cwd = loom.Project{ID: fmt.Sprintf("%016x", i%500), Name: "other", Root: elsewhere}, elsewhere
		}
		s.CreatedAt, s.UpdatedAt = when.Add(-time.Second), when
		msgs := []*loom.Message{
			{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: when.Add(-time.Second), Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "change it"}}},
			{ID: loom.NewID(), Seq: 2, Role: loom.RoleAssistant, Model: "m", CreatedAt: when, Parts: []loom.Part{
				{ID: loom.NewID(), Type: loom.PartTool, CallID: "c", Name: path, Status: loom.ToolCompleted, Input: json.RawMessage(content), Output: json.RawMessage(`"ok"`)}}},
		}
		batch = append(batch, &loom.SessionData{Session: s, Messages: msgs})
		if len(batch) == 2000 || i == benchSessions-1 {
			if err := st.Import(ctx, batch); err != nil {
				return nil, err
			}
			batch = nil
		}
	}
	if bigSession != benchBigEdits {
		return nil, fmt.Errorf("%d sessions wrote big.go, want %d", bigSession, benchBigEdits)
	}
	if _, err := fileedit.Index(ctx, st); err != nil {
		return nil, err
	}
	return w, nil
}

// BenchmarkBlame: loom blame of the 5,000-line file (the edit index up
// to date), beside plain git blame of it; each reports its median. A
// loom blame is a fresh Blamer each time, as a loom process is: cold,
// with an empty line-age cache (git blames the whole history, and the
// entry is written); warm, with the entry of HEAD (no git blame); warm
// with the file changed and not committed (git blame of the work tree's
// changes since HEAD); and 50 commits after the entry's, one of which
// changed the file (git blame of those 50).
func BenchmarkBlame(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a repository of 10,000 commits and a store of 100,000 sessions")
	}
	w := benchWorkload(b)
	ctx := context.Background()
	file := filepath.Join(w.dir, w.rel)
	median := func(b *testing.B, before, run func()) {
		var ds []time.Duration
		for b.Loop() {
			if before != nil {
				b.StopTimer()
				before()
				b.StartTimer()
			}
			t0 := time.Now()
			run()
			ds = append(ds, time.Since(t0))
		}
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	}
	// blame blames big.go with the cache in dir; agents is how many of
	// its lines must be found an agent's.
	blame := func(b *testing.B, cache string, agents int) *Result {
		bl := &Blamer{Store: w.st, Roots: w.st, Versions: w.st, UserID: "local", Cache: cache}
		res, err := bl.File(ctx, file, "")
		if err != nil {
			b.Fatal(err)
		}
		if c := res.Counts(); c[Agent] != agents || len(res.Lines) != benchBigEdits*benchLinesPer+1 {
			b.Fatalf("lines by kind %v of %d", c, len(res.Lines))
		}
		return res
	}
	all := benchBigEdits * benchLinesPer
	gitBlame := func(args ...string) func(b *testing.B) {
		return func(b *testing.B) {
			median(b, nil, func() {
				if out, err := exec.Command("git", append([]string{"-C", w.dir, "blame", "--porcelain"}, append(args, "--", w.rel)...)...).CombinedOutput(); err != nil {
					b.Fatalf("git blame: %v: %s", err, out)
				}
			})
		}
	}
	git := func(b *testing.B, args ...string) {
		if out, err := exec.Command("git", append([]string{"-C", w.dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v: %s", args[0], err, out)
		}
	}
	b.Run("git-blame", gitBlame())
	b.Run("git-blame-wM", gitBlame("-w", "-M"))
	b.Run("loom-cold", func(b *testing.B) {
		var cache string
		median(b, func() { cache = b.TempDir() }, func() { blame(b, cache, all) })
	})
	warm := b.TempDir()
	b.Run("loom-warm", func(b *testing.B) {
		cold, _ := json.Marshal(blame(b, warm, all))
		if again, _ := json.Marshal(blame(b, warm, all)); string(again) != string(cold) {
			b.Fatal("the warm blame differs from the cold one")
		}
		median(b, nil, func() { blame(b, warm, all) })
	})
	b.Run("loom-warm-changed", func(b *testing.B) {
		orig, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		defer os.WriteFile(file, orig, 0o644)
		changed := strings.Replace(string(orig), "value02500 :=", "value02500 = ", 1)
		if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
			b.Fatal(err)
		}
		median(b, nil, func() { blame(b, warm, all-1) })
	})
	b.Run("loom-since-50", func(b *testing.B) {
		// The entry of big.go 50 commits before HEAD (one of them
		// changed it), put back before each blame.
		since := b.TempDir()
		git(b, "checkout", "-q", "main~50")
		bl := &Blamer{Store: w.st, Roots: w.st, Versions: w.st, UserID: "local", Cache: since}
		_, err := bl.File(ctx, file, "")
		git(b, "checkout", "-q", "main")
		if err != nil {
			b.Fatal(err)
		}
		des, err := os.ReadDir(since)
		if err != nil || len(des) != 1 {
			b.Fatalf("cache of %d entries: %v", len(des), err)
		}
		name := filepath.Join(since, des[0].Name())
		entry, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		median(b, func() { os.WriteFile(name, entry, 0o600) }, func() { blame(b, since, all) })
	})
	if os.Getenv("LOOM_BENCH_COMMIT_GRAPH") != "" {
		// What git maintenance (and a clone with fetch.writeCommitGraph)
		// keeps: the commit graph with its changed-path filters.
		git(b, "commit-graph", "write", "--reachable", "--changed-paths")
		b.Run("loom-cold-commit-graph", func(b *testing.B) {
			var cache string
			median(b, func() { cache = b.TempDir() }, func() { blame(b, cache, all) })
		})
		b.Run("git-blame-commit-graph", gitBlame())
	}
}
