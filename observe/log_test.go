package observe

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

func rec(root, call string, at time.Time, path, old, new string) Record {
	return Record{Key: "claude-code:s1", Call: call, Tool: "Bash", Root: root, At: at,
		Files: []Change{{Path: path, Before: "b", After: "a", Old: old, New: new}}}
}

func calls(rs []Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Call)
	}
	slices.Sort(out)
	return out
}

// TestLogReadsItsWorkTreeAlone: the records are kept a file a work tree,
// and a query of a repository's files or directory reads its work
// tree's alone, however many another work tree holds; the file of an
// older loom (every work tree's records in one) is split into them at
// the next record, losing none.
func TestLogReadsItsWorkTreeAlone(t *testing.T) {
	dir := t.TempDir()
	mine, other := "/src/mine", "/src/other"
	at := time.Now()
	// An older loom's file: a record of each.
	var legacy []byte
	for _, r := range []Record{rec(mine, "old-mine", at, "a.go", "", "x\n"), rec(other, "old-other", at, "b.go", "", "y\n")} {
		b, _ := json.Marshal(r)
		legacy = append(append(legacy, b...), '\n')
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logFile(dir), legacy, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := calls(Open(dir).Under(mine)); !slices.Equal(got, []string{"old-mine"}) {
		t.Fatalf("the older file's records of %s: %v", mine, got)
	}
	if err := appendRecord(dir, rec(mine, "new-mine", at, "a.go", "x\n", "x\nz\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(logFile(dir)); err == nil {
		t.Error("the older file is still there after a record")
	}
	// Another work tree's many records.
	big := rec(other, "", at, "b.go", "", strings.Repeat("a line of another repository\n", 40))
	for i := range 3000 {
		big.Call = fmt.Sprint("other-", i)
		if err := appendRecord(dir, big); err != nil {
			t.Fatal(err)
		}
	}
	l := Open(dir)
	got := calls(l.Of(loom.EditQuery{Under: mine}))
	if !slices.Equal(got, []string{"new-mine", "old-mine"}) {
		t.Errorf("records of %s: %v", mine, got)
	}
	got = calls(l.Of(loom.EditQuery{Paths: []string{mine + "/pkg/a.go"}}))
	if !slices.Equal(got, []string{"new-mine", "old-mine"}) {
		t.Errorf("records of a file of %s: %v", mine, got)
	}
	fi, _ := os.Stat(shardFile(dir, mine))
	if l.BytesRead() != fi.Size() {
		t.Errorf("read %d bytes of records for %s, whose file is %d bytes", l.BytesRead(), mine, fi.Size())
	}
	if n := len(Open(dir).All()); n < 2+3000/2 {
		t.Errorf("%d records in all", n)
	}
}

// TestCompactKeepsLinesStillThere: past its limit, a work tree's file
// keeps each record of a line still in a file the records name (however
// old: moved to another of those files too) and each recent one, and
// moves the others, whose lines are gone, to its older generation.
func TestCompactKeepsLinesStillThere(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	now := time.Now()
	old := now.Add(-60 * 24 * time.Hour)
	os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n\nfunc Kept() int { return 42 }\n"), 0o600)
	os.WriteFile(filepath.Join(root, "b.go"), []byte("package b\n\n  func   Moved() {}\n"), 0o600)
	rs := []Record{
		rec(root, "kept", old, "a.go", "", "func Kept() int { return 42 }\n"),
		rec(root, "gone", old, "a.go", "", "func Gone() {}\n"),
		rec(root, "moved", old, "c.go", "", "func Moved() {}\n"), // c.go is gone: its line is in b.go
		rec(root, "recent", now.Add(-time.Hour), "a.go", "", "func Rewritten() {}\n"),
	}
	// b.go is named by a record: its text is looked in.
	rs = append(rs, rec(root, "names-b", now, "b.go", "", "package b\n"))
	for _, r := range rs {
		if err := appendRecord(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := Compact(dir, root, now); err != nil {
		t.Fatal(err)
	}
	if got := calls(Open(dir).Under(root)); !slices.Equal(got, []string{"kept", "moved", "names-b", "recent"}) {
		t.Errorf("kept %v", got)
	}
	b, _ := os.ReadFile(shardFile(dir, root) + oldSuffix)
	if got := calls(parseRecords(b)); !slices.Equal(got, []string{"gone"}) {
		t.Errorf("moved to the older generation: %v", got)
	}
	// Appended past the limit: compacted by the append itself.
	filler := rec(root, "", old, "a.go", "", strings.Repeat("x := gone()\n", 100))
	for i := 0; ; i++ {
		filler.Call = fmt.Sprint("filler-", i)
		if err := appendRecord(dir, filler); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(shardFile(dir, root)); fi.Size() < int64(shardLimit)/2 && i > 100 {
			break
		}
		if i > 2*shardLimit/1000 {
			t.Fatal("never compacted")
		}
	}
	if got := calls(Open(dir).Under(root)); !slices.Contains(got, "kept") || !slices.Contains(got, "moved") {
		t.Errorf("after the compaction an append made: %v", got)
	}
}
