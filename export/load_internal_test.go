package export

import (
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// A damaged store's lost messages become notes in their places, in the
// turn before them; a seq no session could reach is refused, not filled.
func TestFillGaps(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msg := func(seq int64, turn int) *loom.Message {
		return &loom.Message{ID: loom.NewID(), Seq: seq, Role: loom.RoleUser, Turn: turn, CreatedAt: at.Add(time.Duration(seq) * time.Minute),
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "kept"}}}
	}
	d := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), CreatedAt: at}, Messages: []*loom.Message{msg(2, 1), msg(3, 1), msg(6, 2)}}
	n, first := fillGaps(d)
	if n != 3 || first != 1 || len(d.Messages) != 6 {
		t.Fatalf("fillGaps = %d, %d; %d messages, want 3, 1; 6", n, first, len(d.Messages))
	}
	for i, m := range d.Messages {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d", i+1, m.Seq)
		}
		note := len(m.Parts) == 1 && strings.Contains(m.Parts[0].Text, "missing from the damaged store")
		if want := i == 0 || i == 3 || i == 4; note != want || (note && m.Role != loom.RoleSystem) {
			t.Fatalf("message %d: %+v", i+1, m)
		}
	}
	if d.Messages[0].Turn != 0 || !d.Messages[0].CreatedAt.Equal(at) || d.Messages[3].Turn != 1 || !d.Messages[3].CreatedAt.Equal(d.Messages[2].CreatedAt) {
		t.Fatalf("notes' turns and times: %+v %+v", d.Messages[0], d.Messages[3])
	}
	if n, _ := fillGaps(d); n != 0 {
		t.Fatalf("a whole session got %d notes", n)
	}
	huge := &loom.SessionData{Session: &loom.Session{ID: loom.NewID()}, Messages: []*loom.Message{msg(1, 1), msg(1<<40, 1)}}
	if n, _ := fillGaps(huge); n != -1 || len(huge.Messages) != 2 {
		t.Fatalf("a seq of 2^40 gave %d notes", n)
	}
}
