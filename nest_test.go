package loom_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// A list of sessions, newest first, nests each sub-agent session (a
// compaction's too) under the listed session that ran it, deeper for a
// sub-agent's own; a fork, and a sub-agent whose parent is not listed,
// stay where the list has them; each session is listed once, even when
// parent links go round.
func TestNestSubagents(t *testing.T) {
	s := func(id, kind, parent string) *loom.Session {
		return &loom.Session{ID: id, Kind: kind, ParentID: parent}
	}
	list := []*loom.Session{
		s("main", loom.KindMain, ""),
		s("compact", loom.KindSubagent, "main"),
		s("other", loom.KindMain, ""),
		s("fork", loom.KindFork, "main"),
		s("explore", loom.KindSubagent, "main"),
		s("deep", loom.KindSubagent, "explore"),
		s("orphan", loom.KindSubagent, "gone"),
		s("a", loom.KindSubagent, "b"),
		s("b", loom.KindSubagent, "a"),
	}
	var got []string
	for _, n := range loom.NestSubagents(list) {
		got = append(got, strings.Repeat(">", n.Depth)+n.S.ID)
	}
	want := "main >compact >explore >>deep other fork orphan a >b"
	if strings.Join(got, " ") != want {
		t.Fatalf("nested %q, want %q", strings.Join(got, " "), want)
	}
}
