package sessionstore

import (
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// An import is recorded in records of at most recordChunk messages and
// about RecordBytes of content, that together hold every message once,
// in order, each append after the message before it; an archived
// session is archived again after its appends.
func TestImportRecordsChunks(t *testing.T) {
	now := time.Now()
	big := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name    string
		n       int
		text    string
		records int
	}{
		{"short", 3, "hi", 1},
		{"long", 2500, "hi", 3},
		{"large messages", 10, big, 4}, // 3, 3, 3, 1
	} {
		d := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "alice", ArchivedAt: &now}}
		for i := range tc.n {
			d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), Seq: int64(i + 1), Role: loom.RoleUser,
				Parts: []loom.Part{{ID: "p", Type: loom.PartText, Text: tc.text}}})
		}
		recs := importRecords(d)
		var got []*loom.Message
		chunks := 0
		for i, r := range recs {
			switch p := r.(type) {
			case *synclog.Imported:
				if i != 0 {
					t.Fatalf("%s: an import at record %d", tc.name, i)
				}
				got = append(got, p.Sessions[0].Messages...)
				chunks++
			case *synclog.MessagesAppended:
				if p.FirstSeq != int64(len(got)+1) || p.PrevID != got[len(got)-1].ID {
					t.Fatalf("%s: append at %d after %s does not follow %d messages", tc.name, p.FirstSeq, p.PrevID, len(got))
				}
				if len(p.Messages) > recordChunk || len(p.Messages) > 1 && len(p.Messages)*len(tc.text) > RecordBytes {
					t.Errorf("%s: a record of %d messages of %d bytes", tc.name, len(p.Messages), len(tc.text))
				}
				got = append(got, p.Messages...)
				chunks++
			case *synclog.SessionChanged:
				if i != len(recs)-1 || p.Archive == nil || tc.records == 1 {
					t.Errorf("%s: a change at record %d of %d: %+v", tc.name, i, len(recs), p)
				}
			}
		}
		if len(got) != tc.n || chunks != tc.records {
			t.Errorf("%s: %d messages in %d records, want %d in %d", tc.name, len(got), chunks, tc.n, tc.records)
		}
	}
}
