package claudecode

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

func TestCompactionAgentTitle(t *testing.T) {
	dir := filepath.Join(samples, "spotter")
	compaction := filepath.Join(dir, spotterID, "subagents", "agent-acompact-fffbd0.jsonl")
	res := readFiles(t, filepath.Join(dir, spotterID+".jsonl"), filepath.Join(dir, spotterID, "subagents", "agent-a881341.jsonl"), compaction)
	comp := importertest.Session(t, res, spotterID+"/agent-acompact-fffbd0")
	// Its prompt is the instructions Claude Code gives every compaction.
	if m := importertest.Message(t, comp, "a69dad83-a97a-4beb-a54e-f76755fb4546"); m.Role != loom.RoleUser ||
		!strings.HasPrefix(m.Text(), "Your task is to create a detailed summary of the conversation so far") {
		t.Fatalf("compaction prompt %s %q", m.Role, m.Text())
	}
	if got := importer.Title(comp); got != "Compaction of Implement spotter-gqc" {
		t.Errorf("compaction agent's title %q", got)
	}
	// Read without its session file, its parent's title is not known.
	res = readFiles(t, compaction)
	if got := importer.Title(res.Sessions[0]); got != "Compaction summary" {
		t.Errorf("alone, compaction agent's title %q", got)
	}
}

func TestSubagentTitleIsNeverJSON(t *testing.T) {
	// A sub-agent whose call has no description and whose prompt is a
	// tool's input passed on as JSON.
	dir := t.TempDir()
	main := writeLines(t, filepath.Join(dir, caseSID+".jsonl"),
		user("u1", "", 0, "review the diff"),
		asst("a1", "u1", 1, "m1", toolUse("t1", "Agent", L{"prompt": `{"files":["api.go","db.go"],"focus":"error handling"}`, "subagent_type": "code-reviewer"})),
		with(user("r1", "a1", 9, []any{toolResult("t1", "No issues found.", false)}), "toolUseResult", L{"status": "completed", "agentId": "a7c31f0", "totalTokens": 5120}),
		asst("a2", "r1", 10, "m2", text("The reviewer found no issues.")),
	)
	sub := writeLines(t, filepath.Join(dir, caseSID, "subagents", "agent-a7c31f0.jsonl"),
		with(user("s1", "", 2, `{"files":["api.go","db.go"],"focus":"error handling"}`), "isSidechain", true, "agentId", "a7c31f0"),
		with(asst("s2", "s1", 8, "sm1", text("No issues found.")), "isSidechain", true, "agentId", "a7c31f0"),
	)
	res := readFiles(t, main, sub)
	s := importertest.Session(t, res, caseSID+"/agent-a7c31f0")
	if a := agentAfter(t, res.Sessions[0], "t1"); a.SessionID != s.SourceID {
		t.Fatalf("agent part %+v", a)
	}
	if got := importer.Title(s); got != "code-reviewer sub-agent" {
		t.Errorf("sub-agent title %q", got)
	}
	// Alone, without the call that names the agent.
	if got := importer.Title(readFiles(t, sub).Sessions[0]); got != "Sub-agent" {
		t.Errorf("sub-agent title, read alone, %q", got)
	}
}

func TestManualCompactWithoutAgentFile(t *testing.T) {
	// Claude Code 2.1 after /compact: the compact_boundary, the summary
	// (isCompactSummary), then the command's own lines; no compaction
	// agent's file beside the session.
	const sid = "6b1e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14"
	path := filepath.Join("testdata", sid+".jsonl")
	bs, err := New().Bundles(context.Background(), path)
	if err != nil || len(bs) != 1 || len(bs[0].Files) != 1 {
		t.Fatalf("bundles %v, %v", bs, err)
	}
	res := readFiles(t, path)
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{"file-history-snapshot": 1, "system:turn_duration": 1})
	s := res.Sessions[0]
	want := []string{
		"user:3d0a1c52-8f4e-4b7a-a1d9-6c2e5f8b0a31",
		"assistant:9e4b7f10-2c6d-4a83-b5e1-8d0f3a9c2e67",
		"assistant:5b2d8e91-7f3a-4c64-9d0e-2a6f1b8c4e73",
		"summary:a4f6c2d8-1e9b-4a37-8c5d-3f0e7b2a6d91",
		"system:2c5e8a0f-6d1b-4f93-a7c4-9e2b5d8f1a36", // the caveat
		"system:7a9d3f1c-2e8b-4c56-b0a4-8f6e1d3b9c27", // /compact
		"system:d4e1b7a3-8c0f-4d29-9e6b-1a5c3f8d2b70", // its output
		"user:8b0e4c9d-3a7f-4e12-b5d8-6c2a9f1e4b35",
		"assistant:1f7c3a5e-9b2d-4d80-a6e4-3c8f0b5d7a19",
	}
	if got := roles(s); !slices.Equal(got, want) {
		t.Errorf("messages:\n got %v\nwant %v", got, want)
	}
	if m := importertest.Message(t, s, "7a9d3f1c-2e8b-4c56-b0a4-8f6e1d3b9c27"); m.Text() != "/compact" {
		t.Errorf("command %q", m.Text())
	}
	// The summary's text is in a text part of its own, with the
	// compaction's metadata, and no agent part: there is no agent file.
	sum := importertest.Message(t, s, "a4f6c2d8-1e9b-4a37-8c5d-3f0e7b2a6d91")
	if len(sum.Parts) != 1 || sum.Parts[0].Type != loom.PartText ||
		!strings.HasPrefix(sum.Parts[0].Text, "This session is being continued from a previous conversation") ||
		!strings.Contains(sum.Parts[0].Text, "`readConfig` renamed to `LoadConfig`") ||
		string(sum.Parts[0].Metadata) != `{"trigger":"manual","preTokens":48213}` || sum.Usage.Compactions != 1 {
		t.Errorf("summary %+v", sum)
	}
	if got := importer.Title(s); got != "Rename readConfig to LoadConfig and update the callers" {
		t.Errorf("title %q", got)
	}
}

