package claudecode

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const samples = "../../testdata/agent-sessions/claude-code"

const (
	spotterID = "258c7280-ae70-4798-800f-63464d01a85d"
	fe5eID    = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
	c037ID    = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
	af7ID     = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
)

// readFiles reads one bundle and checks what every result must satisfy.
func readFiles(t *testing.T, files ...string) *importer.Result {
	t.Helper()
	res, err := New().Read(context.Background(), importer.Bundle{Files: files})
	if err != nil {
		t.Fatalf("Read(%v): %v", files, err)
	}
	checkResult(t, res)
	return res
}

// checkResult checks the rules every session obeys: valid messages and
// parts, unique message and part ids, times set, parents before children.
func checkResult(t *testing.T, res *importer.Result) {
	t.Helper()
	importertest.CheckTree(t, res)
	for _, s := range res.Sessions {
		if s.CreatedAt.IsZero() || s.UpdatedAt.Before(s.CreatedAt) {
			t.Errorf("session %s times %v..%v", s.SourceID, s.CreatedAt, s.UpdatedAt)
		}
		parts := map[string]bool{}
		for _, m := range s.Messages {
			if m.CreatedAt.IsZero() {
				t.Errorf("session %s message %s has no time", s.SourceID, m.ID)
			}
			if len(m.Parts) == 0 && m.Error == nil {
				t.Errorf("session %s message %s has no parts", s.SourceID, m.ID)
			}
			for _, p := range m.Parts {
				if parts[p.ID] {
					t.Errorf("session %s part id %q repeated", s.SourceID, p.ID)
				}
				parts[p.ID] = true
			}
		}
	}
}

// tally is what a session holds.
type tally = importertest.Tally

func checkTally(t *testing.T, s *importer.Session, want tally) {
	t.Helper()
	got := importertest.TallyOf(s)
	if want.Roles == nil {
		want.Roles = map[string]int{}
	}
	if want.Tools == nil {
		want.Tools = map[string]int{}
	}
	if !maps.Equal(got.Roles, want.Roles) || !maps.Equal(got.Tools, want.Tools) ||
		got.Agents != want.Agents || got.Reasoning != want.Reasoning || got.Files != want.Files {
		t.Errorf("session %s:\n got %+v\nwant %+v", s.SourceID, got, want)
	}
}

func checkSkipped(t *testing.T, res *importer.Result, want map[string]int) {
	t.Helper()
	got := res.Skipped
	if got == nil {
		got = map[string]int{}
	}
	if !maps.Equal(got, want) {
		t.Errorf("skipped:\n got %v\nwant %v", got, want)
	}
}

func checkNoProblems(t *testing.T, res *importer.Result) {
	t.Helper()
	for _, p := range res.Problems {
		t.Errorf("problem: %s", p)
	}
}

// toolPart finds the tool part of a call and the message holding it.
func toolPart(t *testing.T, s *importer.Session, callID string) (*loom.Message, loom.Part) {
	t.Helper()
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type == loom.PartTool && p.CallID == callID {
				return m, p
			}
		}
	}
	t.Fatalf("session %s has no call %s", s.SourceID, callID)
	return nil, loom.Part{}
}

// agentAfter is the agent part of the call callID, after its tool part
// (after every call of the reply written before the sub-agent began).
func agentAfter(t *testing.T, s *importer.Session, callID string) loom.Part {
	t.Helper()
	m, tool := toolPart(t, s, callID)
	after := false
	for _, p := range m.Parts {
		after = after || p.ID == tool.ID
		if after && p.Type == loom.PartAgent && p.ID == tool.ID+"/agent" {
			return p
		}
	}
	t.Fatalf("call %s has no agent part after it", callID)
	return loom.Part{}
}

func output(p loom.Part) string { return loom.JSONText(p.Output) }

