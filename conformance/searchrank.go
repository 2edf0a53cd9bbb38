package conformance

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/recall"
	"github.com/loomhq/loom/snippet"
)

// A query is bounded in length and words (loom.ParseQuery): beyond, it is
// refused at once as invalid input, whatever its engine; repeated words
// count once.
func testSearchLimits(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, text(loom.RoleUser, "the connection pool of postgres"), text(loom.RoleAssistant, strings.Repeat("pool size ", 2000)))
	search := func(q loom.SearchQuery) ([]loom.SearchHit, error) {
		q.UserID = "alice"
		return st.Search(ctx(t), q)
	}
	distinct := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("pool%d", i)
		}
		return strings.Join(ws, " ")
	}
	// What the agent's session_search was once given: a 36 KB prompt.
	pasted := strings.Repeat("pool size connection postgres ", 1200)
	for _, q := range []loom.SearchQuery{
		{Text: pasted, Exact: true},
		{Text: `"` + pasted + `"`, Exact: true},
		{Text: distinct(loom.MaxQueryWords + 1), Exact: true},
		{Text: pasted, Raw: true},
		{Text: strings.TrimSpace(strings.Repeat("pool ", loom.MaxQueryWords+1)), Raw: true},
	} {
		_, err := search(q)
		if loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(err.Error(), "at most") {
			t.Errorf("search of %d bytes (raw %v) = %v, want a refusal naming the limit", len(q.Text), q.Raw, err)
		}
	}
	if _, err := search(loom.SearchQuery{Text: distinct(loom.MaxQueryWords)}); err != nil {
		t.Errorf("search of %d words: %v", loom.MaxQueryWords, err)
	}
	// A plain query is never refused: over the limits, its first words
	// find what holds some of them.
	for _, q := range []string{pasted, `"` + pasted + `"`, "postgres " + distinct(loom.MaxQueryWords+1)} {
		hits, err := search(loom.SearchQuery{Text: q})
		if err != nil || len(hits) == 0 || hits[0].Tier == "" {
			t.Errorf("plain search of %d bytes = %+v, %v; want hits of a tier", len(q), hits, err)
		}
	}
	// Repeated words are searched once.
	want, err := search(loom.SearchQuery{Text: "pool size", Exact: true})
	if err != nil || len(want) != 1 {
		t.Fatalf("search = %+v, %v", want, err)
	}
	repeated := strings.Repeat("pool Size POOL ", loom.MaxQueryBytes/len("pool Size POOL "))
	if got, err := search(loom.SearchQuery{Text: repeated, Exact: true}); err != nil || len(got) != 1 || got[0].MessageID != want[0].MessageID || got[0].Score != want[0].Score {
		t.Errorf("search of repeated words = %+v, %v; want %+v", got, err, want)
	}
	// Listing sessions by a text no search would take still lists them
	// by their other fields.
	if _, err := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", Text: pasted}); err != nil {
		t.Errorf("listing by a long text: %v", err)
	}
}

