package searcheval

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/internal/locomo"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/recall"
)

// seedEnv replays TestRecallScaleAndScope with the seed a run printed.
const seedEnv = "LOOM_TEST_SEED"

// maxScaleLoss is how many of n questions answered in the planted
// store alone one cell (a size of store, a layout and a scope) may
// lose, for recall and for search each: a sixth (6 of recall's 40, 8
// of search's 49). It is what the suite holds, not what a user should
// expect (docs/search.md has the cells' figures and the questions
// lost). The questions are paraphrases that share only common words
// with their answers, never the telling ones, and the filler holds
// those common words at the frequencies the planted sessions have them:
// a filler message that holds more of a question's words than its
// answer does is genuine competition, which a keyword search cannot
// rank below the answer ("is a finished item shown crossed out in the
// list?" against a turn that says "strikethrough"). Measured on a
// loaded 2-core machine in the runs docs/search.md lists, the worst
// cell lost 4 of 40 to recall on SQLite (every project, 100,000 filler
// messages) and 5 on PostgreSQL (every project, 10,000, at a load of
// 30, where some of its searches ran out of time), and 3 of 49 to
// search; one question is 2.5 points of 40, so the 2 points of hit@5 a
// user might ask for would fail on one question's competition. A sixth
// leaves one question above the worst measured; it was a quarter, which
// a scope that dropped a project's turns, or recall answering with the
// newest matches over a large store (which lost 38 of 40 across
// projects), still fails.
func maxScaleLoss(n int) int { return n / 6 }

// maxLoCoMoLoss is how many of n of LoCoMo's questions answered in the
// planted store alone (recall: a turn of an evidence session in the
// answer; search: an evidence session among the first five) one cell
// may lose: a tenth (9 of recall's 97 and search's 91 at every 20th
// question on SQLite). LoCoMo's ten conversations are everyday talk
// between two friends each, about jobs, families, hobbies and trips, so
// across projects another conversation's turn on the same topic is
// genuine competition; the filler, made of the agent sessions' words,
// holds none of their names. Measured (docs/search.md), the worst cell
// lost 3 of 97 to recall and 3 of 91 to search on SQLite, every one
// across projects or in the one project holding everything, already
// with no filler at all: losses of scope, none of size. A tenth leaves
// twice that again for a loaded machine's searches out of time (on
// PostgreSQL a question's search that runs out of its time is partial
// and may hold none of its evidence), and still fails a scope that
// drops a project's turns or a size above which recall answers with
// the newest matches (which kept 2 of 40 of the agent sessions'
// questions).
func maxLoCoMoLoss(n int) int { return n / 10 }

// TestRecallScaleAndScope checks a property of recall and search: a
// question's answer keeps its evidence as the store grows and as the
// scope widens from its project to every project. The planted store is
// the public sessions of testdata/agent-sessions, each in the project
// its importer gives it, and the questions are the paraphrases written
// from them (paraphrases, heldOut, heldOutScale), whose on-topic turns
// are known. Filler is generated from the planted sessions' own common
// words, at their frequencies (a word in at least three planted
// messages, none of a question's markers), seeded (LOOM_TEST_SEED
// replays a run; the seed is logged): 10,000 messages, then 100,000
// (not with -short), spread over 1, 100 or 1,000 projects (layouts),
// the same filler in a store of each. Each question is asked in its
// project and across all projects (scaleCells); those whose recall
// held an on-topic turn, or whose search held a target session among
// its first five, in the planted store alone and in their project must
// keep it in every cell, but for maxScaleLoss of them. SQLite always;
// PostgreSQL too, at LOOM_TEST_POSTGRES or the local server (skipped
// when there is none, but in CI), at 10,000 filler messages (both
// sizes with LOOM_TEST_SCALE_POSTGRES=full).
//
// With LOOM_TEST_LOCOMO naming LoCoMo's locomo10.json, its ten
// conversations are planted too, each in a project of its own that
// gets its share of the filler, and every 20th of its questions
// (LOOM_TEST_LOCOMO_EVERY) is asked in every cell as the paraphrases
// are, its evidence sessions its targets, any of their turns on topic;
// their losses are held to maxLoCoMoLoss apart. LoCoMo is not in the
// repository (docs/search.md says where it is downloaded), so the suite
// asks it only where the file is given.
func TestRecallScaleAndScope(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(seedEnv); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, s, err)
		}
		seed = n
	}
	t.Logf("seed %d (%s=%d replays it)", seed, seedEnv, seed)
	sizes := []int{10_000, 100_000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	convs, lq := locomoQuestions(t)
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		scaleAndScope(t, func(t *testing.T) loom.Engine { return importertest.Store(t) }, seed, sizes, layouts, convs, lq)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		// 10,000 filler messages only: at 100,000 a PostgreSQL search of
		// these questions took most of a second on a loaded 2-core
		// machine, and the 49 questions in two scopes most of a quarter
		// of an hour. And in the layouts of 1 and 1,000 projects, which
		// bracket 100's: on the same machine each cell took 25 to 55
		// seconds on PostgreSQL, 2 to 4 on SQLite.
		// LOOM_TEST_SCALE_POSTGRES=full asks at both sizes, in every
		// layout.
		pg, asked := sizes[:1], []int{1, 1000}
		if os.Getenv("LOOM_TEST_SCALE_POSTGRES") == "full" {
			pg, asked = sizes, layouts
		}
		scaleAndScope(t, postgresStore, seed, pg, asked, convs, lq)
	})
}

