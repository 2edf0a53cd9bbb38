package main

// The load run: many writers in two processes on one store, through the
// store API, as several loom processes (or servers) sharing one database
// would write. Each engine gets a fresh store; afterwards every session
// is read back and checked message by message.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/sqlite"
)

// loadWorkerEnv, when set, makes the loom-bench binary (or the test binary)
// a worker process of the load run; its value is the worker's job.
const loadWorkerEnv = "LOOM_BENCH_LOAD_WORKER"

// loadShape is how many writers write how much.
type loadShape struct {
	Messages int // in all, about
	Distinct int // writers with a session each
	Shared   int // writers on one shared session
	Procs    int // processes the writers are spread over
}

// perWriter splits the messages: nine tenths to the writers on distinct
// sessions, one tenth to the writers of the shared session.
func (l loadShape) perWriter() (distinct, shared int) {
	distinct = l.Messages * 9 / 10 / l.Distinct
	shared = (l.Messages - distinct*l.Distinct) / l.Shared
	return distinct, shared
}

// loadJob is what one worker process does.
type loadJob struct {
	DB        string   `json:"db"`
	Proc      int      `json:"proc"`
	Sessions  []string `json:"sessions"`   // one writer each
	Shared    string   `json:"shared"`     // the shared session
	Writers   []int    `json:"writers"`    // numbers of this process's shared writers
	PerWriter int      `json:"per_writer"` // messages per distinct-session writer
	PerShared int      `json:"per_shared"` // messages per shared-session writer
}

// loadResult is what a worker reports.
type loadResult struct {
	Latencies []int64 `json:"latencies_us"`
	Errors    int     `json:"errors"`
	FirstErr  string  `json:"first_error,omitempty"`
}

// loadFigures is one engine's outcome.
type loadFigures struct {
	Engine    string
	Messages  int
	Writers   int
	Elapsed   time.Duration
	P50, P99  time.Duration
	Max       time.Duration
	Errors    int
	CheckErr  error
	FirstErr  string
	Processes int
}

func (f loadFigures) rate() float64 { return float64(f.Messages) / f.Elapsed.Seconds() }

// openStore opens a SQLite path or a PostgreSQL URL.
func openStore(ctx context.Context, db string) (loom.Store, error) {
	if postgres.IsURL(db) {
		return postgres.Open(ctx, db)
	}
	return sqlite.Open(ctx, db)
}

// tag names message i of a writer; it starts the message's text.
func tag(proc, writer, i int) string { return fmt.Sprintf("load-p%d-w%d-m%d", proc, writer, i) }

// loadWorkerMain runs one worker process: it opens the store, says
// "ready", waits for a line on standard input, writes, and prints its
// result as JSON.
func loadWorkerMain(spec string) int {
	var job loadJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		fmt.Fprintln(os.Stderr, "load worker:", err)
		return 2
	}
	ctx := context.Background()
	st, err := openStore(ctx, job.DB)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load worker:", err)
		return 1
	}
	defer st.Close()
	type writer struct {
		sess *loom.Session
		msgs []*loom.Message
	}
	// Messages are made before the start, so that only appends are timed.
	var writers []writer
	project := loom.Project{ID: "load", Name: "load", Root: "/load"}
	mk := func(id string, n, w int, seed uint64) writer {
		g := newGenerator(seed)
		wr := writer{sess: &loom.Session{ID: id, UserID: "load", Key: "load:" + id, Project: project}}
		for i := range n {
			role := loom.RoleUser
			if i%2 == 1 {
				role = loom.RoleAssistant
			}
			wr.msgs = append(wr.msgs, &loom.Message{Role: role,
				Parts: []loom.Part{{Type: loom.PartText, Text: tag(job.Proc, w, i) + " " + g.text()}}})
		}
		return wr
	}
	for i, id := range job.Sessions {
		writers = append(writers, mk(id, job.PerWriter, i, uint64(job.Proc*1000+i)))
	}
	for _, w := range job.Writers {
		writers = append(writers, mk(job.Shared, job.PerShared, 1000+w, uint64(job.Proc*1000+500+w)))
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return 1
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		res loadResult
	)
	for _, wr := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]int64, 0, len(wr.msgs))
			var errs int
			var first string
			for _, m := range wr.msgs {
				t0 := time.Now()
				err := st.Append(ctx, wr.sess, m)
				lat = append(lat, time.Since(t0).Microseconds())
				if err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			res.Latencies = append(res.Latencies, lat...)
			res.Errors += errs
			if res.FirstErr == "" {
				res.FirstErr = first
			}
		}()
	}
	wg.Wait()
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return 1
	}
	return 0
}