// A 20 MB message is searched like any other: its snippet is cut from
// around the match (package snippet reads a bounded part of it), and a
// search whose context ends stops.
func testLongMessage(t *testing.T, open Opener) {
	st := open(t)
	words := strings.Fields("session message agent model tool search index store write read fork project memory context token cost usage append stream reply")
	r := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	b.WriteString("(start) ")
	for b.Len() < 20<<20 {
		if b.Len() >= 100<<10 && b.Len() < 100<<10+8 {
			b.WriteString("needle ")
		}
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
	}
	b.WriteString("haystack.")
	long := b.String()
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, text(loom.RoleUser, "a short needle"), text(loom.RoleAssistant, long))

	for _, q := range []string{"needle", "haystack"} {
		hits, err := st.Search(ctx(t), loom.SearchQuery{Text: q, UserID: "alice"})
		if err != nil || len(hits) == 0 || hits[0].Seq > 2 {
			t.Fatalf("search %q = %+v, %v", q, hits, err)
		}
		for _, h := range hits {
			body := map[int64]string{1: "a short needle", 2: long}[h.Seq]
			want := snippet.NewMatcher(q).Make(body, loom.DefaultMarkStart, loom.DefaultMarkEnd)
			if h.Snippet != want || len(strings.Fields(h.Snippet)) > snippet.Words+2 {
				t.Errorf("search %q: snippet of message %d = %q, want %q", q, h.Seq, h.Snippet, want)
			}
		}
	}

	// A context that has ended stops a search before it starts, and one
	// that ends while it runs stops it promptly (or it has finished).
	// The queries hold words the message holds hundreds of thousands of
	// times, all distinct or repeated up to the query's length: ranking
	// the message once took minutes for the latter, in one step that
	// nothing interrupted.
	c, cancel := context.WithCancel(ctx(t))
	cancel()
	if _, err := st.Search(c, loom.SearchQuery{Text: "needle", UserID: "alice"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("search with a cancelled context = %v", err)
	}
	some := strings.Join(words[:8], " ") + " "
	for _, tc := range []struct {
		query string
		after time.Duration
	}{
		{strings.Join(words, " "), 20 * time.Millisecond},
		{strings.Repeat(some, loom.MaxQueryBytes/len(some)), 20 * time.Millisecond},
		{strings.Repeat(some, loom.MaxQueryBytes/len(some)), 300 * time.Millisecond},
	} {
		c, cancel := context.WithCancel(ctx(t))
		cancelled := make(chan time.Time, 1)
		timer := time.AfterFunc(tc.after, func() { cancelled <- time.Now(); cancel() })
		start := time.Now()
		_, err := st.Search(c, loom.SearchQuery{Text: tc.query, UserID: "alice"})
		timer.Stop()
		select {
		case at := <-cancelled:
			// Seconds at most on a loaded machine; unbounded, this
			// took minutes.
			if d := time.Since(at); d > 10*time.Second {
				t.Errorf("search of %d bytes returned %v after its context was cancelled", len(tc.query), d)
			}
		default:
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled search = %v, want the context's error", err)
		}
		t.Logf("search of %d bytes cancelled after %v: returned after %v: %v", len(tc.query), tc.after, time.Since(start), err)
		cancel()
	}
}

// testSearchRareAmongCommon: a question whose one rare word is in an old
// message, and whose common word is in more newer messages than an
// engine ranks at once, finds the old message first (issue 82).
func testSearchRareAmongCommon(t *testing.T, open Opener) {
	RareAmongCommon(t, open(t), 2100)
}

// RareAmongCommon checks that one message "Audrey: I think positive
// reinforcement training is important for pets." followed by notes newer
// messages "Bob: I think so, note i." is the first of three hits for
// "Why does Audrey think reinforcement matters?": the rare words choose
// what is ranked, and "think", in every message, only adds to scores. No
// cap on how many matches are ranked may answer with the newest of them
// instead. The engines' tests call it with 200,000 notes too (PostgreSQL's
// as a benchmark).
func RareAmongCommon(t testing.TB, st loom.Store, notes int) {
	t.Helper()
	s := newSession("alice", "cli:pets")
	d := RareAmongCommonSession(s, notes)
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := st.Import(c, []*loom.SessionData{d}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []loom.SearchQuery{
		{Text: RareAmongCommonQuestion, UserID: "alice", Limit: 3},
		{Text: RareAmongCommonQuestion, UserID: "alice", Limit: 3, ProjectID: s.Project.ID},
		{Text: "audrey think", UserID: "alice", Limit: 3, AnyWord: true},
	} {
		// A search refused for running out of time (a busy machine) is
		// no answer, right or wrong: it is asked again.
		start := time.Now()
		hits, err := searchAgain(c, st, q)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		t.Logf("search %q among %d: %v", q.Text, notes, time.Since(start))
		if len(hits) == 0 || hits[0].Seq != 1 {
			t.Fatalf("search %q among %d newer matches of a common word: first hit is not the rare word's message: %+v", q.Text, notes, hits)
		}
		for i, h := range hits {
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("hits not best first: %+v", hits)
			}
		}
		if !strings.Contains(hits[0].Snippet, loom.DefaultMarkStart+"Audrey"+loom.DefaultMarkEnd) {
			t.Fatalf("snippet %q", hits[0].Snippet)
		}
	}
	recallRareAmongCommon(t, c, st, s.Project.ID, notes)
}

// RareAmongCommonQuestion is the question RareAmongCommon asks: its rare
// word (Audrey) is in one old message, its common one (think) in every
// message of the store.
const RareAmongCommonQuestion = "Why does Audrey think reinforcement matters?"

