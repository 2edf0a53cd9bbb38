package main

// The retrieval run: how well search finds, on two public benchmarks of
// long-term memory (LoCoMo, LongMemEval), through the path a user's
// sessions take. Each conversation's sessions are written as Claude Code
// session files, imported by loom's importer into a new store, and each
// question is searched with its text as it is, in its conversation's
// project, keyword tiers only (no model, no rewriting of the question).
// A question hits at k when one of the sessions holding its evidence is
// among the first k distinct sessions of the search's hits.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/semantic"
	"github.com/loomhq/loom/sqlite"
)

// retrievalSet is a benchmark read from its data file.
type retrievalSet struct {
	name  string
	convs []retrievalConv
	qs    []retrievalQuestion
	// cats are the question categories in the order they are reported,
	// with their names.
	cats  []string
	names map[string]string
}

// retrievalConv is one conversation: a project of sessions.
type retrievalConv struct {
	name     string
	sessions []retrievalSession
	// people are the people who talk in it, where the dataset names the
	// same person in several conversations (REALTALK's file names);
	// empty where each conversation is of people of its own (LoCoMo).
	people []string
}

// retrievalSession is one session of a conversation, named by the
// dataset's id.
type retrievalSession struct {
	id    string
	start time.Time
	turns []retrievalTurn
}

type retrievalTurn struct {
	assistant bool
	text      string
	// at is when the turn was written, where the dataset says (REALTALK);
	// else the session's start and a minute a turn.
	at time.Time
}

// retrievalQuestion is a question asked in conversation conv, with the
// ids of the sessions that hold its evidence.
type retrievalQuestion struct {
	conv     int
	text     string
	category string
	gold     []string
}

// retrievalOptions say how the run is made.
type retrievalOptions struct {
	// bare writes the lines as deja-vu's harnesses write them: no uuid,
	// no working directory; each conversation then goes to a store of its
	// own, searched whole.
	bare bool
	// postgres, when set, is the server whose fresh schema is the store.
	postgres string
	limit    int
	misses   string
	out      string
	keep     bool
	// embed, when set, also ranks by keywords and meaning fused, as
	// loom search does with an embeddings endpoint: the URL of one (with
	// /v1), or a stand-in served here ("hash", "unrelated"; see
	// standIn), with embedModel.
	embed      string
	embedModel string
}

