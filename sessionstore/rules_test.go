package sessionstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

func TestCheckAppend(t *testing.T) {
	deleted := time.Now()
	for _, tc := range []struct {
		name        string
		caller, cur *loom.Session
		code        string
	}{
		{"new session", &loom.Session{ID: "s"}, nil, ""},
		{"deleted meanwhile", &loom.Session{ID: "s", MessageCount: 3}, nil, loom.ENOTFOUND},
		{"in the trash", &loom.Session{ID: "s"}, &loom.Session{ID: "s", DeletedAt: &deleted}, loom.ENOTFOUND},
		{"held elsewhere", &loom.Session{ID: "s"}, &loom.Session{ID: "s", Lock: &loom.Lock{Owner: "other"}}, loom.ELOCKED},
		{"held here", &loom.Session{ID: "s"}, &loom.Session{ID: "s", Lock: &loom.Lock{Owner: "me"}}, ""},
	} {
		if got := loom.ErrorCode(checkAppend(tc.caller, tc.cur, "me")); got != tc.code {
			t.Errorf("%s: code %q, want %q", tc.name, got, tc.code)
		}
	}
}

func TestPlanFork(t *testing.T) {
	src := &loom.Session{ID: "s", Title: "plan (fork)", MessageCount: 6, TurnCount: 3}
	p, err := planFork(t.Context(), src, loom.ForkOptions{Turn: 2}, forkReads(t, "plan (fork)", "PLAN (FORK 2)"))
	if err != nil || p.Turn != 2 || p.LastSeq != 4 || p.LastPrompt != "question 2" || p.Title != "plan (fork 3)" || p.ID == "" {
		t.Fatalf("plan = %+v, %v", p, err)
	}
	p, err = planFork(t.Context(), src, loom.ForkOptions{ID: "f", Title: "mine", Key: "k:1"}, forkReads(t))
	if err != nil || p.Turn != 3 || p.LastSeq != 6 || p.Title != "mine" || p.ID != "f" || p.Key != "k:1" {
		t.Fatalf("plan of all turns = %+v, %v", p, err)
	}
	for _, opts := range []loom.ForkOptions{{Turn: 4}, {Turn: -1}, {Title: "two\nlines"}, {Title: strings.Repeat("x", loom.MaxTitleBytes+1)}} {
		if _, err := planFork(t.Context(), src, opts, forkReads(t)); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("plan %+v = %v, want EINVALID", opts, err)
		}
	}
	deleted := time.Now()
	if _, err := planFork(t.Context(), &loom.Session{ID: "s", DeletedAt: &deleted}, loom.ForkOptions{}, forkReads(t)); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("fork of a trashed session = %v", err)
	}
	failing := forkReads(t)
	failing.turnFail = errors.New("boom")
	if _, err := planFork(t.Context(), src, loom.ForkOptions{Turn: 1}, failing); err == nil || loom.ErrorCode(err) != loom.EINTERNAL {
		t.Fatalf("a failed read = %v", err)
	}
	if err := (&loom.Session{ID: "s", TurnCount: 1}).CheckForkTurn(2); err == nil || !strings.Contains(err.Error(), "has 1 turn;") {
		t.Fatalf("one turn: %v", err)
	}
}

func TestCodec(t *testing.T) {
	m := &loom.Message{Parts: []loom.Part{{Type: loom.PartText, Text: "a <b> & ü"}}}
	enc, err := sqlstore.EncodeParts(m)
	if err != nil || m.Parts[0].ID == "" || !strings.Contains(enc, `\u003cb\u003e`) {
		t.Fatalf("encoded %s, %v", enc, err)
	}
	parts, err := sqlstore.DecodeParts([]byte(enc))
	if err != nil || len(parts) != 1 || parts[0].ID != m.Parts[0].ID || parts[0].Text != m.Parts[0].Text {
		t.Fatalf("decoded %+v, %v", parts, err)
	}
	if enc, _ := sqlstore.EncodeParts(&loom.Message{}); enc != "[]" {
		t.Fatalf("no parts = %s", enc)
	}
	if sqlstore.EncodeError(nil) != nil || sqlstore.DecodeError(nil, false) != nil {
		t.Fatal("no error is NULL")
	}
	e := sqlstore.DecodeError([]byte(sqlstore.EncodeError(&loom.MessageError{Message: "m", Type: "t"}).(string)), true)
	if *e != (loom.MessageError{Message: "m", Type: "t"}) {
		t.Fatalf("error = %+v", e)
	}
	if e := sqlstore.DecodeError([]byte("by hand"), true); e.Message != "by hand" {
		t.Fatalf("error written by hand = %+v", e)
	}
}