// postgresStore is a store in a new schema of the server
// LOOM_TEST_POSTGRES names, or of the local one, dropped when the test
// ends; the test is skipped when there is none, but in CI.
func postgresStore(t *testing.T) loom.Engine {
	base := os.Getenv(storetest.PostgresEnv)
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, base)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv(storetest.PostgresEnv) != "" {
			t.Fatalf("PostgreSQL: %v", err)
		}
		t.Skipf("no PostgreSQL (set %s): %v", storetest.PostgresEnv, err)
	}
	t.Cleanup(pool.Close)
	var b [6]byte
	cryptorand.Read(b[:])
	name := "loomtest_" + hex.EncodeToString(b[:])
	if _, err := pool.Exec(ctx, `CREATE SCHEMA `+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	st, err := postgres.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// answered is what a question found in one cell: an on-topic recalled
// turn, and a target session among the search's first five.
type answered struct{ recall, search bool }

// layouts are the numbers of projects the filler is spread over, each
// in a store of its own: 1, every planted session and every filler
// message in one project, so that a question's project is the whole
// store; 100 and 1,000, the planted sessions in the projects their
// importer gives them (4) and the filler over that many projects, the
// planted ones among them, so that each holds a 100th and a 1,000th of
// it.
var layouts = []int{1, 100, 1000}

// laidOut is a store of one layout: the planted sessions by id and
// key, and the filler made so far.
type laidOut struct {
	projects int
	st       loom.Engine
	keys     map[string]string // session id → key
	project  map[string]string // session key → project id
	planted  []string          // the planted sessions' project ids
	gen      *fillerGen
}

// plant imports the public sessions of testdata/agent-sessions into st,
// each in the project its importer gives it, or all in one project when
// projects is 1.
func plant(t *testing.T, st loom.Engine, projects int, seed uint64) (*laidOut, []string) {
	t.Helper()
	ctx := context.Background()
	projectOf := paths.ProjectOf
	if projects == 1 {
		projectOf = func(string) loom.Project { return oneProject }
	}
	im := &importer.Importer{Store: st, UserID: "alice", Project: projectOf}
	if _, err := im.Run(ctx, []importer.Target{
		{Format: claudecode.Format{}, Roots: []string{samples + "/claude-code"}, Explicit: true},
		{Format: codex.Format{}, Roots: []string{samples + "/codex/vibecodingtracker-codex.jsonl"}, Explicit: true},
	}); err != nil {
		t.Fatal(err)
	}
	all, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	l := &laidOut{projects: projects, st: st, keys: map[string]string{}, project: map[string]string{}}
	var texts []string
	for _, s := range all {
		l.keys[s.ID], l.project[s.Key] = s.Key, s.Project.ID
		if !slices.Contains(l.planted, s.Project.ID) {
			l.planted = append(l.planted, s.Project.ID)
		}
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			texts = append(texts, m.Text())
		}
	}
	slices.Sort(l.planted)
	// The same seed in every layout: the same filler, laid out apart.
	l.gen = &fillerGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), projects: projects, planted: l.planted,
		now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	return l, texts
}