// RareAmongCommonSession is s (its project and user as given) holding
// RareAmongCommon's messages, a second apart from 2026-01-01: "Audrey: I
// think positive reinforcement training is important for pets." and
// then notes newer "Bob: I think so, note i.", for an engine's Import
// (the command tests fill a store with it and ask the loom binary).
func RareAmongCommonSession(s *loom.Session, notes int) *loom.SessionData {
	lines := make([]string, 0, notes+1)
	lines = append(lines, "Audrey: I think positive reinforcement training is important for pets.")
	for i := 1; i <= notes; i++ {
		lines = append(lines, fmt.Sprintf("Bob: I think so, note %d.", i))
	}
	return sessionOf(s, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), lines)
}

// recallRareAmongCommon checks what loom recall and the hooks give for
// RareAmongCommon's question in its store: Audrey's message first, as
// the search has it, in the project and across projects, however many
// newer notes hold its common word; never Bob's notes in its place
// with nothing said (recall once answered with the newest matches over
// a store of 100,000 messages). With a hook's budget (100 ms from the
// recall's start) the answer is Audrey's message first or says it is
// partial.
func recallRareAmongCommon(t testing.TB, c context.Context, st loom.Store, project string, notes int) {
	t.Helper()
	const question = RareAmongCommonQuestion
	for _, o := range []recall.Options{
		{Prompt: question, UserID: "alice", ProjectID: project},
		{Prompt: question, UserID: "alice"},
	} {
		start := time.Now()
		res, err := recall.Recall(c, st, o)
		// A recall whose search was refused for running out of time
		// before any hit (a busy machine) is no answer: asked again.
		for try := 1; err == nil && res.Partial && len(res.Turns) == 0 && try < 10; try++ {
			res, err = recall.Recall(c, st, o)
		}
		if err != nil {
			t.Fatalf("recall %+v: %v", o, err)
		}
		t.Logf("recall %q (project %q) among %d: %v, partial %v", question, o.ProjectID, notes, time.Since(start), res.Partial)
		if len(res.Turns) == 0 || !strings.HasPrefix(res.Turns[0].Text, "Audrey:") {
			t.Fatalf("recall %q (project %q) among %d newer matches of a common word: the first turn is not the rare word's message: %+v",
				question, o.ProjectID, notes, res.Turns)
		}
		// As a hook asks it: within 100 ms, Audrey's message first or
		// partial.
		o.Deadline = time.Now().Add(100 * time.Millisecond)
		start = time.Now()
		res, err = recall.Recall(c, st, o)
		if err != nil {
			t.Fatalf("recall %+v: %v", o, err)
		}
		t.Logf("recall %q (project %q) among %d, with a hook's 100 ms: %v, partial %v, %d turns", question, o.ProjectID, notes, time.Since(start), res.Partial, len(res.Turns))
		if !res.Partial && (len(res.Turns) == 0 || !strings.HasPrefix(res.Turns[0].Text, "Audrey:")) {
			t.Fatalf("recall %q with a hook's budget among %d newer matches: not partial, and the first turn is not the rare word's message: %+v",
				question, notes, res.Turns)
		}
	}
}

// sessionOf is s with lines as its messages from the user, a second
// apart from at.
func sessionOf(s *loom.Session, at time.Time, lines []string) *loom.SessionData {
	s.Kind, s.MessageCount, s.TurnCount, s.CreatedAt, s.UpdatedAt = loom.KindMain, len(lines), len(lines), at, at.Add(time.Duration(len(lines)-1)*time.Second)
	d := &loom.SessionData{Session: s}
	for i, line := range lines {
		d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), SessionID: s.ID, Seq: int64(i + 1), Role: loom.RoleUser, Turn: i + 1,
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: line}}, CreatedAt: at.Add(time.Duration(i) * time.Second)})
	}
	return d
}

// testSearchRareAmongCommonElsewhere: within a project, a question whose
// common word fills another project finds its own project's message of
// its rare word first, ranked in full.
func testSearchRareAmongCommonElsewhere(t *testing.T, open Opener) {
	RareAmongCommonElsewhere(t, open(t), 2100)
}