func TestPlanRewindRefuses(t *testing.T) {
	reads := forkReads(t)
	reads.anyBase = true
	for _, tc := range []struct {
		s    loom.Session
		turn int
		want string
	}{
		{loom.Session{ID: "s", TurnCount: 3}, 3, "session s has 3 turns; rewind to a turn from 1 to 2"},
		{loom.Session{ID: "s", TurnCount: 1}, 1, "session s has 1 turn; there is nothing to rewind"},
		{loom.Session{ID: "s", TurnCount: 2}, 2, "session s has 2 turns; the only turn it can go back to is 1"},
		{loom.Session{ID: "s", TurnCount: 3}, 0, "session s has 3 turns; rewind to a turn from 1 to 2"},
		{loom.Session{ID: "s", TurnCount: 3, Source: &loom.Source{Tool: "codex"}}, 1, "session s is codex's, imported; fork it at the turn instead (loom session fork s --turn 1)"},
	} {
		if _, err := planRewind(t.Context(), &tc.s, loom.RewindOptions{Turn: tc.turn}, reads); loom.ErrorMessage(err) != tc.want {
			t.Errorf("rewind %+v to %d: %v, want %q", tc.s, tc.turn, err, tc.want)
		}
	}
	src := &loom.Session{ID: "s", Title: "plan", TurnCount: 3, MessageCount: 6, LastPrompt: "q3", Usage: loom.Usage{InputTokens: 6, CostUSD: 0.6}}
	p, err := planRewind(t.Context(), src, loom.RewindOptions{Turn: 1}, reads)
	if err != nil || p.KeepSeq != 2 || p.Fork.LastSeq != 6 || p.Fork.Turn != 1 || p.Fork.Title != "plan (rewound)" || p.Fork.LastPrompt != "q3" || p.Store == "" {
		t.Fatalf("plan = %+v, %v", p, err)
	}
	// The usage of the two sides: the shorter one read, the other the
	// rest of the session's.
	for turn, keep := range map[int]int64{1: 2, 2: 4} {
		p, err := planRewind(t.Context(), src, loom.RewindOptions{Turn: turn}, reads)
		if err != nil || p.KeepUsage.InputTokens != keep || p.ForkUsage.InputTokens != 6-keep || loom.RoundCost(p.KeepUsage.CostUSD+p.ForkUsage.CostUSD) != 0.6 {
			t.Fatalf("rewind to %d: keeps %+v, fork takes %+v, %v", turn, p.KeepUsage, p.ForkUsage, err)
		}
	}
}

// threeTurns answers a plan's reads for a session of three turns
// (messages 1-2, 3-4, 5-6) whose users' titles starting with the base
// of its title are taken.
type threeTurns struct {
	t        *testing.T
	taken    []string
	anyBase  bool  // TitlesLike takes any base
	turnFail error // TurnFrom fails with it
}

func forkReads(t *testing.T, taken ...string) *threeTurns { return &threeTurns{t: t, taken: taken} }

func (r *threeTurns) TurnFrom(_ context.Context, _ string, seq int64) (int, bool, error) {
	switch {
	case r.turnFail != nil:
		return 0, false, r.turnFail
	case seq > 6:
		return 0, false, nil
	}
	return int((seq + 1) / 2), true, nil
}

func (r *threeTurns) LastUser(_ context.Context, _ string, seq int64) (*loom.Message, error) {
	return prompt(loom.RoleUser, "question "+string(rune('0'+(seq+1)/2))), nil
}

func (r *threeTurns) TitlesLike(_ context.Context, _, base string) ([]string, error) {
	if !r.anyBase && base != "plan" {
		r.t.Errorf("titles like %q, want the base of the parent's title", base)
	}
	return r.taken, nil
}

func (r *threeTurns) LastSummary(context.Context, string, int64) (int64, error) { return 0, nil }

func (r *threeTurns) UsageOf(_ context.Context, _ string, from, to int64) (loom.Usage, error) {
	return loom.Usage{InputTokens: to - from + 1, CostUSD: 0.1 * float64(to-from+1)}, nil
}

func prompt(role, text string) *loom.Message {
	return &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
}
