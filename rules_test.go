package loom

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func prompt(role, text string) *Message {
	return &Message{Role: role, Parts: []Part{{Type: PartText, Text: text}}}
}

func TestApplyAppend(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &Session{ID: "s", MessageCount: 2, TurnCount: 1, SummarySeq: 1, Usage: Usage{InputTokens: 5}}
	sum := prompt(RoleSummary, "summary")
	answer := prompt(RoleAssistant, "answer")
	answer.Usage = Usage{InputTokens: 10, CostUSD: 0.5}
	msgs := []*Message{prompt(RoleUser, "  first line\nsecond  "), answer, sum, prompt(RoleUser, ""), prompt(RoleUser, "last prompt")}
	s.ApplyAppend(now, msgs...)
	for i, m := range msgs {
		if m.Seq != int64(3+i) || m.SessionID != "s" || m.ID == "" || !m.CreatedAt.Equal(now) {
			t.Fatalf("message %d = %+v", i, m)
		}
	}
	if turns := []int{2, 2, 2, 3, 4}; msgs[0].Turn != turns[0] || msgs[2].Turn != turns[2] || msgs[4].Turn != turns[4] {
		t.Fatalf("turns = %d %d %d", msgs[0].Turn, msgs[2].Turn, msgs[4].Turn)
	}
	if s.MessageCount != 7 || s.TurnCount != 4 || s.SummarySeq != 5 || s.LastPrompt != "last prompt" || s.Title != "first line" ||
		s.Usage != (Usage{InputTokens: 15, CostUSD: 0.5}) || !s.UpdatedAt.Equal(now) {
		t.Fatalf("session = %+v", s)
	}
	// A title is never replaced, and an empty append changes nothing.
	s.ApplyAppend(now.Add(time.Hour), prompt(RoleUser, "another"))
	if s.Title != "first line" || s.LastPrompt != "another" {
		t.Fatalf("after a second append: %+v", s)
	}
	before := *s
	s.ApplyAppend(now.Add(2 * time.Hour))
	if *s != before {
		t.Fatal("an empty append changed the session")
	}
	// Recount gives an import the counters appending would have.
	var imported Session
	imported.Recount(msgs)
	if imported.MessageCount != 5 || imported.TurnCount != 3 || imported.SummarySeq != 3 || imported.LastPrompt != "last prompt" {
		t.Fatalf("recount = %+v", imported)
	}
}

func TestCheckAppend(t *testing.T) {
	deleted := time.Now()
	for _, tc := range []struct {
		name        string
		caller, cur *Session
		code        string
	}{
		{"new session", &Session{ID: "s"}, nil, ""},
		{"deleted meanwhile", &Session{ID: "s", MessageCount: 3}, nil, ENOTFOUND},
		{"in the trash", &Session{ID: "s"}, &Session{ID: "s", DeletedAt: &deleted}, ENOTFOUND},
		{"held elsewhere", &Session{ID: "s"}, &Session{ID: "s", Lock: &Lock{Owner: "other"}}, ELOCKED},
		{"held here", &Session{ID: "s"}, &Session{ID: "s", Lock: &Lock{Owner: "me"}}, ""},
	} {
		if got := ErrorCode(CheckAppend(tc.caller, tc.cur, "me")); got != tc.code {
			t.Errorf("%s: code %q, want %q", tc.name, got, tc.code)
		}
	}
}

func TestCreated(t *testing.T) {
	now := time.Now()
	s := Session{ID: "s", UserID: "u", Key: "telegram:1", Title: "  t  "}
	row, err := s.Created(now)
	if err != nil || row.Kind != KindMain || row.Surface != "telegram" || row.Title != "t" || !row.CreatedAt.Equal(now) || !row.UpdatedAt.Equal(now) {
		t.Fatalf("created = %+v, %v", row, err)
	}
	if s.Kind != "" || s.Title != "  t  " {
		t.Fatal("Created changed its receiver")
	}
	if _, err := (Session{ID: "s"}).Created(now); ErrorCode(err) != EINVALID {
		t.Fatalf("a session without a user = %v", err)
	}
}

