package recall_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	clirecall "github.com/loomhq/loom/cli/recall"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/recall"
)

// rareNotes is how many newer notes share the question's common word in
// TestRecallRareAmongCommonCommand: recall once switched, over a search
// index of more than 100,000 messages, to the project's newest matches
// of the prompt's words, and so answered this question with Bob's
// newest notes and no word of it being partial. 200,000 is the issue's
// own reproduction, and the store fills in seconds on either engine.
const rareNotes = 200_000

// The loom binary, on a store where one old message says the question's
// rare word (Audrey) among 200,000 newer notes of the project that
// share its common one (think), recalls her message as the first turn,
// in --json and in text, in the project and with -a; the answer says it
// is partial (the search ranked part of think's matches) in the JSON,
// on stderr and in the text's last line; and as a hook within its
// default budget its context is her message first, or says partial, or
// is nothing (out of time), never Bob's notes unmarked. On SQLite, and
// on PostgreSQL in the command tests' PostgreSQL pass.
func TestRecallRareAmongCommonCommand(t *testing.T) {
	t.Parallel()
	clitest.LoomBinary(t) // skipped with -short, before the store is filled
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenEngine(t)
	s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:pets", Project: fx.Proj, Cwd: fx.Project, Model: "test-model"}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := st.Import(ctx, []*loom.SessionData{conformance.RareAmongCommonSession(s, rareNotes)}); err != nil {
		t.Fatalf("fill the store: %v", err)
	}
	st.Close()
	t.Logf("store of %d messages filled in %v", rareNotes+1, time.Since(start))

	audreyFirst := func(turns []recall.Turn) bool {
		return len(turns) > 0 && strings.HasPrefix(turns[0].Text, "Audrey:")
	}
	for _, scope := range [][]string{nil, {"-a"}} {
		args := append(append([]string{"recall", "--json"}, scope...), conformance.RareAmongCommonQuestion)
		// A recall whose search was refused for running out of time
		// before any hit (a busy machine) is no answer: asked again.
		var (
			r   clitest.Result
			res recall.Result
		)
		for try := 0; try < 5; try++ {
			start := time.Now()
			r = fx.Exec(t, "", args...)
			res = recall.Result{}
			if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 {
				t.Fatalf("loom %v: exit %d, %v: %s %s", args, r.Code, err, r.Stdout, r.Stderr)
			}
			t.Logf("loom %v: %v, partial %v, %d turns", args[:len(args)-1], time.Since(start), res.Partial, len(res.Turns))
			if !res.Partial || len(res.Turns) > 0 {
				break
			}
		}
		if !audreyFirst(res.Turns) {
			t.Fatalf("loom %v among %d newer matches of a common word: the first turn is not the rare word's message (partial %v): %q",
				args, rareNotes, res.Partial, firstTexts(res.Turns, 3))
		}
		// Every match of think could not be ranked: said in the JSON and
		// on stderr.
		if !res.Partial || !strings.Contains(r.Stderr, clirecall.PartialNote) {
			t.Errorf("loom %v: partial %v, stderr %q; want partial, said on stderr", args, res.Partial, r.Stderr)
		}

		// The text form: her message on the first turn's line, and the
		// partial line last.
		args = append(append([]string{"recall"}, scope...), conformance.RareAmongCommonQuestion)
		for try := 0; try < 5; try++ {
			if r = fx.Exec(t, "", args...); r.Code != 0 {
				t.Fatalf("loom %v: exit %d, %s", args, r.Code, r.Stderr)
			}
			if r.Stdout != "" {
				break
			}
		}
		lines := clitest.Lines(r.Stdout)
		if len(lines) < 3 || !strings.Contains(lines[1], "] Audrey:") || !strings.HasPrefix(lines[len(lines)-1], "(partial:") {
			t.Fatalf("loom %v among %d newer matches: want her message first and the partial line last:\n%s", args, rareNotes, r.Stdout)
		}
	}

	// As a hook, within its default budget (100 ms from the process's
	// start): her message first, or partial, or nothing in time.
	fx.MustExec(t, "recall", "enable")
	in := `{"cwd":"` + fx.Project + `","hook_event_name":"UserPromptSubmit","prompt":"` + conformance.RareAmongCommonQuestion + `"}`
	answered := 0
	for range 3 {
		start := time.Now()
		r := fx.Exec(t, in, "recall", "--hook", "claude-code")
		if r.Code != 0 {
			t.Fatalf("hook: exit %d, %s", r.Code, r.Stderr)
		}
		if r.Stdout == "" {
			t.Logf("hook: nothing within its budget (%v)", time.Since(start))
			continue
		}
		var out struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("hook: %v: %s", err, r.Stdout)
		}
		answered++
		ctxLines := clitest.Lines(out.HookSpecificOutput.AdditionalContext)
		first := len(ctxLines) > 1 && strings.Contains(ctxLines[1], "] Audrey:")
		partial := len(ctxLines) > 0 && strings.HasPrefix(ctxLines[len(ctxLines)-1], "(partial:")
		t.Logf("hook: %v, her message first %v, partial %v, %d lines", time.Since(start), first, partial, len(ctxLines))
		if !first && !partial {
			t.Fatalf("hook among %d newer matches: not partial, and the first turn is not the rare word's message:\n%s",
				rareNotes, out.HookSpecificOutput.AdditionalContext)
		}
	}
	t.Logf("hook answered %d of 3 within its budget", answered)
}

// firstTexts is the text of turns' first n, for a failure's message.
func firstTexts(turns []recall.Turn, n int) []string {
	var texts []string
	for _, t := range turns[:min(n, len(turns))] {
		texts = append(texts, t.Text)
	}
	return texts
}