// retrievalMain runs set through loom and prints the figures.
func retrievalMain(ctx context.Context, out io.Writer, dir string, set *retrievalSet, o retrievalOptions) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	work, err := os.MkdirTemp(dir, "retrieval-"+set.name+"-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(work)
	}
	fmt.Fprintf(os.Stderr, "%s: writing %d conversations as Claude Code session files under %s\n", set.name, len(set.convs), work)
	// Each conversation's files in a directory of its own; each store
	// is searched per project (or, bare, a store per conversation).
	projects := make([]string, len(set.convs))
	names := map[string]string{} // Claude Code session id → dataset session id
	for i, c := range set.convs {
		dirName := fmt.Sprintf("-bench-%s-%d", set.name, i)
		cwd := fmt.Sprintf("/bench/%s/%s", set.name, c.name)
		if err := writeConv(filepath.Join(work, "projects", dirName), cwd, set.name, c, names, o.bare); err != nil {
			return err
		}
		projects[i] = paths.ProjectOf(cwd).ID
	}
	stores := make([]loom.Engine, len(set.convs))
	keys := map[string]string{} // loom session id → dataset session id
	t0 := time.Now()
	if o.bare {
		for i := range set.convs {
			st, done, err := openRetrievalStore(ctx, filepath.Join(work, fmt.Sprintf("conv%d.db", i)), o.postgres)
			if err != nil {
				return err
			}
			defer done()
			if err := importRetrieval(ctx, st, filepath.Join(work, "projects", fmt.Sprintf("-bench-%s-%d", set.name, i)), names, keys); err != nil {
				return err
			}
			stores[i], projects[i] = st, ""
		}
	} else {
		st, done, err := openRetrievalStore(ctx, filepath.Join(work, "sessions.db"), o.postgres)
		if err != nil {
			return err
		}
		defer done()
		if err := importRetrieval(ctx, st, filepath.Join(work, "projects"), names, keys); err != nil {
			return err
		}
		for i := range stores {
			stores[i] = st
		}
	}
	fmt.Fprintf(os.Stderr, "%s: imported %d sessions in %s; asking %d questions\n", set.name, len(keys), time.Since(t0).Round(time.Millisecond), len(set.qs))
	var searchers []*semantic.Searcher
	if o.embed != "" {
		if o.bare {
			return fmt.Errorf("-embed: not with -bare")
		}
		sr, done, err := embedRetrieval(ctx, stores[0], &o)
		if err != nil {
			return err
		}
		defer done()
		for range stores {
			searchers = append(searchers, sr)
		}
	}
	fByCat := map[string]*retrievalScore{}
	fTotal := &retrievalScore{}
	var fWorse, fBetter int
	misses, closeMisses, err := jsonLines(o.misses)
	if err != nil {
		return err
	}
	defer closeMisses()
	byCat := map[string]*retrievalScore{}
	total := &retrievalScore{}
	// byTier counts the questions by the tier of their first hit, and
	// those whose first hit was right.
	byTier := map[string][2]int{}
	for n, q := range set.qs {
		sq := loom.SearchQuery{Text: q.text, UserID: "bench", ProjectID: projects[q.conv], Limit: o.limit}
		t := time.Now()
		hits, err := retryBusy(func() ([]loom.SearchHit, error) { return stores[q.conv].Search(ctx, sq) })
		took := time.Since(t)
		if err != nil {
			return fmt.Errorf("%s: question %q: %w", set.name, q.text, err)
		}
		ranked := rankedSessions(hits, keys)
		var tiers []string
		for _, h := range hits {
			if id := keys[h.SessionID]; len(tiers) < len(ranked) && ranked[len(tiers)] == id {
				tiers = append(tiers, h.Tier)
			}
		}
		b := byCat[q.category]
		if b == nil {
			b = &retrievalScore{}
			byCat[q.category] = b
		}
		rank := goldRank(ranked, q.gold)
		for _, s := range []*retrievalScore{b, total} {
			s.add(rank, ranked, q.gold, took)
		}
		if len(tiers) > 0 {
			c := byTier[tiers[0]]
			c[0]++
			if rank == 1 {
				c[1]++
			}
			byTier[tiers[0]] = c
		}
		if misses != nil && rank != 1 {
			top := ranked[:min(5, len(ranked))]
			misses.Encode(map[string]any{"conv": set.convs[q.conv].name, "category": set.names[q.category], "question": q.text,
				"gold": q.gold, "rank": rank, "top": top, "tiers": tiers[:len(top)]})
		}
		if searchers != nil {
			t := time.Now()
			var res semantic.Result
			_, err := retryBusy(func() ([]loom.SearchHit, error) {
				var err error
				res, err = searchers[q.conv].Search(ctx, sq, semantic.Fused)
				return res.Hits, err
			})
			took := time.Since(t)
			if err != nil {
				return fmt.Errorf("%s: question %q fused: %w", set.name, q.text, err)
			}
			if res.Note != "" {
				return fmt.Errorf("%s: question %q fused: %s", set.name, q.text, res.Note)
			}
			franked := rankedSessions(res.Hits, keys)
			frank := goldRank(franked, q.gold)
			fb := fByCat[q.category]
			if fb == nil {
				fb = &retrievalScore{}
				fByCat[q.category] = fb
			}
			for _, s := range []*retrievalScore{fb, fTotal} {
				s.add(frank, franked, q.gold, took)
			}
			switch {
			case rank == 1 && frank != 1:
				fWorse++
			case rank != 1 && frank == 1:
				fBetter++
			}
		}
		if (n+1)%500 == 0 {
			fmt.Fprintf(os.Stderr, "%s: %d questions asked\n", set.name, n+1)
		}
	}
	var b strings.Builder
	engine := "SQLite"
	if o.postgres != "" {
		engine = "PostgreSQL"
	}
	shape := "Claude Code session files (uuid, parent, working directory), one project per conversation"
	if o.bare {
		shape = "lines as deja-vu's harness writes them (no uuid, no working directory), one store per conversation"
	}
	fmt.Fprintf(&b, "%s through loom's importer and search (%s, keyword tiers, no model): %d questions, %d sessions; %s; %d cores, %s.\n\n",
		set.name, engine, total.n, len(keys), shape, runtime.NumCPU(), runtime.Version())
	scoreTable(&b, set, byCat, total)
	var tierNames []string
	for t := range byTier {
		tierNames = append(tierNames, t)
	}
	slices.Sort(tierNames)
	fmt.Fprint(&b, "\nThe first hit's tier:")
	for _, t := range tierNames {
		c, name := byTier[t], t
		if name == "" {
			name = "every word"
		}
		fmt.Fprintf(&b, " %s %d (right %.1f%%);", name, c[0], 100*float64(c[1])/float64(c[0]))
	}
	fmt.Fprintln(&b)
	if searchers != nil {
		fmt.Fprintf(&b, "\nFused with ranking by meaning (embedder %s, model %s), as loom search ranks with an embeddings endpoint:\n\n", o.embed, o.embedModel)
		scoreTable(&b, set, fByCat, fTotal)
		fmt.Fprintf(&b, "\nFirst by keywords and not fused: %d; first fused and not by keywords: %d.\n", fWorse, fBetter)
	}
	fmt.Fprint(out, b.String())
	if o.out != "" {
		return os.WriteFile(o.out, []byte(b.String()), 0o644)
	}
	return nil
}

