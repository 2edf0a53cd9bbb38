package main

// The scale run: the public benchmarks' conversations planted in a store
// of a real user's size, a million messages over a thousand projects of
// several agents, and every question asked twice: in its conversation's
// project, and across all projects (what `loom search -a` asks).
//
// The rest of the store is filler that cannot answer any question: its
// words are drawn from a vocabulary that holds no word the search would
// match to a content word of any planted conversation or question (see
// fillerVocabulary), so each question's evidence stays where it was,
// and what competes with it across projects is the other planted
// conversations and the filler's stop words.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/sqlite"
)

// scaleOptions say how the scale run is made.
type scaleOptions struct {
	// store is the SQLite file of the store, built when it (or the note
	// beside it saying it is whole) is missing, and reused after.
	store    string
	messages int // filler messages, at least
	projects int // filler projects
	// samples is the directory of agent session files whose words make
	// the filler's vocabulary.
	samples string
	// postgres, when set, is the server whose schema pgSchema holds the
	// same store, of pgMessages filler messages, built once and kept.
	postgres   string
	pgSchema   string
	pgMessages int
	// every and pgEvery ask every n-th question (1: all of them; 0:
	// not that engine).
	every, pgEvery int
	// scopes are the scopes each question is asked in: "per project",
	// "all projects", or both (empty).
	scopes string
	// misses, when set, is a file that gets one JSON line for each
	// question whose first hit is in another planted conversation.
	misses string
	// ranks, when set, is a file that gets one JSON line for each
	// question in each scope: the rank of its evidence's session.
	ranks string
	// together plants every conversation in one store, people who talk
	// in several of them included (see apartRounds).
	together bool
	limit    int
	out      string
	// command also times each recall as a whole command, `loom recall
	// --json` (with -a across all projects) run in the planted
	// conversation's directory, with loomBin (built from ./cmd/loom when
	// empty).
	command bool
	loomBin string
}

// scaleTools are the agents the filler's sessions are said to come from,
// in turn.
var scaleTools = []string{"claude-code", "codex", "gemini", "cursor", "aider"}

// scaleMain builds (or reuses) the stores and asks every question of
// sets in both scopes, and prints the figures.
func scaleMain(ctx context.Context, out io.Writer, sets []*retrievalSet, o scaleOptions) error {
	dir := filepath.Dir(o.store)
	files := filepath.Join(dir, "scale-files")
	defer os.RemoveAll(files)
	t0 := time.Now()
	vocab, err := fillerVocabulary(o.samples, sets)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "scale: a filler vocabulary of %d words (%s)\n", len(vocab), time.Since(t0).Round(time.Millisecond))
	rounds := apartRounds(sets, o.together)
	misses, closeMisses, err := jsonLines(o.misses)
	if err != nil {
		return err
	}
	defer closeMisses()
	ranks, closeRanks, err := jsonLines(o.ranks)
	if err != nil {
		return err
	}
	defer closeRanks()
	var b strings.Builder
	for r, rs := range rounds {
		fmt.Fprintf(&b, "%sPlanted: %s.\n", roundOf(r, len(rounds)), describeSets(rs))
	}
	fmt.Fprintf(&b, "Filler: a vocabulary of %d words (the words of %s less every one a planted content word could match), %d projects, agents %s. %d cores, %s.\n\n",
		len(vocab), o.samples, o.projects, strings.Join(scaleTools, ", "), runtime.NumCPU(), runtime.Version())
	fmt.Fprintln(&b, "| benchmark | engine | messages | scope | n | hit@1 | hit@5 | hit@10 | MRR | p50 | p99 | first hit filler | first hit another conversation | refused | load |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var notes []string
	var recallRows []func(*strings.Builder)
	var cmd *recallCommand
	if o.command {
		if cmd, err = newRecallCommand(ctx, dir, o.loomBin); err != nil {
			return err
		}
		defer os.RemoveAll(cmd.home)
	}

	engines := []struct {
		name  string
		every int
		open  func(o scaleOptions, pl *planted) (loom.Engine, string, error)
		// db is the store's LOOM_DB, for the whole command.
		db func(o scaleOptions) (string, error)
	}{
		{"SQLite", o.every, func(o scaleOptions, pl *planted) (loom.Engine, string, error) {
			return openScaleSQLite(ctx, o, files, pl, vocab)
		}, func(o scaleOptions) (string, error) { return o.store, nil }},
		{"PostgreSQL", o.pgEvery, func(o scaleOptions, pl *planted) (loom.Engine, string, error) {
			return openScalePostgres(ctx, o, files, pl, vocab)
		}, func(o scaleOptions) (string, error) { return schemaURL(o.postgres, o.pgSchema) }},
	}
	for _, e := range engines {
		if e.every <= 0 || e.name == "PostgreSQL" && o.postgres == "" {
			continue
		}
		tally := newScaleTally(sets, o.scopes)
		tally.ranks = ranks
		for r, rs := range rounds {
			if err := os.RemoveAll(files); err != nil {
				return err
			}
			pl, err := plantScale(files, filepath.Join(dir, "projects"), rs)
			if err != nil {
				return err
			}
			st, built, err := e.open(o.round(r), pl)
			if err != nil {
				return err
			}
			if cmd != nil {
				if cmd.db, err = e.db(o.round(r)); err != nil {
					st.Close()
					return err
				}
			}
			note, err := askScale(ctx, st, e.name, pl, e.every, o.limit, misses, tally, cmd)
			st.Close()
			if err != nil {
				return err
			}
			notes = append(notes, roundOf(r, len(rounds))+built, roundOf(r, len(rounds))+note)
		}
		tally.rows(&b, e.name)
		recallRows = append(recallRows, func(b *strings.Builder) { tally.recallRows(b, e.name) })
	}
	// Recall, asked the same questions in the same scopes: its evidence
	// session in the answer, as the first turn, partial answers, and the
	// time of a recall in process.
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "| benchmark (recall) | engine | messages | scope | n | evidence in the answer | as first turn | partial | p50 | p99 | command: evidence in the answer | command: as first turn | command: partial | command p50 | command p99 |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range recallRows {
		r(&b)
	}
	fmt.Fprintln(&b)
	for _, n := range notes {
		fmt.Fprintln(&b, n)
	}
	fmt.Fprint(out, b.String())
	if o.out != "" {
		return os.WriteFile(o.out, []byte(b.String()), 0o644)
	}
	return nil
}