// RareAmongCommonElsewhere checks a project's search where the question's
// common word is in notes newer messages of another project and in 40 of
// its own: "Why does Audrey think reinforcement matters?" and the
// any-word "audrey think", asked in the project of "Audrey: I think
// positive reinforcement training is important for pets.", have it
// first, only the project's messages after it, best first, and not
// partial: every match the project holds was ranked. The engines' tests
// call it with more notes than an engine walks at once too (SQLite's
// ScanDepth), where a project's few matches are ranked among all of the
// word's: that ranking once took seconds in a store of a million
// messages and was refused.
func RareAmongCommonElsewhere(t testing.TB, st loom.Store, notes int) {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mine := newSession("alice", "cli:pets-mine")
	other := newSession("alice", "cli:pets-other")
	other.Project = loom.Project{ID: "fedcba9876543210", Name: "kennel", Root: "/src/kennel"}
	other.Cwd = other.Project.Root
	own := []string{"Audrey: I think positive reinforcement training is important for pets."}
	for i := 1; i <= 40; i++ {
		own = append(own, fmt.Sprintf("Carol: I think so too, entry %d.", i))
	}
	var elsewhere []string
	for i := 1; i <= notes; i++ {
		elsewhere = append(elsewhere, fmt.Sprintf("Bob: I think so, note %d.", i))
	}
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := st.Import(c, []*loom.SessionData{sessionOf(mine, t0, own), sessionOf(other, t0.Add(time.Hour), elsewhere)}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []loom.SearchQuery{
		{Text: "Why does Audrey think reinforcement matters?", UserID: "alice", Limit: 5, ProjectID: mine.Project.ID},
		{Text: "audrey think", UserID: "alice", Limit: 5, AnyWord: true, ProjectID: mine.Project.ID},
	} {
		start := time.Now()
		hits, err := searchAgain(c, st, q)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		t.Logf("search %q in a project, %d notes elsewhere: %v", q.Text, notes, time.Since(start))
		if len(hits) != 5 || hits[0].SessionID != mine.ID || hits[0].Seq != 1 {
			t.Fatalf("search %q in its project, %d newer matches of its common word elsewhere: first hit is not the rare word's message: %+v", q.Text, notes, hits)
		}
		for i, h := range hits {
			if h.SessionID != mine.ID {
				t.Fatalf("search %q in its project: a hit of another project: %+v", q.Text, h)
			}
			if h.Partial {
				t.Fatalf("search %q in its project: partial, though the project's %d matches could all be ranked: %+v", q.Text, len(own), hits)
			}
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("hits not best first: %+v", hits)
			}
		}
	}
}

// testSearchWordsMeet: among the messages that hold some of a question's
// words, one in which several of them meet ranks above one that says a
// single word of it, however rare that word and however often said (a
// tool's log): the some-words tier weighs each message by the share of
// the question's words it holds (issue 82: recall across projects
// answered with such logs).
func testSearchWordsMeet(t *testing.T, open Opener) {
	t.Run("few matches", func(t *testing.T) { wordsMeet(t, open, 0) })
	// More matches than an engine ranks at once: the rare words select
	// the messages to rank, and the share is counted the same way.
	t.Run("more than the engines rank at once", func(t *testing.T) { wordsMeet(t, open, 2100) })
}

// wordsMeet is testSearchWordsMeet, with notes more messages holding
// one of the question's common words.
func wordsMeet(t *testing.T, open Opener, notes int) {
	st := open(t)
	s := newSession("alice", fmt.Sprintf("cli:ops-%d", notes))
	var msgs []*loom.Message
	for i := range notes {
		msgs = append(msgs, text(loom.RoleAssistant, fmt.Sprintf("Checked the nightly logs, note %d.", i)))
	}
	for i := range 24 {
		msgs = append(msgs,
			text(loom.RoleAssistant, fmt.Sprintf("Checked the nightly logs, run %d.", i)),
			text(loom.RoleAssistant, fmt.Sprintf("The backup finished, run %d.", i)),
			text(loom.RoleAssistant, fmt.Sprintf("Queued another job, run %d.", i)),
			text(loom.RoleAssistant, fmt.Sprintf("Disk usage is fine, run %d.", i)))
	}
	msgs = append(msgs,
		text(loom.RoleAssistant, "Queue: filled, filled, filled."),
		text(loom.RoleAssistant, "The nightly backup job ran again once we freed space on the disk."))
	mustAppend(t, st, s, msgs...)
	const question = "how did the nightly backup job recover after the disk filled up?"
	for _, q := range []loom.SearchQuery{
		{Text: question, UserID: "alice", Limit: 3},
		{Text: "nightly backup job recover disk filled", UserID: "alice", Limit: 3, AnyWord: true},
	} {
		hits, err := st.Search(ctx(t), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || !strings.Contains(hits[0].Snippet, "freed space") {
			t.Fatalf("search %q (any word %v, %d notes): the message where its words meet is not first: %+v", q.Text, q.AnyWord, notes, hits)
		}
	}
}