// oneProject holds every session of the one-project layout.
var oneProject = loom.Project{ID: "f000000000000000", Name: "everything", Root: "/src/everything"}

// ask asks p of l's store, by recall and by search, in projectID ("":
// every project).
func (l *laidOut) ask(t *testing.T, p paraphrase, projectID string) answered {
	t.Helper()
	ctx := context.Background()
	o := recall.Options{Prompt: p.prompt, UserID: "alice", ProjectID: projectID}
	res, err := recall.Recall(ctx, l.st, o)
	// As for a search below: a recall whose search ran out of time
	// before any hit is asked again.
	for try := 1; err == nil && res.Partial && len(res.Turns) == 0 && try < 3; try++ {
		res, err = recall.Recall(ctx, l.st, o)
	}
	if err != nil {
		t.Fatalf("recall %q: %v", p.prompt, err)
	}
	if res.Partial && len(res.Turns) == 0 {
		t.Logf("recall %q out of time three times: not counted", p.prompt)
		res = nil
	}
	// A search refused for running out of time (a busy machine) is
	// no answer, right or wrong: asked again, and at last counted
	// as kept.
	q := loom.SearchQuery{Text: p.prompt, UserID: "alice", ProjectID: projectID, Limit: 20}
	hits, err := l.st.Search(ctx, q)
	for try := 1; errors.Is(err, loom.ErrSearchTime) && try < 3; try++ {
		hits, err = l.st.Search(ctx, q)
	}
	if errors.Is(err, loom.ErrSearchTime) {
		t.Logf("search %q refused three times for running out of time: not counted", p.prompt)
		return answered{recall: true, search: true}
	}
	if err != nil {
		t.Fatalf("search %q: %v", p.prompt, err)
	}
	var sessions []string
	found := false
	for _, h := range hits {
		if slices.Contains(sessions, h.SessionID) {
			continue
		}
		if sessions = append(sessions, h.SessionID); len(sessions) > 5 {
			break
		}
		for _, target := range p.targets {
			k := l.keys[h.SessionID]
			found = found || k == target || strings.HasPrefix(k, target+"/")
		}
	}
	return answered{recall: res == nil || onTopic(res, l.keys, p.targets, p.markers) > 0, search: found}
}

// scaleCell is one cell of the property: a size of filler, a layout
// (the number of projects it is spread over) and a scope.
type scaleCell struct {
	size, projects int
	all            bool
}

// scaleCells are the cells asked, in order, at sizes: at the first
// size each question in its project in each layout of asked, and in
// every project; at the larger sizes, for the cost of the test in .ci/run,
// in its project of 1,000 and in every project. The three layouts hold
// the same messages (the same filler, drawn from the same seed, laid
// out apart), so every project is the same store in each and is asked
// in the layout of 1,000; in the layout of one project a question's
// project is the whole store, the messages every project's cell asks.
func scaleCells(sizes, asked []int) []scaleCell {
	cells := []scaleCell{{0, 1000, true}}
	for i, n := range sizes {
		for _, p := range asked {
			if i == 0 || p == 1000 {
				cells = append(cells, scaleCell{n, p, false})
			}
		}
		cells = append(cells, scaleCell{n, 1000, true})
	}
	return cells
}

