package claudecode

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/importer"
)

// side makes l a line of sub-agent abc's transcript.
func side(l L) L { return with(l, "isSidechain", true, "agentId", "abc") }

// A sub-agent's transcript is one long turn; a segment of it may start
// at its prompts and at a reply's first line once the calls of the
// reply before have their results, never inside a reply (whose lines
// share its message id, its tool results coming between them when its
// calls run as it streams) nor between a call and its result.
func TestSubagentTurns(t *testing.T) {
	lines := []struct {
		l     L
		start bool
	}{
		{side(user("s1", "", 0, "survey the code")), true},
		{side(asst("s2", "s1", 1, "m1", text("looking"))), false}, // the first reply met: what came before is unknown
		{side(asst("s3", "s2", 1, "m1", toolUse("t1", "Read", L{"file_path": "a"}))), false},
		{side(asst("s4", "s3", 1, "m1", toolUse("t2", "Read", L{"file_path": "b"}))), false},
		{side(with(line("progress", "p1", "s4", 2), "isSidechain", true)), false},
		{side(user("s5", "s4", 2, []any{toolResult("t1", "a's text", false)})), false},
		{side(user("s6", "s5", 2, []any{toolResult("t2", "b's text", false)})), false},
		{side(asst("s7", "s6", 3, "m2", toolUse("t3", "Read", L{"file_path": "c"}))), true},
		{side(user("s8", "s7", 4, []any{toolResult("t3", "c's text", false)})), false},
		{side(asst("s9", "s8", 5, "m2", toolUse("t4", "Read", L{"file_path": "d"}))), false}, // m2 again, after t3's result
		{side(user("s10", "s9", 6, []any{toolResult("t4", "d's text", false)})), false},
		{side(asst("s11", "s10", 7, "m3", text("done"))), true},
		{side(with(user("s12", "s11", 8, "a note"), "isMeta", true)), false},
		{side(asst("s13", "s12", 9, "m3", text("still m3"))), false},
	}
	f := New()
	if f.Turns(filepath.Join("p", caseSID+".jsonl")) != nil {
		t.Error("a session file's turns are told by the line alone")
	}
	starts := f.Turns(filepath.Join("p", caseSID, "subagents", "agent-abc.jsonl"))
	for i, c := range lines {
		b, err := json.Marshal(c.l)
		if err != nil {
			t.Fatal(err)
		}
		if got := starts(b); got != c.start {
			t.Errorf("line %d (%s): starts a turn %v, want %v", i+1, c.l["uuid"], got, c.start)
		}
		if f.Restart(b) {
			t.Errorf("line %d: a sidechain line starts a turn of a session file", i+1)
		}
	}
}

// A sub-agent's file bigger than a segment is a bundle of its own,
// after the session bundles, whether the session's directory or its
// file is named; the smaller ones stay with their session.
func TestBigSubagentFileIsABundle(t *testing.T) {
	old := importer.SegmentSize
	importer.SegmentSize = func() int64 { return 1 << 10 }
	t.Cleanup(func() { importer.SegmentSize = old })

	dir := t.TempDir()
	main := writeLines(t, filepath.Join(dir, caseSID+".jsonl"), user("u1", "", 0, "research it"))
	small := writeLines(t, filepath.Join(dir, caseSID, "subagents", "agent-small.jsonl"), side(user("s1", "", 1, "find out")))
	big := writeLines(t, filepath.Join(dir, caseSID, "subagents", "agent-big.jsonl"), side(user("s1", "", 1, strings.Repeat("find out ", 200))))
	other := writeLines(t, filepath.Join(dir, "22222222-2222-3333-4444-555555555555.jsonl"), user("v1", "", 0, "another"))
	want := [][]string{{main, small}, {other}, {big}}
	bs, err := New().Bundles(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, b := range bs {
		got = append(got, b.Files)
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("bundles of the directory:\n got %v\nwant %v", got, want)
	}
	got = nil
	for _, b := range fileBundle(main) {
		got = append(got, b.Files)
	}
	if want := [][]string{{main, small}, {big}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("bundles of the session file:\n got %v\nwant %v", got, want)
	}
}
