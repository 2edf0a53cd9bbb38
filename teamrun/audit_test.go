package teamrun

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/team"
)

// A gap closes index by index, split where an index in its middle is
// filled, and the writer's entry goes with its last index.
func TestCloseGap(t *testing.T) {
	s := &State{}
	addGap(s, "w", 3, 7)
	addGap(s, "w", 10, 10)
	closeGap(s, "w", 5)
	closeGap(s, "w", 3)
	closeGap(s, "w", 10)
	if want := [][2]int64{{4, 4}, {6, 7}}; !reflect.DeepEqual(s.Gaps["w"], want) {
		t.Fatalf("gaps %v, want %v", s.Gaps["w"], want)
	}
	for _, i := range []int64{4, 6, 7} {
		closeGap(s, "w", i)
	}
	if _, ok := s.Gaps["w"]; ok {
		t.Fatalf("gaps %v after the last was closed", s.Gaps)
	}
	var many []Gap
	for i := range 30 {
		many = append(many, Gap{Host: "w", From: int64(2 * i), To: int64(2 * i), Member: "alice"})
	}
	lines := GapLines(many)
	if len(lines) != 11 || !strings.Contains(lines[0], "(alice): records 0 to 0 are missing") || !strings.Contains(lines[10], "and 20 more runs of missing records (20 records)") {
		t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
	}
}

// The file sent reads back what was noted of a writer's records, a
// restored record expecting what the hub held at its index then, and
// its digest is the hub's of the same records.
func TestSentLog(t *testing.T) {
	l := sentLog(filepath.Join(t.TempDir(), "sent"))
	recs := []team.Record{
		{Host: "w", Index: 1, Header: []byte("h1"), Body: []byte("b1")},
		{Host: "w", Index: 2, Header: []byte("h2"), Body: []byte("b2")},
		{Host: "other", Index: 1, Header: []byte("h"), Body: []byte("b")},
	}
	for _, r := range recs {
		if err := l.wrote(r, "s-"+r.Host, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.restored("w", 2, ""); err != nil {
		t.Fatal(err)
	}
	got, err := l.read("w")
	if err != nil || len(got) != 2 || got[1].session != "s-w" || got[1].project != "" || got[1].restored || !got[2].restored || got[2].held != "-" {
		t.Fatalf("read: %+v %v", got, err)
	}
	want := []loom.TeamSum{{Index: 1, Sum: loom.TeamRecordSum([]byte("h1"), []byte("b1"))}}
	if loom.TeamSumsDigest(expected(got)) != loom.TeamSumsDigest(want) {
		t.Fatalf("expected %x, want %x", expected(got), want)
	}
}
