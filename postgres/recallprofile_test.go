package postgres_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/recall"
)

// TestRecallStatements times every statement recall runs, for the
// questions of a file, on a store someone built (loom-bench -scale
// -scale-postgres keeps one in a schema): what docs/search.md's
// "PostgreSQL's recall against a hook's 100 ms" measured. It runs only
// when LOOM_TEST_RECALL_PROFILE names the store's URL (its schema in
// search_path) and LOOM_TEST_RECALL_QUESTIONS a file of questions, one
// a line (PROJECT-ID, a tab, and the question: recalled in that
// project); LOOM_TEST_RECALL_USER is their user (bench by default), and
// LOOM_TEST_RECALL_HOOK=true gives each recall a hook's 100 ms
// (LOOM_TEST_RECALL_DEADLINE, a Go duration, another deadline). Each
// question is recalled (across every project when no project is given)
// three times; the third
// round is logged: the recalls' p50, how many were partial or gave no
// turn, how many took longer than their deadline, how many connections
// the pool opened, and the statements' time by statement, most first.
func TestRecallStatements(t *testing.T) {
	dsn, file := os.Getenv("LOOM_TEST_RECALL_PROFILE"), os.Getenv("LOOM_TEST_RECALL_QUESTIONS")
	if dsn == "" || file == "" {
		t.Skip("LOOM_TEST_RECALL_PROFILE and LOOM_TEST_RECALL_QUESTIONS name a store and its questions")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	type question struct{ project, text string }
	var questions []question
	for _, line := range strings.Split(string(b), "\n") {
		project, text, ok := strings.Cut(line, "\t")
		if !ok {
			project, text = "", line
		}
		if text = strings.TrimSpace(text); text != "" {
			questions = append(questions, question{strings.TrimSpace(project), text})
		}
	}
	user := os.Getenv("LOOM_TEST_RECALL_USER")
	if user == "" {
		user = "bench"
	}
	hook := os.Getenv("LOOM_TEST_RECALL_HOOK") == "true"
	deadline := 100 * time.Millisecond
	if v := os.Getenv("LOOM_TEST_RECALL_DEADLINE"); v != "" {
		if deadline, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	timer := &statementTimer{took: map[string]time.Duration{}, runs: map[string]int{}, cut: map[string]int{}, late: map[string]int{}}
	cfg.ConnConfig.Tracer = timer
	st, err := postgres.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var took []time.Duration
	partial, none, late := 0, 0, 0
	var opened int64
	for round := range 3 {
		timer.record(round == 2)
		opened = st.Pool().Stat().NewConnsCount()
		for _, q := range questions {
			o := recall.Options{Prompt: q.text, UserID: user, ProjectID: q.project}
			if hook {
				o.Deadline = time.Now().Add(deadline)
			}
			start := time.Now()
			res, err := recall.Recall(ctx, st, o)
			if err != nil {
				t.Fatalf("recall %q: %v", q.text, err)
			}
			if round < 2 {
				continue
			}
			took = append(took, time.Since(start))
			if hook && time.Since(start) > deadline {
				late++
			}
			if res.Partial {
				partial++
			}
			if len(res.Turns) == 0 {
				none++
			}
		}
	}
	timer.record(false)
	opened = st.Pool().Stat().NewConnsCount() - opened
	slices.Sort(took)
	t.Logf("%d recalls (hook's deadline %v, %v): p50 %v, max %v; %d partial, %d with no turn, %d past the deadline; %d new connections", len(took), hook, deadline, took[len(took)/2], took[len(took)-1], partial, none, late, opened)
	kinds := make([]string, 0, len(timer.took))
	var all time.Duration
	for k, d := range timer.took {
		kinds = append(kinds, k)
		all += d
	}
	slices.SortFunc(kinds, func(a, b string) int { return int(timer.took[b] - timer.took[a]) })
	t.Logf("statements: %v in all", all)
	for _, k := range kinds {
		t.Logf("%9.1f ms %5d× (%d cut, %d by a cancel request) %s", float64(timer.took[k])/1e6, timer.runs[k], timer.cut[k], timer.late[k], k)
	}
}

// statementTimer is a pgx tracer that adds up, while recording, the
// time of each statement by its first 110 characters.
type statementTimer struct {
	mu   sync.Mutex
	on   bool
	took map[string]time.Duration
	runs map[string]int
	cut  map[string]int // statements that ended in an error (cut short by a deadline)
	late map[string]int // of those, the ones a cancel request ended, after their deadline
}

// startedKey holds a statement's text and start in its context.
type startedKey struct{}

type started struct {
	sql string
	at  time.Time
}

func (s *statementTimer) record(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = on
}

func (s *statementTimer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, startedKey{}, started{sql: d.SQL, at: time.Now()})
}

func (s *statementTimer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	q, ok := ctx.Value(startedKey{}).(started)
	if !ok {
		return
	}
	k := strings.Join(strings.Fields(q.sql), " ")
	k = k[:min(len(k), 110)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.took[k] += time.Since(q.at)
		s.runs[k]++
		if d.Err != nil {
			s.cut[k]++
			if strings.Contains(d.Err.Error(), "user request") {
				s.late[k]++
			}
		}
	}
}
