package handoff_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/internal/testkit/fake"
	"github.com/loomhq/loom/secrets"
)

// kept is a writer that keeps what it is handed.
type kept struct{ h *handoff.Handoff }

func (k *kept) Tool() string { return "kept" }

func (k *kept) Handoff(_ context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	k.h = h
	return &handoff.Handed{}, nil
}

// A hand-off reads the session's title with its messages as one read:
// a token the messages give away (an Authorization header) is redacted
// where the title and the replies repeat it, before the writer sees it.
func TestRunRedactsRepeatsInTheTitle(t *testing.T) {
	ctx := context.Background()
	const token = "Xq7RtY5wPk3Nf8XdQA1sLm29"
	s := &loom.Session{ID: loom.NewID(), Key: "cli:handoff", UserID: "u", Title: "call staging with " + token, Cwd: t.TempDir(), TurnCount: 1}
	msgs := []*loom.Message{
		{SessionID: s.ID, Seq: 1, Turn: 1, Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "curl -H 'Authorization: Bearer " + token + "' https://staging.example.com"}}},
		{SessionID: s.ID, Seq: 2, Turn: 1, Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "I used " + token + " for the call."}}},
	}
	// The store: the session with its messages, as one read, and no
	// service of its own (the gate asks).
	st := &fake.Reader{
		ReadSessionsFn: func(context.Context, []string, loom.MessageQuery) ([]*loom.SessionData, error) {
			c := *s
			return []*loom.SessionData{{Session: &c, Messages: msgs}}, nil
		},
		ReadsFn: func() loom.Reads { return loom.Reads{} },
	}
	w := &kept{}
	rep, err := handoff.Run(ctx, st, s, w, handoff.Options{Redact: secrets.Default()})
	if err != nil {
		t.Fatal(err)
	}
	// What the writer is handed, but the lookup function, which JSON
	// cannot hold (a marshal error would leave nothing to search).
	b, err := json.Marshal(struct {
		Session  *loom.Session
		Messages []*loom.Message
		Dir      string
		Keep     *handoff.Keep
	}{w.h.Session, w.h.Messages, w.h.Dir, w.h.Keep})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "staging.example.com") {
		t.Fatalf("the writer is handed no messages: %s", b)
	}
	if strings.Contains(string(b), token) {
		t.Errorf("the writer is handed the token: %s", b)
	}
	if w.h.Session.Title != "call staging with [REDACTED:authorization-header]" {
		t.Errorf("the title handed off reads %q", w.h.Session.Title)
	}
	if rep.Redacted != 3 {
		t.Errorf("the hand-off counts %d secrets, want 3 (the header, the reply's and the title's repeats)", rep.Redacted)
	}
}
