package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/sqlite"
)

// -import-history's history is laid out as Claude Code and Codex keep
// their files, holds none of the samples' ids (each copy is a session
// of its own), and imports whole: one group of 13 Claude Code sessions
// (the long one with its two sub-agents) and six Codex rollouts, every
// one of them a new session, with no problem.
func TestHistoryOfRealFormatFiles(t *testing.T) {
	samples := filepath.Join("..", "..", "testdata", "agent-sessions")
	home := t.TempDir()
	if err := writeHistory(samples, home, 1); err != nil {
		t.Fatal(err)
	}
	files, _, subagents, rollouts := historyCounts(home)
	if files != 13+2+6 || subagents != 2 || rollouts != 6 {
		t.Fatalf("history: %d files, %d sub-agent transcripts, %d rollouts; want 21, 2, 6", files, subagents, rollouts)
	}
	sampleIDs := map[string]bool{}
	filepath.WalkDir(samples, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			b, _ := os.ReadFile(p)
			for _, u := range uuidRE.FindAllString(string(b), -1) {
				sampleIDs[u] = true
			}
		}
		return nil
	})
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range uuidRE.FindAllString(p+"\n"+string(b), -1) {
			if sampleIDs[u] {
				t.Fatalf("%s holds the sample's id %s", p, u)
			}
		}
		if strings.Contains(p, ".claude") && !strings.Contains(string(b), `"cwd":"/home/dev/projects/project`) {
			t.Fatalf("%s: its working directory is not one of the history's projects", p)
		}
		return nil
	})
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	none := func(string) string { return "" }
	im := &importer.Importer{Store: st, UserID: "bench"}
	rep, err := im.Run(ctx, []importer.Target{
		{Format: claudecode.Format{}, Roots: claudecode.Format{}.Roots(none, home), Explicit: true},
		{Format: codex.Format{}, Roots: codex.Format{}.Roots(none, home)[:1], Explicit: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string]int{}
	for _, tr := range rep.Tools {
		sessions[tr.Tool] += tr.SessionsNew
		if tr.ProblemCount > 0 {
			t.Fatalf("%s: %d problems", tr.Tool, tr.ProblemCount)
		}
	}
	if sessions[claudecode.Tool] < 13+2 || sessions[codex.Tool] != 6 {
		t.Fatalf("new sessions %v: want at least 15 of Claude Code (13 and 2 sub-agents) and 6 of Codex", sessions)
	}
}
