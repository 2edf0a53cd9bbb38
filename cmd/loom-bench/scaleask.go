package main

// The scale run's questions: each asked in its project and across all
// projects, in the stores its set was planted in, and counted.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/recall"
)

// scaleTally is what the questions of each set found, in each scope,
// over the stores they were asked in.
type scaleTally struct {
	scopes []string
	sets   []string
	bySet  map[string]*setTally
	// ranks, when set, gets each question's rank in each scope.
	ranks *json.Encoder
}

// setTally is one set's figures, a scope each.
type setTally struct {
	scores                 []retrievalScore
	filler, other, refused []int
	loads                  []string
	messages               []string
	// recalls are what loom recall gave the same questions.
	recalls []recallTally
}

// recallTally counts what recall gave the questions of one scope: the
// question's evidence session in the answer (any turn of it), as the
// first turn, a partial answer, and the time of each recall.
type recallTally struct {
	n, in, first, partial int
	times                 []time.Duration
	// cmd is the same for the whole command, `loom recall --json`.
	cmd *recallTally
}

func newScaleTally(sets []*retrievalSet, only string) *scaleTally {
	t := &scaleTally{scopes: []string{"per project", "all projects"}, bySet: map[string]*setTally{}}
	if only != "" {
		t.scopes = []string{only}
	}
	for _, set := range sets {
		n := len(t.scopes)
		t.sets = append(t.sets, set.name)
		t.bySet[set.name] = &setTally{scores: make([]retrievalScore, n), filler: make([]int, n), other: make([]int, n), refused: make([]int, n),
			recalls: make([]recallTally, n)}
	}
	return t
}

// recallRows writes a row for each set and scope of engine: what
// recall gave the questions search was asked.
func (t *scaleTally) recallRows(b *strings.Builder, engine string) {
	for _, name := range t.sets {
		st := t.bySet[name]
		for i, r := range st.recalls {
			if r.n == 0 {
				continue
			}
			p := func(k, n int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(n)) }
			c := "| – | – | – | – | – |"
			if r.cmd != nil && r.cmd.n > 0 {
				c = fmt.Sprintf("| %s | %s | %s | %.1f ms | %.1f ms |", p(r.cmd.in, r.cmd.n), p(r.cmd.first, r.cmd.n), p(r.cmd.partial, r.cmd.n),
					ms(pct(r.cmd.times, 0.5)), ms(pct(r.cmd.times, 0.99)))
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s | %s | %s | %.1f ms | %.1f ms %s\n", name, engine, strings.Join(st.messages, " / "), t.scopes[i], r.n,
				p(r.in, r.n), p(r.first, r.n), p(r.partial, r.n), ms(pct(r.times, 0.5)), ms(pct(r.times, 0.99)), c)
		}
	}
}

// rows writes a row for each set and scope of engine.
func (t *scaleTally) rows(b *strings.Builder, engine string) {
	for _, name := range t.sets {
		st := t.bySet[name]
		for i, s := range st.scores {
			if s.n == 0 {
				continue
			}
			p := func(k int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(s.n)) }
			fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s | %s | %s | %.3f | %.1f ms | %.1f ms | %d | %d | %d | %s |\n", name, engine, strings.Join(st.messages, " / "), t.scopes[i], s.n,
				p(s.hit1), p(s.hit5), p(s.hit10), s.mrr/float64(s.n), ms(pct(s.times, 0.5)), ms(pct(s.times, 0.99)), st.filler[i], st.other[i], st.refused[i], strings.Join(st.loads, "; "))
		}
	}
}