// openRetrievalStore opens a new store: a SQLite file, or a fresh schema
// of the PostgreSQL server, which closing the store drops.
func openRetrievalStore(ctx context.Context, file, server string) (loom.Engine, func(), error) {
	if server == "" {
		st, err := sqlite.Open(ctx, file)
		if err != nil {
			return nil, nil, err
		}
		return st, func() { st.Close() }, nil
	}
	u, drop, err := postgresSchema(ctx, server, "loombench_retrieval_")
	if err != nil {
		return nil, nil, err
	}
	st, err := postgres.Open(ctx, u)
	if err != nil {
		drop()
		return nil, nil, err
	}
	return st, func() { st.Close(); drop() }, nil
}

// importRetrieval imports the Claude Code files under root, as `loom
// session import` does, and fills keys with the dataset's id of each
// session stored.
func importRetrieval(ctx context.Context, st loom.Engine, root string, names, keys map[string]string) error {
	im := &importer.Importer{Store: st, UserID: "bench", Project: paths.ProjectOf}
	rep, err := im.Run(ctx, []importer.Target{{Format: claudecode.New(), Roots: []string{root}, Explicit: true}})
	if err != nil {
		return err
	}
	for _, t := range rep.Tools {
		if t.ProblemCount > 0 {
			return fmt.Errorf("import of %s: %d problems", root, t.ProblemCount)
		}
	}
	return sessionKeys(ctx, st, names, keys)
}

// sessionKeys fills keys with the dataset's id of each session of st
// whose Claude Code session id names names.
func sessionKeys(ctx context.Context, st loom.Engine, names, keys map[string]string) error {
	for cursor := (*loom.Cursor)(nil); ; {
		ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "bench", Limit: 1000, Before: cursor})
		if err != nil {
			return err
		}
		for _, s := range ss {
			if id, ok := names[strings.TrimPrefix(s.Key, claudecode.Tool+":")]; ok {
				keys[s.ID] = id
			}
		}
		if len(ss) < 1000 {
			return nil
		}
		cursor = loom.CursorAfter(ss[len(ss)-1])
	}
}