// runLoad runs the load on the store db (created empty by the caller)
// and checks what was stored.
func runLoad(ctx context.Context, engine, db string, shape loadShape) (loadFigures, error) {
	fig := loadFigures{Engine: engine, Writers: shape.Distinct + shape.Shared, Processes: shape.Procs}
	// Open once first: the schema is created before the workers start.
	st, err := openStore(ctx, db)
	if err != nil {
		return fig, err
	}
	defer st.Close()
	perDistinct, perShared := shape.perWriter()
	sessions := make([]string, shape.Distinct)
	for i := range sessions {
		sessions[i] = loom.NewID()
	}
	shared := loom.NewID()
	exe, err := os.Executable()
	if err != nil {
		return fig, err
	}
	type proc struct {
		cmd   *exec.Cmd
		in    io.WriteCloser
		out   *bufio.Reader
		job   loadJob
		stdrr strings.Builder
	}
	procs := make([]*proc, shape.Procs)
	for p := range procs {
		job := loadJob{DB: db, Proc: p, Shared: shared, PerWriter: perDistinct, PerShared: perShared}
		for i := p; i < shape.Distinct; i += shape.Procs {
			job.Sessions = append(job.Sessions, sessions[i])
		}
		for w := p; w < shape.Shared; w += shape.Procs {
			job.Writers = append(job.Writers, w)
		}
		spec, _ := json.Marshal(job)
		pr := &proc{job: job}
		pr.cmd = exec.CommandContext(ctx, exe)
		pr.cmd.Env = append(os.Environ(), loadWorkerEnv+"="+string(spec))
		pr.cmd.Stderr = &pr.stdrr
		if pr.in, err = pr.cmd.StdinPipe(); err != nil {
			return fig, err
		}
		out, err := pr.cmd.StdoutPipe()
		if err != nil {
			return fig, err
		}
		pr.out = bufio.NewReader(out)
		if err := pr.cmd.Start(); err != nil {
			return fig, err
		}
		defer pr.cmd.Process.Kill()
		procs[p] = pr
	}
	for _, pr := range procs {
		if line, err := pr.out.ReadString('\n'); err != nil || line != "ready\n" {
			pr.cmd.Wait()
			return fig, fmt.Errorf("load worker %d did not start: %q %v %s", pr.job.Proc, line, err, pr.stdrr.String())
		}
	}
	t0 := time.Now()
	for _, pr := range procs {
		io.WriteString(pr.in, "go\n")
	}
	var lat []int64
	for _, pr := range procs {
		var res loadResult
		derr := json.NewDecoder(pr.out).Decode(&res)
		werr := pr.cmd.Wait()
		if derr != nil || werr != nil {
			return fig, fmt.Errorf("load worker %d: %v %v %s", pr.job.Proc, derr, werr, pr.stdrr.String())
		}
		lat = append(lat, res.Latencies...)
		fig.Errors += res.Errors
		if fig.FirstErr == "" {
			fig.FirstErr = res.FirstErr
		}
	}
	fig.Elapsed = time.Since(t0)
	fig.Messages = len(lat)
	slices.Sort(lat)
	if len(lat) > 0 {
		us := func(q float64) time.Duration {
			return time.Duration(lat[min(len(lat)-1, int(q*float64(len(lat))))]) * time.Microsecond
		}
		fig.P50, fig.P99, fig.Max = us(0.5), us(0.99), time.Duration(lat[len(lat)-1])*time.Microsecond
	}
	want := map[string][]string{}
	for _, pr := range procs {
		for i, id := range pr.job.Sessions {
			for m := range pr.job.PerWriter {
				want[id] = append(want[id], tag(pr.job.Proc, i, m))
			}
		}
		for _, w := range pr.job.Writers {
			for m := range pr.job.PerShared {
				want[shared] = append(want[shared], tag(pr.job.Proc, 1000+w, m))
			}
		}
	}
	fig.CheckErr = checkLoad(ctx, st, want)
	return fig, nil
}

