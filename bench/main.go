// Command bench measures loom's SQLite engine against the budgets of the
// specification on a generated workload, beside a plain hand-written
// SQLite baseline of the same schema run in the same process.
//
//	go run ./bench -sessions 10000 -messages 100 -big 100000
//
// The store is generated once into -db and reused by later runs.
//
//	go run ./bench -load
//	go run ./bench -copy
//
// -load runs 55 writers in two processes on one store, on SQLite and on
// PostgreSQL, and checks that nothing was lost or duplicated; -copy
// copies a 100,000-message SQLite store to PostgreSQL and back with
// loom session export and import and checks that the exports are the
// same.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

type config struct {
	db       string
	sessions int
	messages int
	big      int
	runs     int
	loomBin  string
	out      string
	ops      *regexp.Regexp
}

func main() {
	if spec := os.Getenv(loadWorkerEnv); spec != "" {
		os.Exit(loadWorkerMain(spec))
	}
	if len(os.Args) > 2 && os.Args[1] == "baseline-list" {
		if err := baselineListProcess(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	var c config
	flag.StringVar(&c.db, "db", filepath.Join(os.TempDir(), "loom-bench", "sessions.db"), "store to generate (once) and measure")
	flag.IntVar(&c.sessions, "sessions", 10000, "number of ordinary sessions")
	flag.IntVar(&c.messages, "messages", 100, "messages per ordinary session")
	flag.IntVar(&c.big, "big", 100000, "messages in the one big session")
	flag.IntVar(&c.runs, "runs", 200, "repetitions of each fast operation")
	flag.StringVar(&c.loomBin, "loom", "", "loom binary for the whole-process list figure (built from ./cmd/loom when empty)")
	flag.StringVar(&c.out, "o", "", "also write the report (Markdown) to this file")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measurements to this file")
	ops := flag.String("ops", "", "measure only the operations whose names match this regular expression")
	load := flag.Bool("load", false, "instead: run the load (writers in two processes on one store) on SQLite and PostgreSQL")
	loadMessages := flag.Int("load-messages", 100000, "messages the load writes in all")
	copyStores := flag.Bool("copy", false, "instead: copy a generated SQLite store to PostgreSQL and back with loom session export and import")
	copyMessages := flag.Int("copy-messages", 100000, "messages in the store -copy copies")
	pg := flag.String("postgres", defaultPostgres, "PostgreSQL server for -load and -copy (a schema is made and dropped); empty for SQLite only")
	flag.Parse()
	if *load {
		shape := loadShape{Messages: *loadMessages, Distinct: 50, Shared: 5, Procs: 2}
		if err := loadMain(context.Background(), os.Stdout, filepath.Dir(c.db), *pg, shape); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *copyStores {
		if err := copyMain(context.Background(), os.Stdout, filepath.Dir(c.db), *pg, c.loomBin, *copyMessages); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	var err error
	if c.ops, err = regexp.Compile(*ops); err != nil {
		fmt.Fprintln(os.Stderr, "bench: -ops:", err)
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if err := run(context.Background(), c); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	rep := &report{}
	fmt.Fprintf(os.Stderr, "store %s\n", c.db)
	bigID, importRate, err := ensureStore(ctx, c)
	if err != nil {
		return err
	}
	st, err := sqlite.Open(ctx, c.db)
	if err != nil {
		return err
	}
	defer st.Close()
	base, err := openBaseline(c.db)
	if err != nil {
		return err
	}
	defer base.Close()
	var total int
	st.DB().QueryRow(`SELECT count(*) FROM messages`).Scan(&total)
	var nsess int
	st.DB().QueryRow(`SELECT count(*) FROM sessions`).Scan(&nsess)
	rep.scale = fmt.Sprintf("%d messages in %d sessions (one of %d messages); %s, %d cores, %s",
		total, nsess, c.big, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	user := "bench"
	want := func(op string) bool { return c.ops.MatchString(op) }

	// Newest-50 of the big session.
	if want("newest-50") {
		rep.add(measure("newest-50 of the 100,000-message session", "median ≤ 0.5 ms", 0.5, c.runs,
			func() error { _, err := st.Messages(ctx, bigID, loom.MessageQuery{Limit: 50}); return err },
			func() error { return base.newest(ctx, bigID, 50) }))
	}
	// List 50 most recent sessions.
	if want("list the 50") {
		rep.add(measure("list the 50 most recent sessions with counts and last prompt", "≤ 1 ms", 1, c.runs,
			func() error {
				_, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Limit: 50})
				return err
			},
			func() error { return base.list(ctx, user, 50) }))
	}
	// Search.
	if want("search, rare") {
		rep.add(measure("search, rare word, top 20 with snippets", "≤ 5 ms", 5, c.runs,
			func() error {
				h, err := st.Search(ctx, loom.SearchQuery{Text: RareWord, UserID: user, Limit: 20})
				return expectHits(h, err)
			},
			func() error { return base.search(ctx, user, `"`+RareWord+`"`, 20) }))
	}
	if want("search, three") {
		rep.add(measure("search, three common words, top 20 with snippets", "≤ 50 ms", 50, max(c.runs/10, 10),
			func() error {
				h, err := st.Search(ctx, loom.SearchQuery{Text: CommonQuery, UserID: user, Limit: 20})
				return expectHits(h, err)
			},
			func() error { return base.search(ctx, user, sqlite.MatchExpr(CommonQuery), 20) }))
	}
	// Cold open and read.
	if want("open the store") {
		rep.add(measure("open the store cold and read newest-50 of a session", "≤ 2 ms", 2, max(c.runs/4, 20),
			func() error {
				s, err := sqlite.Open(ctx, c.db)
				if err != nil {
					return err
				}
				defer s.Close()
				_, err = s.Messages(ctx, bigID, loom.MessageQuery{Limit: 50})
				return err
			},
			func() error {
				b, err := openBaseline(c.db)
				if err != nil {
					return err
				}
				defer b.Close()
				return b.newest(ctx, bigID, 50)
			}))
	}
	// Durable single-message append.
	if want("durable") {
		if err := measureAppend(ctx, st, base, rep, c.runs); err != nil {
			return err
		}
	}
	// Bulk import.
	if want("bulk import") {
		baseRate, err := baselineImportRate(ctx, filepath.Join(filepath.Dir(c.db), "baseline-import.db"), 100000)
		if err != nil {
			return err
		}
		rate, err := importRateOf(ctx, filepath.Join(filepath.Dir(c.db), "import.db"), 100000)
		if err != nil {
			return err
		}
		rep.addRate("bulk import, search index included", "≥ 25,000 messages/s", 25000, rate, baseRate)
	}
	// Fork of the big session; the forks are purged afterwards, untimed.
	if want("fork") {
		var forks []string
		rep.add(measure("fork of the 100,000-message session", "≤ 1 s", 1000, 3,
			func() error {
				f, err := st.Fork(ctx, bigID, loom.ForkOptions{})
				if err == nil {
					forks = append(forks, f.ID)
				}
				return err
			},
			func() error {
				id, err := base.fork(ctx, bigID)
				forks = append(forks, id)
				return err
			}))
		for _, id := range forks {
			if _, err := st.Delete(ctx, id, loom.DeleteOptions{Purge: true}); err != nil {
				return err
			}
		}
	}
	// Whole-process list.
	if want("whole process") {
		if r, err := processList(ctx, c); err != nil {
			fmt.Fprintln(os.Stderr, "bench: whole-process list:", err)
		} else {
			rep.add(r)
		}
	}
	// Memory while resuming.
	if want("memory") {
		rep.addNote(resumeMemory(ctx, st, bigID, user))
	}
	rep.importNote = fmt.Sprintf("Bulk import is measured on 100,000 generated messages (100 sessions) into a fresh store, the generation untimed; while generating the whole store it ran at %s.", importNoteText(importRate))
	return rep.print(c.out)
}

func measureAppend(ctx context.Context, st *sqlite.Store, base *baseline, rep *report, runs int) error {
	g := newGenerator(42)
	appendSession := &loom.Session{ID: loom.NewID(), UserID: "bench-append", Key: "cli:append:" + loom.NewID()}
	if err := st.Append(ctx, appendSession, textMsg(g.text())); err != nil {
		return err
	}
	baseSession := loom.NewID()
	if err := st.Append(ctx, &loom.Session{ID: baseSession, UserID: "bench-append", Key: "cli:append-base:" + loom.NewID()}, textMsg(g.text())); err != nil {
		return err
	}
	texts := make([]string, 4096)
	for i := range texts {
		texts[i] = g.text()
	}
	i := 0
	rep.add(measureP99("durable single-message append (own transaction, index included)", "median ≤ 0.5 ms, p99 ≤ 5 ms", 0.5, 5, runs*2,
		func() error { i++; return st.Append(ctx, appendSession, textMsg(texts[i%len(texts)])) },
		func() error { i++; return base.append(ctx, baseSession, texts[i%len(texts)]) }))
	return nil
}

// importRateOf imports n generated messages (sessions of 1,000) into a
// fresh store in batches of ten sessions and returns messages per second;
// generating them is not timed.
func importRateOf(ctx context.Context, path string, n int) (float64, error) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	defer os.Remove(path)
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	g := newGenerator(11)
	var batches [][]*loom.SessionData
	var batch []*loom.SessionData
	for i := 0; i < n/1000; i++ {
		batch = append(batch, g.session("bench", 1000, loom.Project{ID: "1", Name: "p", Root: "/p"}))
		if len(batch) == 10 {
			batches = append(batches, batch)
			batch = nil
		}
	}
	if len(batch) > 0 {
		batches = append(batches, batch)
	}
	runtime.GC()
	t0 := time.Now()
	for _, b := range batches {
		if err := st.Import(ctx, b); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

func expectHits(h []loom.SearchHit, err error) error {
	if err == nil && len(h) == 0 {
		return fmt.Errorf("search found nothing")
	}
	return err
}

func textMsg(s string) *loom.Message {
	return &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: s}}}
}

func importNoteText(rate float64) string {
	if rate == 0 {
		return "the store already existed: no import figure this run"
	}
	return fmt.Sprintf("%.0f messages/s", rate)
}

// ensureStore generates the workload into c.db unless it is already
// there, and returns the big session's id and the import rate.
func ensureStore(ctx context.Context, c config) (string, float64, error) {
	if _, err := os.Stat(c.db); err == nil {
		st, err := sqlite.Open(ctx, c.db)
		if err != nil {
			return "", 0, err
		}
		defer st.Close()
		var id string
		if err := st.DB().QueryRowContext(ctx, `SELECT id FROM sessions WHERE message_count = ? AND kind = 'main' LIMIT 1`, c.big).Scan(&id); err != nil {
			return "", 0, fmt.Errorf("%s exists but holds no %d-message session; remove it to regenerate", c.db, c.big)
		}
		return id, 0, nil
	}
	st, err := sqlite.Open(ctx, c.db)
	if err != nil {
		return "", 0, err
	}
	defer st.Close()
	g := newGenerator(1)
	projects := make([]loom.Project, 50)
	for i := range projects {
		name := fmt.Sprintf("project%02d", i)
		projects[i] = loom.Project{ID: fmt.Sprintf("%016x", i+1), Name: name, Root: "/src/" + name}
	}
	var imported int
	var spent time.Duration
	doImport := func(batch []*loom.SessionData) error {
		n := 0
		for _, d := range batch {
			n += len(d.Messages)
		}
		t0 := time.Now()
		if err := st.Import(ctx, batch); err != nil {
			return err
		}
		spent += time.Since(t0)
		imported += n
		return nil
	}
	big := g.session("bench", c.big, projects[0])
	if err := doImport([]*loom.SessionData{big}); err != nil {
		return "", 0, err
	}
	var batch []*loom.SessionData
	for i := 0; i < c.sessions; i++ {
		batch = append(batch, g.session("bench", c.messages, projects[i%len(projects)]))
		if len(batch) == 100 || i == c.sessions-1 {
			if err := doImport(batch); err != nil {
				return "", 0, err
			}
			batch = nil
			fmt.Fprintf(os.Stderr, "\rgenerated %d sessions", i+1)
		}
	}
	fmt.Fprintln(os.Stderr)
	if _, err := st.DB().ExecContext(ctx, `ANALYZE`); err != nil {
		return "", 0, err
	}
	return big.Session.ID, float64(imported) / spent.Seconds(), nil
}

// processList times `loom session list --all-projects` as a whole process,
// beside a process that does the same query by hand.
func processList(ctx context.Context, c config) (result, error) {
	bin := c.loomBin
	if bin == "" {
		bin = filepath.Join(filepath.Dir(c.db), "loom")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/loom")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return result{}, fmt.Errorf("build loom: %w", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	env := append(os.Environ(), "LOOM_DB="+c.db, "LOOM_USER=bench", "LOOM_HOME="+filepath.Dir(c.db))
	runs := 30
	return measure("`loom session list` as a whole process", "≤ 50 ms", 50, runs,
		func() error {
			cmd := exec.CommandContext(ctx, bin, "session", "list", "--all-projects")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		},
		func() error {
			cmd := exec.CommandContext(ctx, self, "baseline-list", c.db)
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}), nil
}

// resumeMemory measures the memory allocated while resuming a small and
// the big session: reading the session, its newest 10 messages for
// display, and repairing interrupted tool calls.
func resumeMemory(ctx context.Context, st *sqlite.Store, bigID, user string) string {
	var small string
	st.DB().QueryRowContext(ctx, `SELECT id FROM sessions WHERE user_id = ? AND message_count < 1000 LIMIT 1`, user).Scan(&small)
	alloc := func(id string) uint64 {
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		lease, err := st.Lock(ctx, id)
		if err == nil {
			st.Session(ctx, id)
			st.Messages(ctx, id, loom.MessageQuery{Limit: 10})
			st.RepairInterrupted(ctx, id)
			lease.Release(ctx)
		}
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	alloc(small)
	s, b := alloc(small), alloc(bigID)
	return fmt.Sprintf("Memory while resuming (session, newest 10 messages, repair): %d-message session %.1f KiB allocated, 100,000-message session %.1f KiB allocated.",
		100, float64(s)/1024, float64(b)/1024)
}

type result struct {
	op, budget      string
	limit, limitP99 float64 // ms
	loom, base      []time.Duration
	note            string
	rate, baseRate  float64
	isRate          bool
}

func measure(op, budget string, limitMS float64, runs int, loomFn, baseFn func() error) result {
	r := result{op: op, budget: budget, limit: limitMS}
	// Warm up both once, then alternate so that neither gets a warmer
	// cache than the other.
	if err := loomFn(); err != nil {
		r.note = "error: " + err.Error()
		return r
	}
	if err := baseFn(); err != nil {
		r.note = "baseline error: " + err.Error()
		return r
	}
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		if err := loomFn(); err != nil {
			r.note = "error: " + err.Error()
			return r
		}
		r.loom = append(r.loom, time.Since(t0))
		t0 = time.Now()
		if err := baseFn(); err != nil {
			r.note = "baseline error: " + err.Error()
			return r
		}
		r.base = append(r.base, time.Since(t0))
	}
	fmt.Fprintf(os.Stderr, "measured %s\n", op)
	return r
}

func measureP99(op, budget string, medianMS, p99MS float64, runs int, loomFn, baseFn func() error) result {
	r := measure(op, budget, medianMS, runs, loomFn, baseFn)
	r.limitP99 = p99MS
	return r
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type report struct {
	scale      string
	rows       []result
	notes      []string
	importNote string
}

func (r *report) add(x result)     { r.rows = append(r.rows, x) }
func (r *report) addNote(n string) { r.notes = append(r.notes, n) }
func (r *report) addRate(op, budget string, limit, rate, baseRate float64) {
	r.rows = append(r.rows, result{op: op, budget: budget, limit: limit, rate: rate, baseRate: baseRate, isRate: true})
}

func (r *report) print(file string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Scale: %s.\n\n", r.scale)
	fmt.Fprintln(&b, "| operation | budget | loom | baseline | ratio | |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|")
	for _, x := range r.rows {
		switch {
		case x.note != "" && len(x.loom) == 0:
			fmt.Fprintf(&b, "| %s | %s | %s | | | |\n", x.op, x.budget, x.note)
		case x.isRate:
			verdict := "met"
			if x.rate == 0 {
				verdict = "not measured"
			} else if x.rate < x.limit {
				verdict = "**missed**"
			}
			ratio := ""
			if x.rate > 0 {
				ratio = fmt.Sprintf("%.2f× (higher is better)", x.rate/x.baseRate)
			}
			fmt.Fprintf(&b, "| %s | %s | %.0f msg/s | %.0f msg/s | %s | %s |\n", x.op, x.budget, x.rate, x.baseRate, ratio, verdict)
		default:
			med, bmed := pct(x.loom, 0.5), pct(x.base, 0.5)
			fig := fmt.Sprintf("median %.3f ms", ms(med))
			bfig := fmt.Sprintf("median %.3f ms", ms(bmed))
			ok := ms(med) <= x.limit
			if x.limitP99 > 0 {
				p99, bp99 := pct(x.loom, 0.99), pct(x.base, 0.99)
				fig += fmt.Sprintf(", p99 %.3f ms", ms(p99))
				bfig += fmt.Sprintf(", p99 %.3f ms", ms(bp99))
				ok = ok && ms(p99) <= x.limitP99
			}
			verdict := "met"
			if !ok {
				verdict = "**missed**"
			}
			if x.note != "" {
				verdict += " (" + x.note + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f× | %s |\n", x.op, x.budget, fig, bfig, float64(med)/float64(max(bmed, 1)), verdict)
		}
	}
	fmt.Fprintln(&b)
	for _, n := range append(r.notes, r.importNote) {
		fmt.Fprintln(&b, n)
	}
	fmt.Print(b.String())
	if file != "" {
		return os.WriteFile(file, []byte(b.String()), 0o644)
	}
	return nil
}