// writeConv writes conversation c's sessions as Claude Code session files
// in dir, recorded in working directory cwd, and names each file's
// session id in names.
func writeConv(dir, cwd, set string, c retrievalConv, names map[string]string, bare bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, s := range c.sessions {
		id := benchUUID(set + "/" + c.name + "/" + s.id)
		names[id] = s.id
		f, err := os.Create(filepath.Join(dir, id+".jsonl"))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(f)
		parent := ""
		for i, t := range s.turns {
			at := s.start.Add(time.Duration(i) * time.Minute)
			if !t.at.IsZero() {
				at = t.at
			}
			ts := at.UTC().Format(time.RFC3339Nano)
			line := map[string]any{"type": "user", "sessionId": id, "timestamp": ts}
			msg := map[string]any{"role": "user", "content": t.text}
			if t.assistant {
				line["type"] = "assistant"
				msg = map[string]any{"id": fmt.Sprintf("msg_%s_%d", id[:8], i), "type": "message", "role": "assistant",
					"model": "claude-sonnet-4-5", "content": []map[string]any{{"type": "text", "text": t.text}},
					"stop_reason": "end_turn", "usage": map[string]any{"input_tokens": 0, "output_tokens": 0}}
			}
			line["message"] = msg
			if !bare {
				uuid := benchUUID(fmt.Sprintf("%s/%d", id, i))
				var p any
				if parent != "" {
					p = parent
				}
				line["uuid"], line["parentUuid"], line["cwd"] = uuid, p, cwd
				line["isSidechain"], line["userType"], line["version"], line["gitBranch"] = false, "external", "2.0.14", ""
				parent = uuid
			}
			if err := enc.Encode(line); err != nil {
				f.Close()
				return err
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// benchUUID is a UUID made from s: the same s, the same id in every run.
func benchUUID(s string) string {
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-5" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32]
}

// embedRetrieval embeds every message of st through o's embedder, as
// loom embed does, and returns the searcher that fuses with it.
func embedRetrieval(ctx context.Context, st loom.Engine, o *retrievalOptions) (*semantic.Searcher, func(), error) {
	url, done := o.embed, func() {}
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		var err error
		if url, done, err = standIn(o.embed); err != nil {
			return nil, nil, err
		}
		if o.embedModel == "" {
			o.embedModel = "stand-in-" + o.embed
			if strings.HasPrefix(o.embed, "glove:") {
				o.embedModel = "glove"
			}
		}
	}
	if o.embedModel == "" {
		o.embedModel = "nomic-embed-text"
	}
	vs := st.Optional().Vectors
	if vs == nil {
		done()
		return nil, nil, fmt.Errorf("-embed: the store keeps no vectors")
	}
	client := embedding.New(url, o.embedModel, os.Getenv("OPENAI_API_KEY"))
	t0 := time.Now()
	n, err := (&semantic.Embedder{Store: vs, Client: client}).Run(ctx, 0)
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("-embed: %w", err)
	}
	fmt.Fprintf(os.Stderr, "embedded %d messages with %s (%s) in %s\n", n, o.embed, o.embedModel, time.Since(t0).Round(time.Millisecond))
	return &semantic.Searcher{Store: st, Client: client}, done, nil
}

// retryBusy runs a search again, up to four times, while it is refused
// for running out of time before any hit (a busy machine): the
// benchmark measures what search finds, not how busy the machine was.
func retryBusy(search func() ([]loom.SearchHit, error)) ([]loom.SearchHit, error) {
	for try := 0; ; try++ {
		hits, err := search()
		if try == 4 || !errors.Is(err, loom.ErrSearchTime) {
			return hits, err
		}
	}
}
