package recall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/fake"
	"github.com/loomhq/loom/recall"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

func store(t *testing.T) loom.Engine {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "loom.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func session(t *testing.T, st loom.Store, project, title string, texts ...string) *loom.Session {
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:" + title, Title: title, Surface: "cli",
		Project: loom.Project{ID: project, Name: project, Root: "/src/" + project}, Cwd: "/src/" + project}
	var msgs []*loom.Message
	for i, tx := range texts {
		role := loom.RoleUser
		if i%2 == 1 {
			role = loom.RoleAssistant
		}
		msgs = append(msgs, &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: tx}}})
	}
	if err := st.Append(context.Background(), s, msgs...); err != nil {
		t.Fatal(err)
	}
	return s
}

// A recall returns the turns of this project's sessions that bear on
// the prompt, best first, each with its session and date, never another
// project's or the asking session's, and within its token budget however
// long the turns are.
func TestRecall(t *testing.T) {
	ctx := context.Background()
	st := store(t)
	pool := session(t, st, "api", "Connection pool exhausted",
		"The API times out under load; the postgres connection pool is exhausted.",
		"Decided: pgxpool max_conns 32 and a 5s statement_timeout; reports moved to the sessionstore.")
	other := session(t, st, "web", "Pool in another project", "postgres connection pool of the web project")
	asking := session(t, st, "api", "Current", "why does the postgres pool time out again?")
	session(t, st, "api", "Long output", "postgres pool dump", strings.Repeat("postgres pool connection line ", 2000))

	res, err := recall.Recall(ctx, st, recall.Options{Prompt: "why does the postgres pool time out again?", UserID: "alice", ProjectID: "api", Exclude: asking.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Turns) == 0 || res.Turns[0].SessionID != pool.ID || res.Turns[0].Date.IsZero() {
		t.Fatalf("recall = %+v", res.Turns)
	}
	text := res.Text()
	for _, tr := range res.Turns {
		if tr.SessionID == other.ID || tr.SessionID == asking.ID {
			t.Fatalf("recalled %+v", tr)
		}
		if !strings.Contains(text, tr.SessionID) {
			t.Fatalf("text does not name session %s:\n%s", tr.SessionID, text)
		}
	}
	if res.Tokens > recall.DefaultTokens || res.Tokens != recall.Estimate(text) {
		t.Fatalf("recall of %d tokens (text %d), budget %d", res.Tokens, recall.Estimate(text), recall.DefaultTokens)
	}
	for _, budget := range []int{60, 120, 400} {
		res, err := recall.Recall(ctx, st, recall.Options{Prompt: "postgres pool", UserID: "alice", ProjectID: "api", Tokens: budget})
		if err != nil || res.Tokens > budget {
			t.Fatalf("recall within %d tokens = %d tokens, %v:\n%s", budget, res.Tokens, err, res.Text())
		}
	}
	// No prompt: the project's latest sessions by title.
	res, err = recall.Recall(ctx, st, recall.Options{UserID: "alice", ProjectID: "api", Exclude: asking.ID})
	if err != nil || len(res.Turns) != 2 || !strings.Contains(res.Text(), "Connection pool exhausted") {
		t.Fatalf("recall without a prompt = %+v, %v", res, err)
	}
	// Nothing related: nothing, and no text.
	if res, err := recall.Recall(ctx, st, recall.Options{Prompt: "zyzzyva quux", UserID: "alice", ProjectID: "api"}); err != nil || len(res.Turns) != 0 || res.Text() != "" {
		t.Fatalf("unrelated recall = %+v, %v", res, err)
	}
}

// Recall ranks a project's matches as the store's search does: the turn
// holding the prompt's rare words first, though newer turns hold only
// its common ones; never another project's. (Conformance's
// RareAmongCommon checks the same among 200,000 newer matches.)
func TestRecallRanksTheProjectsMatches(t *testing.T) {
	ctx := context.Background()
	st := store(t)
	decided := session(t, st, "api", "Replica lag",
		"why did the schema migration stall on the replica?",
		"Decided: run the migration with lock_timeout on the primary first.")
	for i := range 5 {
		session(t, st, "api", fmt.Sprintf("Chat %d", i), "what time is it on the server", "it is time to deploy")
	}
	session(t, st, "web", "Elsewhere", "schema migration replica in the web project")
	res, err := recall.Recall(ctx, st, recall.Options{Prompt: "why did the schema migration time out on the replica",
		UserID: "alice", ProjectID: "api"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Turns) == 0 || res.Turns[0].SessionID != decided.ID || !strings.Contains(res.Turns[0].Text, "lock_timeout") {
		t.Fatalf("recall = %+v", res.Turns)
	}
	for _, tr := range res.Turns {
		if tr.Title == "Elsewhere" {
			t.Fatalf("recall gave another project's turn: %+v", tr)
		}
	}
}

// A text said in several sessions is recalled once, naming them all; a
// turn that says what was done comes before a compaction's prompt or a
// reminder that holds the same words.
func TestRecallOnceAndOutcomesFirst(t *testing.T) {
	ctx := context.Background()
	st := store(t)
	prompt := "Your task is to create a detailed summary of the conversation so far, paying close attention to the registry of chats."
	for i := range 3 {
		session(t, st, "api", fmt.Sprintf("compacted %d", i), prompt, "Summary: chats")
	}
	session(t, st, "api", "reminder", "<system-reminder>the registry of chats is open in the editor</system-reminder>")
	decided := session(t, st, "api", "Registry", "track the chats in a registry",
		"Done: the registry of chats is a map behind a mutex; an entry goes when its chat ends.")
	res, err := recall.Recall(ctx, st, recall.Options{Prompt: "registry of chats", UserID: "alice", ProjectID: "api"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Turns) == 0 || res.Turns[0].SessionID != decided.ID {
		t.Fatalf("turns %+v", res.Turns)
	}
	n := 0
	for _, turn := range res.Turns {
		if strings.HasPrefix(turn.Text, "Your task") {
			n++
			if len(turn.AlsoIn) != 2 || !strings.Contains(res.Text(), "(also in ") {
				t.Errorf("the sessions of a repeated text: %+v\n%s", turn, res.Text())
			}
		}
	}
	if n != 1 {
		t.Errorf("the compaction prompt recalled %d times:\n%s", n, res.Text())
	}
}

// slowReads is a store whose reads of messages never end before their
// context does (a busy machine), while its search is the real one's.
type slowReads struct{ loom.Engine }

func (s slowReads) Messages(ctx context.Context, id string, q loom.MessageQuery) ([]*loom.Message, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A recall that runs out of time gives the turns it found, shorter
// (their hits' snippets) when there was no time to read them, and says
// it is partial; never other turns. One whose search found nothing in
// time is empty and partial, not an error.
func TestRecallOutOfTime(t *testing.T) {
	ctx := context.Background()
	st := store(t)
	pool := session(t, st, "api", "Connection pool exhausted",
		"The API times out under load; the postgres connection pool is exhausted.",
		"Decided: pgxpool max_conns 32 and a 5s statement_timeout.")
	session(t, st, "api", "Unrelated", "the release notes for the dashboard", "written")
	o := recall.Options{Prompt: "why does the postgres pool time out", UserID: "alice", ProjectID: "api"}
	full, err := recall.Recall(ctx, st, o)
	if err != nil || full.Partial || len(full.Turns) == 0 || full.Turns[0].SessionID != pool.ID {
		t.Fatalf("recall in time = %+v, %v", full, err)
	}
	o.Deadline = time.Now().Add(time.Second)
	res, err := recall.Recall(ctx, slowReads{st}, o)
	if err != nil || !res.Partial || len(res.Turns) == 0 {
		t.Fatalf("recall whose reads ran out of time = %+v, %v, want its hits' snippets, partial", res, err)
	}
	for _, tr := range res.Turns {
		if !slices.ContainsFunc(full.Turns, func(f recall.Turn) bool { return f.SessionID == tr.SessionID && f.Seq == tr.Seq }) {
			t.Fatalf("recall out of time gave a turn the recall in time did not: %+v", tr)
		}
	}
	// Its text says it is partial, in its last line: a hook's context
	// has no other way to tell the agent.
	if text := res.Text(); !strings.Contains(text, "pool") || !strings.HasPrefix(text[strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")+1:], "(partial:") ||
		res.Tokens != recall.Estimate(text) {
		t.Fatalf("recall out of time (%d tokens): %s", res.Tokens, text)
	}
	if strings.Contains(full.Text(), "(partial:") {
		t.Fatalf("recall in time says it is partial: %s", full.Text())
	}
	// A search that runs out of time before any hit, on an index with
	// no size to rank within.
	slowSearch := &fake.Reader{
		ReadsFn:  func() loom.Reads { return loom.Reads{} },
		SearchFn: func(context.Context, loom.SearchQuery) ([]loom.SearchHit, error) { return nil, loom.ErrSearchTime },
	}
	res, err = recall.Recall(ctx, slowSearch, recall.Options{Prompt: "postgres pool", UserID: "alice", ProjectID: "api"})
	if err != nil || !res.Partial || len(res.Turns) != 0 {
		t.Fatalf("recall whose search ran out of time = %+v, %v, want nothing, partial", res, err)
	}
	// The same through the secrets gate (what a hook and loom recall
	// redact with), with the store's own refusal: its deadline passed
	// before its search began.
	o.Redact, o.Deadline = secrets.Default(), time.Now().Add(-time.Second)
	res, err = recall.Recall(ctx, st, o)
	if err != nil || !res.Partial || len(res.Turns) != 0 {
		t.Fatalf("redacted recall whose search ran out of time = %+v, %v, want nothing, partial", res, err)
	}
}

// A reply that only says what it does next ("Now let me read the config
// file") while its tool's output holds the prompt's words is recalled
// with what matched, so the agent reads why it was recalled; a reply
// that says the words itself is recalled as it is.
func TestRecallNarrationShowsWhatMatched(t *testing.T) {
	ctx := context.Background()
	st := store(t)
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:zk", Title: "Cluster settings", Surface: "cli",
		Project: loom.Project{ID: "api", Name: "api", Root: "/src/api"}, Cwd: "/src/api"}
	out, _ := json.Marshal("zookeeper.session.timeout.ms=18000 and a quorum of five nodes")
	msgs := []*loom.Message{
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "look at the cluster settings"}}},
		{Role: loom.RoleAssistant, Parts: []loom.Part{
			{Type: loom.PartText, Text: "Now let me read the config file."},
			{Type: loom.PartTool, CallID: "c1", Name: "Read", Status: "completed", Input: json.RawMessage(`{"file_path":"conf/zoo.cfg"}`), Output: out},
		}},
		{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "The quorum needs three of the five nodes."}}},
	}
	if err := st.Append(ctx, s, msgs...); err != nil {
		t.Fatal(err)
	}
	res, err := recall.Recall(ctx, st, recall.Options{Prompt: "how long is the zookeeper session timeout?", UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Turns, func(tr recall.Turn) bool { return tr.Seq == 2 })
	if i < 0 || !strings.HasPrefix(res.Turns[i].Text, "Now let me read the config file.") || !strings.Contains(res.Turns[i].Text, "18000") {
		t.Fatalf("the narrating reply's turn does not show what matched: %+v", res.Turns)
	}
	res, err = recall.Recall(ctx, st, recall.Options{Prompt: "quorum nodes", UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	i = slices.IndexFunc(res.Turns, func(tr recall.Turn) bool { return tr.Seq == 3 })
	if i < 0 || res.Turns[i].Text != "The quorum needs three of the five nodes." {
		t.Fatalf("a reply that says the words is not recalled as it is: %+v", res.Turns)
	}
}

// A long turn is shown around the words that made it a hit, not by its
// opening alone: a compaction's summary or a long reply says what was
// asked far from its start, and a narrating reply's long text must not
// push out what matched in its tool's output.
func TestRecallLongTurnShowsWhereItMatched(t *testing.T) {
	ctx := context.Background()
	st := store(t)
	filler := strings.Repeat("The migration ran, the schema was regenerated and the page rendered again. ", 30)
	session(t, st, "api", "Review work", "what did the checks say?",
		filler+"Credo reported no issues after the alias ordering fix. "+filler)
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:zk", Title: "Cluster settings", Surface: "cli",
		Project: loom.Project{ID: "api", Name: "api", Root: "/src/api"}, Cwd: "/src/api"}
	out, _ := json.Marshal("zookeeper.session.timeout.ms=18000")
	if err := st.Append(ctx, s,
		&loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "look at the cluster"}}},
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{
			{Type: loom.PartText, Text: "Now let me read the config file. " + filler},
			{Type: loom.PartTool, CallID: "c1", Name: "Read", Status: "completed", Input: json.RawMessage(`{"file_path":"conf/zoo.cfg"}`), Output: out},
		}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ prompt, want string }{
		{"did credo flag the alias ordering?", "Credo reported no issues"},
		{"how long is the zookeeper session timeout?", "18000"},
	} {
		res, err := recall.Recall(ctx, st, recall.Options{Prompt: c.prompt, UserID: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res.Turns, func(tr recall.Turn) bool { return tr.Seq == 2 })
		if i < 0 || !strings.Contains(res.Turns[i].Text, c.want) || len(res.Turns[i].Text) > 1200 {
			t.Fatalf("%q: the long turn does not show %q within 1,200 bytes: %+v", c.prompt, c.want, res.Turns)
		}
		if !strings.HasPrefix(res.Turns[i].Text, "…") {
			t.Errorf("%q: the turn's cut opening is not marked: %q", c.prompt, res.Turns[i].Text)
		}
	}
}

// A long turn is shown where the prompt's rarest matched word is, not
// where its common words meet: "which port does the spotter server
// use" on a hook script that says Spotter and server in its opening
// lines and sets the port further down shows the port's line.
func TestRecallLongTurnShowsItsRarestWord(t *testing.T) {
	ctx := context.Background()
	st := store(t)
	var script strings.Builder
	script.WriteString("#!/usr/bin/env bash\n# Spotter SessionStart hook: tells the Spotter server that a session began.\n" +
		"# The Spotter server records the session and its transcript; the server must be running.\n" +
		"# Spotter server hook, Spotter server session, Spotter server transcript.\n")
	for i := range 20 {
		fmt.Fprintf(&script, "input_%d=$(jq -r '.field_%d // empty' <<<\"$payload\")\n", i, i)
	}
	script.WriteString("PORT=\"${SPOTTER_PORT:-1100}\"\ncurl -fsS \"http://127.0.0.1:$PORT/api/hooks/session-start\" -d \"$payload\"\n")
	for i := range 20 {
		fmt.Fprintf(&script, "echo \"done step %d\" >>\"$log\"\n", i)
	}
	session(t, st, "spotter", "Hook script", "write the session start hook", script.String())
	for i := range 6 {
		session(t, st, "spotter", fmt.Sprintf("Work %d", i), fmt.Sprintf("restart the spotter server after change %d", i),
			fmt.Sprintf("The spotter server is up again after change %d.", i))
	}
	res, err := recall.Recall(ctx, st, recall.Options{Prompt: "which port does the spotter server use when none is set?", UserID: "alice", ProjectID: "spotter"})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Turns, func(tr recall.Turn) bool { return tr.Title == "Hook script" })
	if i < 0 || !strings.Contains(res.Turns[i].Text, "1100") {
		t.Fatalf("the hook script's turn does not show the port: %+v", res.Turns)
	}
}