// forkReads answer for a session of three turns (messages 1-2, 3-4,
// 5-6) whose user titles start with "plan".
func forkReads(t *testing.T, taken ...string) ForkReads {
	return ForkReads{
		TurnFrom: func(seq int64) (int, bool, error) {
			if seq > 6 {
				return 0, false, nil
			}
			return int((seq + 1) / 2), true, nil
		},
		LastUser: func(seq int64) (*Message, error) {
			return prompt(RoleUser, "question "+string(rune('0'+(seq+1)/2))), nil
		},
		TitlesLike: func(base string) ([]string, error) {
			if base != "plan" {
				t.Errorf("titles like %q, want the base of the parent's title", base)
			}
			return taken, nil
		},
		LastSummary: func(int64) (int64, error) { return 0, nil },
		Usage: func(from, to int64) (Usage, error) {
			return Usage{InputTokens: to - from + 1, CostUSD: 0.1 * float64(to-from+1)}, nil
		},
	}
}

func TestPlanFork(t *testing.T) {
	src := &Session{ID: "s", Title: "plan (fork)", MessageCount: 6, TurnCount: 3}
	p, err := PlanFork(src, ForkOptions{Turn: 2}, forkReads(t, "plan (fork)", "PLAN (FORK 2)"))
	if err != nil || p.Turn != 2 || p.LastSeq != 4 || p.LastPrompt != "question 2" || p.Title != "plan (fork 3)" || p.ID == "" {
		t.Fatalf("plan = %+v, %v", p, err)
	}
	p, err = PlanFork(src, ForkOptions{ID: "f", Title: "mine", Key: "k:1"}, forkReads(t))
	if err != nil || p.Turn != 3 || p.LastSeq != 6 || p.Title != "mine" || p.ID != "f" || p.Key != "k:1" {
		t.Fatalf("plan of all turns = %+v, %v", p, err)
	}
	for _, opts := range []ForkOptions{{Turn: 4}, {Turn: -1}, {Title: "two\nlines"}, {Title: strings.Repeat("x", MaxTitleBytes+1)}} {
		if _, err := PlanFork(src, opts, forkReads(t)); ErrorCode(err) != EINVALID {
			t.Errorf("plan %+v = %v, want EINVALID", opts, err)
		}
	}
	deleted := time.Now()
	if _, err := PlanFork(&Session{ID: "s", DeletedAt: &deleted}, ForkOptions{}, forkReads(t)); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("fork of a trashed session = %v", err)
	}
	failing := forkReads(t)
	failing.TurnFrom = func(int64) (int, bool, error) { return 0, false, errors.New("boom") }
	if _, err := PlanFork(src, ForkOptions{Turn: 1}, failing); err == nil || ErrorCode(err) != EINTERNAL {
		t.Fatalf("a failed read = %v", err)
	}
	if err := (&Session{ID: "s", TurnCount: 1}).CheckForkTurn(2); err == nil || !strings.Contains(err.Error(), "has 1 turn;") {
		t.Fatalf("one turn: %v", err)
	}
}

func TestSessionUpdate(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		u    SessionUpdate
		want string
	}{
		{SessionUpdate{Title: str("fine")}, ""},
		{SessionUpdate{Title: str(strings.Repeat("x", MaxTitleBytes+1))}, "title is longer than 200 bytes"},
		{SessionUpdate{Title: str("a\nb")}, "title must be one line"},
		{SessionUpdate{Description: str(strings.Repeat("x", MaxDescriptionBytes+1))}, "description is longer than 10000 bytes"},
		{SessionUpdate{Key: str("")}, ""},
		{SessionUpdate{Key: str("nocolon")}, `key "nocolon" must be SURFACE:NAME, e.g. telegram:12345`},
	} {
		if got := ErrorMessage(tc.u.Validate()); got != tc.want {
			t.Errorf("validate %+v = %q, want %q", tc.u, got, tc.want)
		}
	}
	cols := SessionUpdate{Title: str(" t "), Key: str("tg:1"), Project: &Project{ID: "p", Name: "n", Root: "/r"}, Model: str("m"), GitBranch: str("main")}.Columns("NOW")
	var got []string
	for _, c := range cols {
		got = append(got, c.Name+"="+c.Value.(string))
	}
	if strings.Join(got, " ") != "title=t key=tg:1 surface=tg project_id=p project_name=n project_root=/r model=m git_branch=main updated_at=NOW" {
		t.Fatalf("changes = %v", got)
	}
	if c := (SessionUpdate{Key: str("")}).Columns("NOW"); len(c) != 2 || c[0].Value != nil || c[1].Name != "updated_at" {
		t.Fatalf("removing the key = %+v", c)
	}
	// Archiving is not activity: it sets archived_at alone.
	yes, no := true, false
	if c := (SessionUpdate{Archived: &yes}).Columns("NOW"); len(c) != 1 || c[0].Name != "archived_at" || c[0].Value != "NOW" {
		t.Fatalf("archive = %+v", c)
	}
	if c := (SessionUpdate{Archived: &no}).Columns("NOW"); len(c) != 1 || c[0].Value != nil {
		t.Fatalf("unarchive = %+v", c)
	}
	if c := (SessionFilter{UserID: "u", Kind: KindFork}).Equal(); len(c) != 2 || c[0].Name != "user_id" || c[1].Name != "kind" {
		t.Fatalf("filter columns = %+v", c)
	}
}

