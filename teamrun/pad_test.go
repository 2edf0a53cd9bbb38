package teamrun

import (
	"context"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/team"
)

// TestRecordsPadded: two sessions whose records differ by a few hundred
// bytes travel as records of one size, what the hub stores.
func TestRecordsPadded(t *testing.T) {
	ctx := context.Background()
	e, v, st, out := publishClient(t)
	open := e.put
	var sizes []int
	e.put = func(ctx context.Context, id string, recs []team.Record) error {
		for _, r := range recs {
			sizes = append(sizes, len(r.Body))
		}
		return open(ctx, id, recs)
	}
	sid := ids(2)
	short, long := sessionData(sid[0], 2), sessionData(sid[1], 2)
	long.Messages[1].Parts[0].Text += " and then some more words, which make this record a few hundred bytes longer than the other one is"
	if err := st.Own.Import(ctx, []*loom.SessionData{short, long}); err != nil {
		t.Fatal(err)
	}
	if err := e.publish(ctx, v, st, &Sync{}); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 2 || sizes[0] != sizes[1] {
		t.Fatalf("the records' bodies are %v bytes", sizes)
	}
	// The padding is taken off when the record is read.
	texts := map[string]bool{}
	for _, p := range out.recs {
		texts[p.Messages[1].Parts[0].Text] = true
	}
	if !texts[long.Messages[1].Parts[0].Text] || !texts[short.Messages[1].Parts[0].Text] {
		t.Fatalf("the records read back: %v", texts)
	}
}