// round is o for store r of the run (from 0): the first is o's store
// and schema, the next ones are named after them with their number.
func (o scaleOptions) round(r int) scaleOptions {
	if r > 0 {
		ext := filepath.Ext(o.store)
		o.store = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(o.store, ext), r+1, ext)
		o.pgSchema = fmt.Sprintf("%s_%d", o.pgSchema, r+1)
	}
	return o
}

// roundOf names store r of n before a note ("" when there is one).
func roundOf(r, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("Store %d of %d: ", r+1, n)
}

// apartRounds splits the planted conversations into the stores of the
// run so that nobody talks in two conversations of one store. A question
// names the person it asks about; where that person talks in another
// conversation of the store (REALTALK: each of its people talks in two
// of its ten chats, with a different friend), that conversation answers
// it too, often in the same words, and each question's evidence is no
// longer unique. So a set whose conversations share a person goes, each
// conversation in its order, to the first store where none of its
// people talks yet (REALTALK's ten chats: 1, 3, 5 and 8; 2, 4, 6 and 9;
// 7 and 10), its questions asked where their conversation is; a set
// whose conversations share nobody (LoCoMo) is planted whole in every
// store, to compete everywhere, and its questions asked in the first.
// The filler is the same in each. together plants everything in one
// store.
func apartRounds(sets []*retrievalSet, together bool) [][]*retrievalSet {
	var rounds [][]*retrievalSet
	var talking []map[string]bool
	grow := func(r int) {
		for len(rounds) <= r {
			rs := make([]*retrievalSet, len(sets))
			for i, set := range sets {
				rs[i] = &retrievalSet{name: set.name, cats: set.cats, names: set.names}
			}
			rounds, talking = append(rounds, rs), append(talking, map[string]bool{})
		}
	}
	grow(0)
	for si, set := range sets {
		if together || !sharesPeople(set) {
			continue
		}
		// at[c] is where conversation c went: its store and its index
		// there.
		at := make([][2]int, len(set.convs))
		for ci, c := range set.convs {
			r := 0
			for ; r < len(talking) && slices.ContainsFunc(c.people, func(p string) bool { return talking[r][p] }); r++ {
			}
			grow(r)
			for _, p := range c.people {
				talking[r][p] = true
			}
			at[ci] = [2]int{r, len(rounds[r][si].convs)}
			rounds[r][si].convs = append(rounds[r][si].convs, c)
		}
		for _, q := range set.qs {
			r, ci := at[q.conv][0], at[q.conv][1]
			q.conv = ci
			rounds[r][si].qs = append(rounds[r][si].qs, q)
		}
	}
	for si, set := range sets {
		if !together && sharesPeople(set) {
			continue
		}
		for r := range rounds {
			rounds[r][si].convs = set.convs
			if r == 0 {
				rounds[r][si].qs = set.qs
			}
		}
	}
	return rounds
}

// sharesPeople reports whether someone talks in two of set's
// conversations.
func sharesPeople(set *retrievalSet) bool {
	seen := map[string]bool{}
	for _, c := range set.convs {
		for _, p := range c.people {
			if seen[p] {
				return true
			}
			seen[p] = true
		}
	}
	return false
}