// checkLoad reads every session back: each written message is there
// exactly once, seq runs 1..n without a gap, each writer's messages are
// in the order it wrote them, and the session's count agrees.
func checkLoad(ctx context.Context, st loom.Store, want map[string][]string) error {
	for id, tags := range want {
		msgs, err := st.Messages(ctx, id, loom.MessageQuery{})
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		s, err := st.Session(ctx, id)
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		if len(msgs) != len(tags) || s.MessageCount != len(tags) {
			return fmt.Errorf("session %s: %d messages stored, count %d, %d written", id, len(msgs), s.MessageCount, len(tags))
		}
		seen := map[string]bool{}
		last := map[string]int{} // writer → last message number seen
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				return fmt.Errorf("session %s: message %d has seq %d", id, i+1, m.Seq)
			}
			t, _, _ := strings.Cut(m.Text(), " ")
			if seen[t] {
				return fmt.Errorf("session %s: %s stored twice", id, t)
			}
			seen[t] = true
			w, n, ok := strings.Cut(strings.TrimPrefix(t, "load-"), "-m")
			k, err := strconv.Atoi(n)
			if !ok || err != nil {
				return fmt.Errorf("session %s: message %d is not one of the load's: %q", id, m.Seq, t)
			}
			if prev, ok := last[w]; ok && k <= prev {
				return fmt.Errorf("session %s: %s stored after %s-m%d", id, t, w, prev)
			}
			last[w] = k
		}
		for _, t := range tags {
			if !seen[t] {
				return fmt.Errorf("session %s: %s lost", id, t)
			}
		}
	}
	return nil
}

// postgresSchema creates an empty schema on the server at base and
// returns a URL using it and a function that drops it.
func postgresSchema(ctx context.Context, base, prefix string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL at %s: %w", redact(base), err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+name); err != nil {
		conn.Close(ctx)
		return "", nil, err
	}
	drop := func() {
		conn.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`)
		conn.Close(context.Background())
	}
	u, err := schemaURL(base, name)
	if err != nil {
		drop()
		return "", nil, err
	}
	return u, drop, nil
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}

// loadMain runs the load on a fresh SQLite file in dir and on a fresh
// schema of the PostgreSQL server at pg (skipped when pg is empty), and
// prints the figures as a Markdown table.
func loadMain(ctx context.Context, out io.Writer, dir, pg string, shape loadShape) error {
	var figs []loadFigures
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(dir, "load.db")
	removeStore(path)
	defer removeStore(path)
	fmt.Fprintln(os.Stderr, "load: SQLite")
	f, err := runLoad(ctx, "SQLite", path, shape)
	if err != nil {
		return err
	}
	figs = append(figs, f)
	if pg != "" {
		fmt.Fprintln(os.Stderr, "load: PostgreSQL")
		u, drop, err := postgresSchema(ctx, pg, "loombench_")
		if err != nil {
			return err
		}
		f, err := runLoad(ctx, "PostgreSQL", u, shape)
		drop()
		if err != nil {
			return err
		}
		figs = append(figs, f)
	}
	perDistinct, perShared := shape.perWriter()
	fmt.Fprintf(out, "%d writers with a session each (%d messages each) and %d on one shared session (%d each), in %d processes, through the store API:\n\n",
		shape.Distinct, perDistinct, shape.Shared, perShared, shape.Procs)
	fmt.Fprintln(out, "| engine | messages | time | messages/s | append p50 | append p99 | append max | errors | check |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
	failed := false
	for _, f := range figs {
		check := "nothing lost or duplicated, seq gap-free"
		if f.CheckErr != nil {
			check = "FAILED: " + f.CheckErr.Error()
			failed = true
		}
		if f.Errors > 0 {
			check += "; first error: " + f.FirstErr
			failed = true
		}
		fmt.Fprintf(out, "| %s | %d | %.1f s | %.0f | %s | %s | %s | %d | %s |\n", f.Engine, f.Messages, f.Elapsed.Seconds(), f.rate(),
			fmtDur(f.P50), fmtDur(f.P99), fmtDur(f.Max), f.Errors, check)
	}
	if failed {
		return fmt.Errorf("the load run lost, duplicated or failed writes")
	}
	return nil
}

func fmtDur(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000)
}

// defaultPostgres is the local test server.
const defaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// pingPostgres reports whether the server at u answers.
func pingPostgres(ctx context.Context, u string) error {
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}