func scaleAndScope(t *testing.T, open func(*testing.T) loom.Engine, seed uint64, sizes, asked []int, convs []locomo.Conversation, lq []paraphrase) {
	ctx := context.Background()
	stores := map[int]*laidOut{}
	var texts []string
	for _, p := range layouts {
		if slices.Contains(asked, p) || p == 1000 {
			l, tx := plant(t, open(t), p, seed)
			stores[p], texts = l, tx
			if len(convs) > 0 {
				l.plantLoCoMo(t, convs)
				if p > 1 {
					// LoCoMo's projects get their share of the filler
					// too, as the agent sessions' do.
					for _, c := range convs {
						l.planted = append(l.planted, "locomo-"+c.Name)
					}
					l.gen.planted = l.planted
				}
			}
		}
	}
	// The filler's words are the agent sessions' only: LoCoMo's
	// questions meet them (their stop words, and the common words the
	// two share), never a filler message of LoCoMo's own names.
	agentQs := slices.Concat(paraphrases, heldOut, heldOutScale)
	qs := slices.Concat(agentQs, lq)
	vocab, weights := fillerWords(texts, agentQs)
	for _, l := range stores {
		l.gen.vocab, l.gen.cum = vocab, weights
	}
	ref := stores[1000]
	t.Logf("planted: %d messages, %d projects; filler vocabulary %d words", len(texts), len(ref.planted), len(vocab))

	// The planted store alone, in each question's project: what every
	// cell is held to.
	base := make([]answered, len(qs))
	// nr, ns are the agent sessions' questions answered by recall and
	// search; lr, ls LoCoMo's.
	nr, ns, lr, ls := 0, 0, 0, 0
	for i, p := range qs {
		base[i] = ref.ask(t, p, ref.project[p.targets[0]])
		r, s := &nr, &ns
		if i >= len(agentQs) {
			r, s = &lr, &ls
		}
		if base[i].recall {
			*r++
		}
		if base[i].search {
			*s++
		}
	}
	t.Logf("planted store alone, in their projects: recall %d, search %d of %d questions of the agent sessions; LoCoMo's: recall %d, search %d of %d",
		nr, ns, len(agentQs), lr, ls, len(lq))
	added := map[int]int{}
	for _, c := range scaleCells(sizes, asked) {
		l := stores[c.projects]
		if c.size > added[c.projects] {
			start := time.Now()
			if err := l.gen.fill(ctx, l.st, c.size-added[c.projects]); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d filler messages added over %d projects in %v", c.size-added[c.projects], c.projects, time.Since(start).Round(time.Millisecond))
			added[c.projects] = c.size
		}
		scope := fmt.Sprintf("its project of %d", c.projects)
		if c.all {
			scope = "every project"
		}
		start := time.Now()
		lostRecall, lostSearch := 0, 0
		// Recall's losses among the questions tuned on (paraphrases) and
		// among those held out (heldOut, heldOutScale), told apart.
		lostTuned, lostHeld := 0, 0
		// LoCoMo's questions' losses, apart.
		lostRecallL, lostSearchL := 0, 0
		for i, p := range qs {
			projectID := l.project[p.targets[0]]
			if c.all {
				projectID = ""
			}
			got := l.ask(t, p, projectID)
			if i >= len(agentQs) {
				if base[i].recall && !got.recall {
					lostRecallL++
					t.Logf("%d filler messages, %s: recall lost LoCoMo's evidence for %q", c.size, scope, p.prompt)
				}
				if base[i].search && !got.search {
					lostSearchL++
					t.Logf("%d filler messages, %s: search lost LoCoMo's evidence for %q", c.size, scope, p.prompt)
				}
				continue
			}
			if base[i].recall && !got.recall {
				lostRecall++
				if i < len(paraphrases) {
					lostTuned++
				} else {
					lostHeld++
				}
				t.Logf("%d filler messages, %s: recall lost its evidence for %q", c.size, scope, p.prompt)
			}
			if base[i].search && !got.search {
				lostSearch++
				t.Logf("%d filler messages, %s: search lost its evidence for %q", c.size, scope, p.prompt)
			}
		}
		t.Logf("%d filler messages, %s: recall kept %d of %d (lost %d tuned on, %d held out), search %d of %d (%v)", c.size, scope, nr-lostRecall, nr,
			lostTuned, lostHeld, ns-lostSearch, ns, time.Since(start).Round(time.Millisecond))
		if lostRecall > maxScaleLoss(nr) || lostSearch > maxScaleLoss(ns) {
			t.Errorf("%d filler messages, %s: recall lost %d of %d and search %d of %d of the questions answered in the planted store alone, want at most %d and %d (seed %d)",
				c.size, scope, lostRecall, nr, lostSearch, ns, maxScaleLoss(nr), maxScaleLoss(ns), seed)
		}
		if len(lq) > 0 {
			t.Logf("%d filler messages, %s: LoCoMo's questions: recall kept %d of %d, search %d of %d", c.size, scope, lr-lostRecallL, lr, ls-lostSearchL, ls)
			if lostRecallL > maxLoCoMoLoss(lr) || lostSearchL > maxLoCoMoLoss(ls) {
				t.Errorf("%d filler messages, %s: recall lost %d of %d and search %d of %d of LoCoMo's questions answered in the planted store alone, want at most %d and %d (seed %d)",
					c.size, scope, lostRecallL, lr, lostSearchL, ls, maxLoCoMoLoss(lr), maxLoCoMoLoss(ls), seed)
			}
		}
	}
}