// A compaction's summary that is the best hit comes first: it says what
// was done, where the replies that share a word or two with the prompt
// are all the budget would otherwise hold. Another summary, not the
// best hit, still comes after them (summaries hold many words).
func TestRecallSummaryFirstWhenBest(t *testing.T) {
	ctx := context.Background()
	st := store(t)
	var texts []string
	for i := range 12 {
		texts = append(texts, fmt.Sprintf("check step %d of the deploy", i), fmt.Sprintf("Step %d of the deploy is checked; the order of the rest is next.", i))
	}
	s := session(t, st, "api", "Deploy", texts...)
	sum := "This session is being continued from a previous conversation that ran out of context. " +
		strings.Repeat("Earlier work covered the build and the docs. ", 20) +
		"The release tasks depend on each other: the changelog depends on the version bump, which depends on the migration review; tackle them in that order."
	if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleSummary, Parts: []loom.Part{{Type: loom.PartText, Text: sum}}}); err != nil {
		t.Fatal(err)
	}
	session(t, st, "api", "Other", "This session is being continued from a previous conversation. The deploy order was discussed.", "ok")
	res, err := recall.Recall(ctx, st, recall.Options{Prompt: "in which order can the remaining release tasks be tackled?", UserID: "alice", ProjectID: "api", Tokens: 600})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Turns) == 0 || res.Turns[0].Role != loom.RoleSummary || !strings.Contains(res.Turns[0].Text, "depends on the version bump") {
		t.Fatalf("the best hit, a summary, is not first with its answer: %+v", res.Turns)
	}
	// With room for every hit, the other summary is shown, after every
	// reply.
	res, err = recall.Recall(ctx, st, recall.Options{Prompt: "in which order can the remaining release tasks be tackled?", UserID: "alice", ProjectID: "api", Tokens: 5000})
	if err != nil {
		t.Fatal(err)
	}
	other := slices.IndexFunc(res.Turns, func(tr recall.Turn) bool {
		return strings.HasPrefix(tr.Text, "This session is being continued from a previous conversation. The deploy order")
	})
	lastReply := -1
	for i, tr := range res.Turns {
		if tr.Role == loom.RoleAssistant {
			lastReply = i
		}
	}
	if other < 0 || lastReply < 0 || other < lastReply {
		t.Errorf("the other summary (at %d) does not come after the replies (the last at %d): %+v", other, lastReply, res.Turns)
	}
}