// askScale asks every n-th question of each planted set in its project
// and across all projects, and counts what it found in tally; it
// returns a note on the store and the memory the questions took. misses,
// when set, gets each question whose first hit is in another planted
// conversation.
// cmd, when set, also runs each recall as a whole command.
func askScale(ctx context.Context, st loom.Engine, engine string, pl *planted, every, limit int, misses *json.Encoder, tally *scaleTally, cmd *recallCommand) (string, error) {
	keys := map[string]string{}
	if err := sessionKeys(ctx, st, pl.names, keys); err != nil {
		return "", err
	}
	sessions, messages, err := storeSize(ctx, st)
	if err != nil {
		return "", err
	}
	runtime.GC()
	resetPeak()
	startRSS := residentKB()
	for si, set := range pl.sets {
		if len(set.qs) == 0 {
			continue
		}
		t := tally.bySet[set.name]
		load0 := load1()
		for n := 0; n < len(set.qs); n += max(every, 1) {
			q := set.qs[n]
			gold := pl.goldOf(set, q)
			for i, scope := range tally.scopes {
				project := pl.projects[si][q.conv]
				if scope == "all projects" {
					project = ""
				}
				sq := loom.SearchQuery{Text: q.text, UserID: "bench", ProjectID: project, Limit: limit}
				// The time is the first try's; a search refused for
				// running out of time is tried again, four times at most,
				// for its hits, then counted as not found.
				start := time.Now()
				hits, err := st.Search(ctx, sq)
				took := time.Since(start)
				if errors.Is(err, loom.ErrSearchTime) {
					hits, err = retryBusy(func() ([]loom.SearchHit, error) { return st.Search(ctx, sq) })
				}
				if errors.Is(err, loom.ErrSearchTime) {
					fmt.Fprintf(os.Stderr, "%s: %s, %s: refused: %q\n", engine, set.name, scope, q.text)
					t.refused[i]++
					err = nil
				}
				if err != nil {
					return "", fmt.Errorf("%s: %s: question %q: %w", engine, set.name, q.text, err)
				}
				ranked := rankedSessions(hits, keys)
				if len(hits) > 0 {
					switch first := keys[hits[0].SessionID]; {
					case first == "":
						t.filler[i]++
					case path.Dir(first) != path.Dir(gold[0]):
						t.other[i]++
						if misses != nil {
							misses.Encode(map[string]any{"engine": engine, "set": set.name, "scope": scope, "question": q.text, "gold": gold,
								"rank": goldRank(ranked, gold), "first": first, "seq": hits[0].Seq, "snippet": hits[0].Snippet, "top": ranked[:min(5, len(ranked))]})
						}
					}
				}
				t.scores[i].add(goldRank(ranked, gold), ranked, gold, took)
				place, err := askRecall(ctx, st, q.text, project, keys, gold, &t.recalls[i])
				if err != nil {
					return "", fmt.Errorf("%s: %s: recall %q: %w", engine, set.name, q.text, err)
				}
				if cmd != nil {
					if t.recalls[i].cmd == nil {
						t.recalls[i].cmd = &recallTally{}
					}
					if err := cmd.ask(ctx, q.text, pl.dirs[si][q.conv], project == "", keys, gold, t.recalls[i].cmd); err != nil {
						return "", fmt.Errorf("%s: %s: %w", engine, set.name, err)
					}
				}
				if tally.ranks != nil {
					tally.ranks.Encode(map[string]any{"engine": engine, "set": set.name, "scope": scope, "question": q.text,
						"rank": goldRank(ranked, gold), "gold": gold, "top": ranked[:min(5, len(ranked))], "recall": place})
				}
			}
			if (n/max(every, 1)+1)%50 == 0 {
				fmt.Fprintf(os.Stderr, "%s: %s: %d questions asked\n", engine, set.name, n+1)
			}
		}
		t.loads = append(t.loads, load0+" → "+load1())
		t.messages = append(t.messages, strconv.Itoa(messages))
	}
	return fmt.Sprintf("%s: %d messages in %d sessions; while asking, the process's resident memory went from %d MB to a peak of %d MB (the bench's own, the engine's in-process cache included%s).",
		engine, messages, sessions, startRSS>>10, peakKB()>>10, map[bool]string{true: "; PostgreSQL's server is not counted", false: ""}[engine == "PostgreSQL"]), nil
}