// fillerWords are the words of texts (lower-case letters, 3 to 14 of
// them) that at least three of them hold, less every word that could
// match a marker of qs (the same stem, or a word of a marker), with
// the cumulative counts of the texts holding each, to draw them at
// those frequencies.
func fillerWords(texts []string, qs []paraphrase) ([]string, []int) {
	banned := map[string]bool{}
	for _, q := range qs {
		for _, m := range q.markers {
			for _, w := range loom.Words(strings.ToLower(m)) {
				banned[english.Stem(w, false)] = true
			}
		}
	}
	df := map[string]int{}
	for _, text := range texts {
		for w := range lowerWords(text) {
			if len(w) >= 3 && len(w) <= 14 && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" {
				df[w]++
			}
		}
	}
	var vocab []string
	for w, n := range df {
		if n >= 3 && !banned[english.Stem(w, false)] {
			vocab = append(vocab, w)
		}
	}
	sort.Strings(vocab)
	cum := make([]int, len(vocab))
	total := 0
	for i, w := range vocab {
		total += df[w]
		cum[i] = total
	}
	return vocab, cum
}

// fillerGen makes filler sessions from vocab, each word drawn as often
// as cum's counts say.
type fillerGen struct {
	r     *rand.Rand
	vocab []string
	cum   []int
	now   time.Time
	n     int
	// projects is how many projects the filler is spread over, the
	// planted ones among them (all of it in oneProject when 1).
	projects int
	planted  []string
}

func (g *fillerGen) word() string {
	x := g.r.IntN(g.cum[len(g.cum)-1])
	return g.vocab[sort.SearchInts(g.cum, x+1)]
}

// fill adds n filler messages, each session in one of g.projects
// projects in turn: the planted projects first, then projects of the
// filler's own; then merges the search index as an import of as many
// messages does (importer.MergeAfterImport), which a user's store has
// had, and without which the first searches after a large fill wait on
// the index's unmerged segments.
func (g *fillerGen) fill(ctx context.Context, st loom.Engine, n int) error {
	var batch []*loom.SessionData
	added := n
	for n > 0 {
		m := min(20+g.r.IntN(161), n)
		g.n++
		i := g.n % g.projects
		p := loom.Project{ID: fmt.Sprintf("f%015x", i+1), Name: fmt.Sprintf("filler%03d", i), Root: fmt.Sprintf("/src/filler%03d", i)}
		switch {
		case g.projects == 1:
			p = oneProject
		case i < len(g.planted):
			p = loom.Project{ID: g.planted[i]}
		}
		batch = append(batch, g.session(m, p))
		n -= m
		if len(batch) == 50 {
			if err := st.Import(ctx, batch); err != nil {
				return err
			}
			batch = nil
		}
	}
	if len(batch) > 0 {
		if err := st.Import(ctx, batch); err != nil {
			return err
		}
	}
	return importer.MergeAfterImport(ctx, st, added)
}

// session is a filler session of n messages in project, the user's and
// the assistant's in turn, each of 6 to 40 words.
func (g *fillerGen) session(n int, project loom.Project) *loom.SessionData {
	id := loom.NewID()
	s := &loom.Session{ID: id, UserID: "alice", Key: fmt.Sprintf("cli:filler-%d", g.n), Surface: "cli", Kind: loom.KindMain,
		Project: project, Cwd: project.Root, CreatedAt: g.now, MessageCount: n, TurnCount: (n + 1) / 2}
	msgs := make([]*loom.Message, 0, n)
	for i := 1; i <= n; i++ {
		g.now = g.now.Add(time.Duration(1+g.r.IntN(30)) * time.Second)
		words := make([]string, 6+g.r.IntN(35))
		for j := range words {
			words[j] = g.word()
		}
		role := loom.RoleUser
		if i%2 == 0 {
			role = loom.RoleAssistant
		}
		msgs = append(msgs, &loom.Message{ID: loom.NewID(), SessionID: id, Seq: int64(i), Role: role, Turn: (i + 1) / 2, CreatedAt: g.now,
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: strings.Join(words, " ")}}})
	}
	s.UpdatedAt = g.now
	s.Title = strings.Join(strings.Fields(msgs[0].Parts[0].Text)[:4], " ")
	return &loom.SessionData{Session: s, Messages: msgs}
}