// An agent's instructions are kept, as system messages, but they are
// not the conversation: a recall never hands them back, however well
// they match the prompt (an instructions file names the project's
// words in every session), and a session that holds only its
// instructions and a prompt recalls by its prompt.
func TestRecallLeavesOutInstructions(t *testing.T) {
	ctx := context.Background()
	st := store(t)
	instructions := "You are Codex, a coding agent. AGENTS.md: the postgres pool settings live in config.toml; run make check before every commit."
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:instr", Surface: "codex",
		Project: loom.Project{ID: "api", Name: "api", Root: "/src/api"}, Cwd: "/src/api"}
	if err := st.Append(ctx, s,
		&loom.Message{Role: loom.RoleSystem, Parts: []loom.Part{{Type: loom.PartText, Text: instructions}}},
		&loom.Message{Role: loom.RoleSystem, Parts: []loom.Part{{Type: loom.PartText, Text: "<environment_context><cwd>/src/api</cwd> postgres pool</environment_context>"}}},
		&loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "Why does the postgres pool time out?"}}},
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "Its max_conns is 4; raised to 32."}}},
	); err != nil {
		t.Fatal(err)
	}
	if s.Title != "Why does the postgres pool time out?" {
		t.Errorf("title %q, want the first prompt", s.Title)
	}
	for _, o := range []recall.Options{
		{Prompt: "postgres pool config.toml commit", UserID: "alice", ProjectID: "api"},
		{Prompt: "make check before every commit", UserID: "alice", ProjectID: "api"},
		{Prompt: "environment_context cwd", UserID: "alice"},
	} {
		res, err := recall.Recall(ctx, st, o)
		if err != nil {
			t.Fatal(err)
		}
		text := res.Text()
		for _, tr := range res.Turns {
			if tr.Role == loom.RoleSystem {
				t.Errorf("recall %q handed back a system message: %+v", o.Prompt, tr)
			}
		}
		if strings.Contains(text, "AGENTS.md") || strings.Contains(text, "environment_context") || strings.Contains(text, "You are Codex") {
			t.Errorf("recall %q handed back the agent's instructions:\n%s", o.Prompt, text)
		}
	}
	res, err := recall.Recall(ctx, st, recall.Options{Prompt: "postgres pool time out", UserID: "alice", ProjectID: "api"})
	if err != nil || len(res.Turns) == 0 || !strings.Contains(res.Text(), "max_conns is 4") {
		t.Errorf("recall of the prompt = %+v, %v; want its turn", res, err)
	}
}