func TestRoots(t *testing.T) {
	env := func(v map[string]string) func(string) string { return func(k string) string { return v[k] } }
	if got := New().Roots(env(nil), "/home/u"); !slices.Equal(got, []string{"/home/u/.claude/projects"}) {
		t.Errorf("Roots = %v", got)
	}
	if got := New().Roots(env(map[string]string{"CLAUDE_CONFIG_DIR": "/cfg"}), "/home/u"); !slices.Equal(got, []string{"/cfg/projects"}) {
		t.Errorf("Roots with CLAUDE_CONFIG_DIR = %v", got)
	}
	if New().Tool() != Tool {
		t.Errorf("Tool = %q", New().Tool())
	}
}

func TestBundlesSpotter(t *testing.T) {
	root := filepath.Join(samples, "spotter")
	bs, err := New().Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{spotterID + ".jsonl", spotterID + "/subagents/agent-a881341.jsonl", spotterID + "/subagents/agent-acompact-fffbd0.jsonl"},
		{"short.jsonl"},
		{"tool_heavy.jsonl"},
	}
	if len(bs) != len(want) {
		t.Fatalf("bundles = %v", bs)
	}
	for i, b := range bs {
		var rel []string
		for _, f := range b.Files {
			r, _ := filepath.Rel(root, f)
			rel = append(rel, filepath.ToSlash(r))
		}
		if !slices.Equal(rel, want[i]) {
			t.Errorf("bundle %d = %v, want %v", i, rel, want[i])
		}
	}
	// A session file given as the root brings its sub-agents along.
	bs, err = New().Bundles(context.Background(), filepath.Join(root, spotterID+".jsonl"))
	if err != nil || len(bs) != 1 || len(bs[0].Files) != 3 {
		t.Errorf("Bundles(session file) = %v, %v", bs, err)
	}
	bs, err = New().Bundles(context.Background(), filepath.Join(root, "nowhere"))
	if err != nil || len(bs) != 0 {
		t.Errorf("Bundles(missing root) = %v, %v", bs, err)
	}
}

func TestBundlesViewer(t *testing.T) {
	root := filepath.Join(samples, "viewer-sample-project")
	bs, err := New().Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bs {
		if len(b.Files) != 1 {
			t.Errorf("bundle %v: want one file", b.Files)
		}
		names = append(names, filepath.Base(b.Name()))
	}
	// Session bundles first; the agent files, whose parents are in other
	// bundles, after them.
	want := []string{af7ID + ".jsonl", c037ID + ".jsonl", fe5eID + ".jsonl", "agent-test-hash-123.jsonl", "agent-test-hash-456.jsonl"}
	if !slices.Equal(names, want) {
		t.Errorf("bundles = %v, want %v", names, want)
	}
}

// bundleNames names each bundle by its files' paths relative to root,
// joined by "+".
func bundleNames(root string, bs []importer.Bundle) []string {
	var out []string
	for _, b := range bs {
		var rel []string
		for _, f := range b.Files {
			r, _ := filepath.Rel(root, f)
			rel = append(rel, filepath.ToSlash(r))
		}
		out = append(out, strings.Join(rel, "+"))
	}
	return out
}

func TestBundlesLayout(t *testing.T) {
	root := t.TempDir()
	write := func(rel string) {
		p := filepath.Join(root, rel)
		importertest.MkdirAll(t, filepath.Dir(p))
		importertest.WriteFile(t, p, []byte("{}\n"), 0o644)
	}
	write("-home-a/s1.jsonl")
	write("-home-a/s1/subagents/agent-x.jsonl")
	write("-home-a/s1/tool-results/big.txt")
	write("-home-a/gone/subagents/agent-y.jsonl") // its session file was deleted
	write("-home-a/agent-z.jsonl")
	write("-home-b/s2.jsonl")
	write("-home-b/notes.txt")
	bs, err := New().Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	got := bundleNames(root, bs)
	want := []string{
		"-home-a/s1.jsonl+-home-a/s1/subagents/agent-x.jsonl",
		"-home-b/s2.jsonl",
		"-home-a/gone/subagents/agent-y.jsonl",
		"-home-a/agent-z.jsonl",
	}
	if !slices.Equal(got, want) {
		t.Errorf("bundles:\n got %v\nwant %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Bundles(ctx, root); err == nil {
		t.Error("Bundles with a cancelled context: no error")
	}
}