// planted are the benchmarks' conversations written as Claude Code
// session files under root, a project each.
type planted struct {
	root string
	sets []*retrievalSet
	// projects[s][c] is the project of conversation c of set s, and
	// dirs[s][c] its directory (the sessions' working directory).
	projects [][]string
	dirs     [][]string
	// names maps a file's session id to "set/conversation/session".
	names map[string]string
}

func (p *planted) describe() string { return describeSets(p.sets) }

// describeSets says what sets plant and ask.
func describeSets(sets []*retrievalSet) string {
	var parts []string
	for _, s := range sets {
		n, m := 0, 0
		for _, c := range s.convs {
			n += len(c.sessions)
			for _, ss := range c.sessions {
				m += len(ss.turns)
			}
		}
		parts = append(parts, fmt.Sprintf("%s (%d conversations, %d sessions, %d messages, %d questions)", s.name, len(s.convs), n, m, len(s.qs)))
	}
	return strings.Join(parts, ", ")
}

// goldOf is question q's evidence sessions as "set/conversation/session".
func (p *planted) goldOf(set *retrievalSet, q retrievalQuestion) []string {
	gold := make([]string, len(q.gold))
	for i, g := range q.gold {
		gold[i] = set.name + "/" + set.convs[q.conv].name + "/" + g
	}
	return gold
}

// plantScale writes sets' conversations under root, each recorded in a
// working directory of its own under projects: made there, so that a
// whole command run in it finds the conversation's project, or named
// /bench/SET/CONVERSATION and not made when projects is "".
func plantScale(root, projects string, sets []*retrievalSet) (*planted, error) {
	p := &planted{root: root, sets: sets, names: map[string]string{}}
	if projects != "" {
		if err := os.MkdirAll(projects, 0o755); err != nil {
			return nil, err
		}
		// The project of a directory is that of its path with no link
		// in it, as loom finds it from the directory it runs in.
		real, err := filepath.EvalSymlinks(projects)
		if err != nil {
			return nil, err
		}
		projects = real
	}
	for _, set := range sets {
		var ids, dirs []string
		for i, c := range set.convs {
			cwd := fmt.Sprintf("/bench/%s/%s", set.name, c.name)
			if projects != "" {
				cwd = filepath.Join(projects, set.name, c.name)
				if err := os.MkdirAll(cwd, 0o755); err != nil {
					return nil, err
				}
			}
			names := map[string]string{}
			if err := writeConv(filepath.Join(root, fmt.Sprintf("-bench-%s-%d", set.name, i)), cwd, set.name, c, names, false); err != nil {
				return nil, err
			}
			for id, s := range names {
				p.names[id] = set.name + "/" + c.name + "/" + s
			}
			ids, dirs = append(ids, paths.ProjectOf(cwd).ID), append(dirs, cwd)
		}
		p.projects, p.dirs = append(p.projects, ids), append(p.dirs, dirs)
	}
	return p, nil
}

// scaleBuilt is the note written beside a store once it is whole: the
// store is reused when the note says the same.
func scaleBuilt(messages, projects, vocab int, pl *planted) string {
	return fmt.Sprintf("%d filler messages, %d projects, %d words; planted %s in projects %s\n", messages, projects, vocab, pl.describe(), strings.Join(slices.Concat(pl.projects...), ","))
}

// keepBuilt builds the opened store st with build, then writes want to
// mark, so that the next run finds the store whole and reuses it; st is
// closed when either fails.
func keepBuilt(st loom.Engine, mark, want string, build func() (string, error)) (loom.Engine, string, error) {
	note, err := build()
	if err == nil {
		err = os.WriteFile(mark, []byte(want), 0o644)
	}
	if err != nil {
		st.Close()
		return nil, "", err
	}
	return st, note, nil
}

func openScaleSQLite(ctx context.Context, o scaleOptions, files string, pl *planted, vocab []string) (loom.Engine, string, error) {
	mark := o.store + ".built"
	want := scaleBuilt(o.messages, o.projects, len(vocab), pl)
	if b, err := os.ReadFile(mark); err == nil && string(b) == want {
		st, err := sqlite.Open(ctx, o.store)
		return st, "SQLite: the store " + o.store + " was there (no build this run).", err
	}
	removeStore(o.store)
	os.Remove(mark)
	st, err := sqlite.Open(ctx, o.store)
	if err != nil {
		return nil, "", err
	}
	return keepBuilt(st, mark, want, func() (string, error) {
		return buildScale(ctx, st, "SQLite", files, pl, vocab, o.messages, o.projects, func() error { return st.MergeIndex(ctx) })
	})
}

