package loom

import (
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
}

// Keys and titles are text every engine holds: UTF-8 without NUL.
func TestTextRules(t *testing.T) {
	for _, k := range []string{"cli:a\x00b", "cli:\xff", "\xfe:x"} {
		if ErrorCode(ValidKey(k)) != EINVALID {
			t.Errorf("key %q accepted", k)
		}
	}
	for _, title := range []string{"a\x00b", "\xffx"} {
		if ErrorCode(ValidTitle(title)) != EINVALID {
			t.Errorf("title %q accepted", title)
		}
		if err := (&Session{ID: "s", UserID: "u", Title: title}).Validate(); ErrorCode(err) != EINVALID {
			t.Errorf("session titled %q: %v", title, err)
		}
		if got := TitleFrom(title); ValidTitle(got) != nil {
			t.Errorf("title from %q = %q, not valid", title, got)
		}
	}
	if err := (&Session{ID: "s", UserID: "u", Key: "cli:\xff"}).Validate(); ErrorCode(err) != EINVALID {
		t.Errorf("session keyed cli:\\xff: %v", err)
	}
}