func TestCodec(t *testing.T) {
	m := &Message{Parts: []Part{{Type: PartText, Text: "a <b> & ü"}}}
	enc, err := EncodeParts(m)
	if err != nil || m.Parts[0].ID == "" || !strings.Contains(enc, `\u003cb\u003e`) {
		t.Fatalf("encoded %s, %v", enc, err)
	}
	parts, err := DecodeParts([]byte(enc))
	if err != nil || len(parts) != 1 || parts[0].ID != m.Parts[0].ID || parts[0].Text != m.Parts[0].Text {
		t.Fatalf("decoded %+v, %v", parts, err)
	}
	if enc, _ := EncodeParts(&Message{}); enc != "[]" {
		t.Fatalf("no parts = %s", enc)
	}
	if EncodeError(nil) != nil || DecodeError(nil, false) != nil {
		t.Fatal("no error is NULL")
	}
	e := DecodeError([]byte(EncodeError(&MessageError{Message: "m", Type: "t"}).(string)), true)
	if *e != (MessageError{Message: "m", Type: "t"}) {
		t.Fatalf("error = %+v", e)
	}
	if e := DecodeError([]byte("by hand"), true); e.Message != "by hand" {
		t.Fatalf("error written by hand = %+v", e)
	}
}

func TestPlanRewindRefuses(t *testing.T) {
	reads := forkReads(t)
	reads.TitlesLike = func(string) ([]string, error) { return nil, nil }
	for _, tc := range []struct {
		s    Session
		turn int
		want string
	}{
		{Session{ID: "s", TurnCount: 3}, 3, "session s has 3 turns; rewind to a turn from 1 to 2"},
		{Session{ID: "s", TurnCount: 1}, 1, "session s has 1 turn; there is nothing to rewind"},
		{Session{ID: "s", TurnCount: 2}, 2, "session s has 2 turns; the only turn it can go back to is 1"},
		{Session{ID: "s", TurnCount: 3}, 0, "session s has 3 turns; rewind to a turn from 1 to 2"},
		{Session{ID: "s", TurnCount: 3, Source: &Source{Tool: "codex"}}, 1, "session s is codex's, imported; fork it at the turn instead (loom session fork s --turn 1)"},
	} {
		if _, err := PlanRewind(&tc.s, RewindOptions{Turn: tc.turn}, reads); ErrorMessage(err) != tc.want {
			t.Errorf("rewind %+v to %d: %v, want %q", tc.s, tc.turn, err, tc.want)
		}
	}
	src := &Session{ID: "s", Title: "plan", TurnCount: 3, MessageCount: 6, LastPrompt: "q3", Usage: Usage{InputTokens: 6, CostUSD: 0.6}}
	p, err := PlanRewind(src, RewindOptions{Turn: 1}, reads)
	if err != nil || p.KeepSeq != 2 || p.Fork.LastSeq != 6 || p.Fork.Turn != 1 || p.Fork.Title != "plan (rewound)" || p.Fork.LastPrompt != "q3" || p.Store == "" {
		t.Fatalf("plan = %+v, %v", p, err)
	}
	// The usage of the two sides: the shorter one read, the other the
	// rest of the session's.
	for turn, keep := range map[int]int64{1: 2, 2: 4} {
		p, err := PlanRewind(src, RewindOptions{Turn: turn}, reads)
		if err != nil || p.KeepUsage.InputTokens != keep || p.ForkUsage.InputTokens != 6-keep || RoundCost(p.KeepUsage.CostUSD+p.ForkUsage.CostUSD) != 0.6 {
			t.Fatalf("rewind to %d: keeps %+v, fork takes %+v, %v", turn, p.KeepUsage, p.ForkUsage, err)
		}
	}
}