// openScalePostgres opens the store in o.pgSchema, building it there
// (the schema made anew) unless a note beside o.store says it is whole.
func openScalePostgres(ctx context.Context, o scaleOptions, files string, pl *planted, vocab []string) (loom.Engine, string, error) {
	mark := o.store + ".pg-" + o.pgSchema + ".built"
	want := scaleBuilt(o.pgMessages, o.projects, len(vocab), pl)
	u, err := schemaURL(o.postgres, o.pgSchema)
	if err != nil {
		return nil, "", err
	}
	if b, err := os.ReadFile(mark); err == nil && string(b) == want {
		st, err := postgres.Open(ctx, u)
		return st, "PostgreSQL: the store in schema " + o.pgSchema + " was there (no build this run).", err
	}
	os.Remove(mark)
	conn, err := pgx.Connect(ctx, o.postgres)
	if err != nil {
		return nil, "", fmt.Errorf("PostgreSQL at %s: %w", redact(o.postgres), err)
	}
	_, err = conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{o.pgSchema}.Sanitize()+` CASCADE; CREATE SCHEMA `+pgx.Identifier{o.pgSchema}.Sanitize())
	conn.Close(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("schema %s: %w", o.pgSchema, err)
	}
	st, err := postgres.Open(ctx, u)
	if err != nil {
		return nil, "", err
	}
	return keepBuilt(st, mark, want, func() (string, error) {
		return buildScale(ctx, st, "PostgreSQL", files, pl, vocab, o.pgMessages, o.projects, func() error { return nil })
	})
}

// buildScale imports the planted conversations through loom's importer,
// then messages filler messages through the engine's bulk import, and
// says how long each took.
func buildScale(ctx context.Context, st loom.Engine, engine, files string, pl *planted, vocab []string, messages, projects int, merge func() error) (string, error) {
	t0 := time.Now()
	if err := importRetrieval(ctx, st, files, pl.names, map[string]string{}); err != nil {
		return "", err
	}
	planted := time.Since(t0)
	g := newGeneratorOf(82, vocab)
	var batch []*loom.SessionData
	n, sessions := 0, 0
	var spent time.Duration
	put := func() error {
		t := time.Now()
		err := st.Import(ctx, batch)
		spent += time.Since(t)
		batch = nil
		fmt.Fprintf(os.Stderr, "\r%s: %d filler messages in %d sessions", engine, n, sessions)
		return err
	}
	for n < messages {
		m := min(20+g.r.IntN(161), messages-n)
		p := sessions % projects
		project := loom.Project{ID: fmt.Sprintf("f%015x", p+1), Name: fmt.Sprintf("work%04d", p), Root: fmt.Sprintf("/src/work%04d", p)}
		batch = append(batch, g.fillerSession(scaleTools[sessions%len(scaleTools)], m, project))
		n += m
		sessions++
		if len(batch) == 100 {
			if err := put(); err != nil {
				return "", err
			}
		}
	}
	if len(batch) > 0 {
		if err := put(); err != nil {
			return "", err
		}
	}
	fmt.Fprintln(os.Stderr)
	t := time.Now()
	if err := merge(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: built in %s: the planted conversations imported in %s, %d filler messages in %d sessions at %.0f messages/s (Import), the index merged in %s; load %s.",
		engine, time.Since(t0).Round(time.Second), planted.Round(time.Millisecond), n, sessions, float64(n)/spent.Seconds(),
		time.Since(t).Round(time.Millisecond), loadAverage()), nil
}

// fillerSession is a session of n messages of tool in project, user and
// assistant in turn, of the generator's words.
func (g *generator) fillerSession(tool string, n int, project loom.Project) *loom.SessionData {
	g.n++
	id := loom.NewID()
	title := g.text()
	if i := strings.LastIndexByte(title[:min(len(title), 60)], ' '); i > 0 {
		title = title[:i]
	}
	s := &loom.Session{ID: id, UserID: "bench", Key: fmt.Sprintf("%s:filler-%d", tool, g.n), Surface: tool, Kind: loom.KindMain,
		Project: project, Cwd: project.Root, Title: title, Source: &loom.Source{Tool: tool}, CreatedAt: g.now}
	msgs := make([]*loom.Message, 0, n)
	for i := 1; i <= n; i++ {
		g.now = g.now.Add(time.Duration(500+g.r.IntN(5000)) * time.Millisecond)
		done := g.now
		m := &loom.Message{ID: loom.NewID(), SessionID: id, Seq: int64(i), CreatedAt: g.now, CompletedAt: &done, Role: loom.RoleUser,
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: g.text()}}}
		if i%2 == 0 {
			m.Role = loom.RoleAssistant
		}
		msgs = append(msgs, m)
	}
	s.UpdatedAt = g.now
	return &loom.SessionData{Session: s, Messages: msgs}
}