const linkS1, linkS2 = "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"

// linkedTree makes ~/.claude/projects a link to a directory on another
// disk, where one project directory is a link, a session's subagents
// directory is a link and so is one sub-agent's file, and a link leads
// back up the tree. It returns the projects directory.
func linkedTree(t *testing.T) string {
	t.Helper()
	disk, other, home := t.TempDir(), t.TempDir(), t.TempDir()
	sess := func(dir, id string) {
		writeLines(t, filepath.Join(dir, id+".jsonl"), user("u1", "", 0, "hello"), asst("a1", "u1", 1, "m1", text("hi")))
	}
	sess(filepath.Join(disk, "-home-me-a"), linkS1)
	sess(filepath.Join(other, "project-b"), linkS2)
	writeLines(t, filepath.Join(other, "agents-of-s1", "agent-x1.jsonl"), with(user("x1", "", 0, "look"), "isSidechain", true))
	writeLines(t, filepath.Join(other, "loose", "agent-x2.jsonl"), with(user("x2", "", 0, "look again"), "isSidechain", true))
	importertest.Symlink(t, disk, filepath.Join(home, ".claude", "projects"))
	importertest.Symlink(t, filepath.Join(other, "project-b"), filepath.Join(disk, "-home-me-b"))
	importertest.Symlink(t, filepath.Join(other, "agents-of-s1"), filepath.Join(disk, "-home-me-a", linkS1, "subagents"))
	importertest.Symlink(t, filepath.Join(other, "loose", "agent-x2.jsonl"), filepath.Join(other, "agents-of-s1", "agent-x2.jsonl"))
	importertest.Symlink(t, disk, filepath.Join(disk, "-home-me-a", "back"))
	return New().Roots(nil, home)[0]
}

func TestBundlesFollowLinks(t *testing.T) {
	root := linkedTree(t)
	bs, err := New().Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	got := bundleNames(root, bs)
	want := []string{
		"-home-me-a/" + linkS1 + ".jsonl+-home-me-a/" + linkS1 + "/subagents/agent-x1.jsonl+-home-me-a/" + linkS1 + "/subagents/agent-x2.jsonl",
		"-home-me-b/" + linkS2 + ".jsonl",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bundles:\n got %q\nwant %q", got, want)
	}
	res := readFiles(t, bs[0].Files...)
	if ids := importertest.SourceIDs(res.Sessions); !slices.Equal(ids, []string{linkS1, linkS1 + "/agent-x1", linkS1 + "/agent-x2"}) {
		t.Errorf("sessions %v", ids)
	}
}

func TestFileBundleFollowsLinks(t *testing.T) {
	// A session file given as the root brings its sub-agents, from a
	// linked subagents directory, a linked file among them.
	root := linkedTree(t)
	b := importertest.OneBundle(t, New(), filepath.Join(root, "-home-me-a", linkS1+".jsonl"))
	var names []string
	for _, f := range b.Files {
		names = append(names, filepath.Base(f))
	}
	if want := []string{linkS1 + ".jsonl", "agent-x1.jsonl", "agent-x2.jsonl"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
}

func TestLinkedSessionFileAsRoot(t *testing.T) {
	// A session file given as the root is a link, with no subagents
	// directory beside it: its sub-agents are beside the file it leads
	// to. A dangling link, a directory and a file that is no transcript
	// there are not sub-agents.
	disk, home := t.TempDir(), t.TempDir()
	target := writeLines(t, filepath.Join(disk, "-home-me-a", linkS1+".jsonl"), user("u1", "", 0, "hello"), asst("a1", "u1", 1, "m1", text("hi")))
	subs := filepath.Join(disk, "-home-me-a", linkS1, "subagents")
	writeLines(t, filepath.Join(subs, "agent-x1.jsonl"), with(user("x1", "", 0, "look"), "isSidechain", true))
	writeLines(t, filepath.Join(subs, "notes.txt"), with(user("x2", "", 0, "not a transcript"), "isSidechain", true))
	importertest.MkdirAll(t, filepath.Join(subs, "agent-dir.jsonl"))
	importertest.Symlink(t, filepath.Join(subs, "gone.jsonl"), filepath.Join(subs, "agent-gone.jsonl"))
	root := filepath.Join(home, "picked", linkS1+".jsonl")
	importertest.Symlink(t, target, root)

	b := importertest.OneBundle(t, New(), root)
	real, err := filepath.EvalSymlinks(subs) // the temporary directory may be reached by a link
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{root, filepath.Join(real, "agent-x1.jsonl")}; !slices.Equal(b.Files, want) {
		t.Fatalf("files:\n got %q\nwant %q", b.Files, want)
	}
	res := readFiles(t, b.Files...)
	if ids := importertest.SourceIDs(res.Sessions); !slices.Equal(ids, []string{linkS1, linkS1 + "/agent-x1"}) {
		t.Errorf("sessions %v", ids)
	}
}