// storeSize counts the user's sessions and their messages.
func storeSize(ctx context.Context, st loom.Engine) (sessions, messages int, err error) {
	for cursor := (*loom.Cursor)(nil); ; {
		ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "bench", Limit: 1000, Before: cursor})
		if err != nil {
			return 0, 0, err
		}
		for _, s := range ss {
			sessions++
			messages += s.MessageCount
		}
		if len(ss) < 1000 {
			return sessions, messages, nil
		}
		cursor = loom.CursorAfter(ss[len(ss)-1])
	}
}

// load1 is the machine's load average over the last minute.
func load1() string { return strings.Fields(loadAverage() + " ?")[0] }

// askRecall recalls question in project ("" for every project) as loom
// recall does (1,500 tokens), and counts in r whether a turn of its
// evidence sessions (gold, by keys) is in the answer and first, and
// how long it took. It returns the place (from 1) of that turn in the
// answer, 0 when none is there.
func askRecall(ctx context.Context, st loom.Engine, question, project string, keys map[string]string, gold []string, r *recallTally) (int, error) {
	start := time.Now()
	res, err := recall.Recall(ctx, st, recall.Options{Prompt: question, UserID: "bench", ProjectID: project})
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	return r.count(res, took, keys, gold), nil
}

// count counts in r the answer res of a recall that took took: whether
// a turn of its evidence sessions (gold, by keys) is in it and first.
// It returns the place (from 1) of that turn, 0 when none is there.
func (r *recallTally) count(res *recall.Result, took time.Duration, keys map[string]string, gold []string) int {
	r.n++
	r.times = append(r.times, took)
	if res.Partial {
		r.partial++
	}
	for i, turn := range res.Turns {
		if slices.Contains(gold, keys[turn.SessionID]) {
			r.in++
			if i == 0 {
				r.first++
			}
			return i + 1
		}
	}
	return 0
}

// recallCommand runs `loom recall --json` as a whole process on the
// store db names, as a user or a hook's script would.
type recallCommand struct {
	bin, home, db string
}

// newRecallCommand builds loom into dir (unless bin names one) and
// makes the home its runs share.
func newRecallCommand(ctx context.Context, dir, bin string) (*recallCommand, error) {
	home, err := os.MkdirTemp(dir, "recall-home-")
	if err != nil {
		return nil, err
	}
	if bin == "" {
		bin = filepath.Join(home, "loom")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/loomhq/loom/cmd/loom")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			os.RemoveAll(home)
			return nil, fmt.Errorf("build loom: %w", err)
		}
	}
	return &recallCommand{bin: bin, home: home}, nil
}

// ask runs `loom recall --json QUESTION` in dir (with -a when all), and
// counts in r what ask Recall counts, the time being the whole
// process's.
func (c *recallCommand) ask(ctx context.Context, question, dir string, all bool, keys map[string]string, gold []string, r *recallTally) error {
	args := []string{"recall", "--json"}
	if all {
		args = append(args, "-a")
	}
	cmd := exec.CommandContext(ctx, c.bin, append(args, "--", question)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+c.home, "LOOM_HOME="+filepath.Join(c.home, "loom"), "LOOM_DB="+c.db, "LOOM_USER=bench", "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		return fmt.Errorf("loom %s %q: %v: %.300s", strings.Join(args, " "), question, err, errOut.Bytes())
	}
	var res recall.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return fmt.Errorf("loom %s %q: %w: %.300s", strings.Join(args, " "), question, err, out.Bytes())
	}
	if !all && res.Scope != recall.ScopeProject {
		return fmt.Errorf("loom recall %q in %s: recalled from %s, not its project", question, dir, res.Scope)
	}
	r.count(&res, took, keys, gold)
	return nil
}
