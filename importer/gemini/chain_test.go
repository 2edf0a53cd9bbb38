package gemini

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// The main tree: a session with a rewind and a sub-agent, and its
// sub-agent's recording; the project's marker gives the working
// directory.
func TestRewindAndSubagent(t *testing.T) {
	const (
		id  = "0a1b2c3d-0000-4000-8000-000000000001"
		sub = id + "/b2c3d4e5-0000-4000-8000-000000000002"
	)
	chats := filepath.Join("testdata", "tmp", "example", "chats")
	res := read(t,
		filepath.Join(chats, "session-2026-09-05T09-00-0a1b2c3d.jsonl"),
		filepath.Join(chats, "0a1b2c3d-0000-4000-8000-000000000001", "b2c3d4e5-0000-4000-8000-000000000002.jsonl"))
	if len(res.Skipped) != 0 || len(res.Problems) != 0 {
		t.Errorf("skipped %v problems %v", res.Skipped, res.Problems)
	}
	var order []string
	for _, s := range res.Sessions {
		order = append(order, s.SourceID)
	}
	if want := []string{id, id + "@u4", sub}; !slices.Equal(order, want) {
		t.Fatalf("sessions %v, want %v", order, want)
	}

	s := res.Sessions[0]
	if got, want := ids(s), []string{"u1", "g1", "g2", "u2", "g3", "g4", "u5", "g7"}; !slices.Equal(got, want) {
		t.Errorf("main ids %v, want %v", got, want)
	}
	wantCounts(t, s, counts{
		Roles: map[string]int{loom.RoleUser: 3, loom.RoleAssistant: 5},
		Tools: map[string]int{loom.ToolCompleted: 2, loom.ToolError: 1},
	})
	if s.Kind != loom.KindMain || s.Title != "Find the parser" || s.Cwd != "/Users/dev/code/example" || s.Model != "gemini-2.5-flash" {
		t.Errorf("main: kind %q title %q cwd %q model %q", s.Kind, s.Title, s.Cwd, s.Model)
	}
	if !s.CreatedAt.Equal(importertest.Time(t, "2026-09-05T09:00:00Z")) || !s.UpdatedAt.Equal(importertest.Time(t, "2026-09-05T09:03:06Z")) {
		t.Errorf("main times %v %v", s.CreatedAt, s.UpdatedAt)
	}
	g1 := importertest.Message(t, s, "g1")
	if g1.Parts[0].Text != "**Planning**\n\nRead the file first." || output(g1.Parts[1]) != "# Example\n" {
		t.Errorf("g1 parts %+v", g1.Parts)
	}
	if want := (loom.Usage{InputTokens: 3000, OutputTokens: 340, ReasoningTokens: 300, CacheReadTokens: 9000, APICalls: 1}); g1.Usage != want {
		t.Errorf("g1 usage %+v", g1.Usage)
	}
	// tool-use prompt tokens count as input
	if want := (loom.Usage{InputTokens: 14000 - 12800 + 120, OutputTokens: 900, ReasoningTokens: 400, CacheReadTokens: 12800, APICalls: 1}); importertest.Message(t, s, "g4").Usage != want {
		t.Errorf("g4 usage %+v", importertest.Message(t, s, "g4").Usage)
	}
	// Results the record lacked come from the next user record.
	search := tool(t, s, "call-2")
	if search.Status != loom.ToolCompleted || output(search) != "3 results" || !search.EndedAt.Equal(importertest.Time(t, "2026-09-05T09:01:06Z")) {
		t.Errorf("call-2 %+v", search)
	}
	shell := tool(t, s, "call-3")
	if shell.Status != loom.ToolError || shell.Error != "exit status 1" || len(shell.Output) != 0 {
		t.Errorf("call-3 %+v", shell)
	}

	f := res.Sessions[1]
	if f.Kind != loom.KindFork || f.ParentSourceID != id || f.ForkTurn != 2 || f.Title != "" || f.Cwd != "/Users/dev/code/example" {
		t.Errorf("fork: kind %q parent %q turn %d title %q cwd %q", f.Kind, f.ParentSourceID, f.ForkTurn, f.Title, f.Cwd)
	}
	if got, want := ids(f), []string{"u1", "g1", "g2", "u2", "g3", "g4", "u4", "g5", "g6"}; !slices.Equal(got, want) {
		t.Errorf("fork ids %v, want %v", got, want)
	}
	wantCounts(t, f, counts{
		Roles:  map[string]int{loom.RoleUser: 3, loom.RoleAssistant: 6},
		Tools:  map[string]int{loom.ToolCompleted: 3, loom.ToolError: 1},
		Agents: 1,
	})
	if !f.UpdatedAt.Equal(importertest.Time(t, "2026-09-05T09:02:20Z")) || f.Model != "gemini-2.5-pro" {
		t.Errorf("fork updated %v model %q", f.UpdatedAt, f.Model)
	}
	g5 := importertest.Message(t, f, "g5")
	if len(g5.Parts) != 2 || g5.Parts[1].Type != loom.PartAgent || g5.Parts[1].Name != "codebase_investigator" || g5.Parts[1].SessionID != sub {
		t.Errorf("g5 parts %+v", g5.Parts)
	}
	// The shared messages are copies: the importer numbers each session's.
	if f.Messages[0] == s.Messages[0] {
		t.Error("fork shares message values with its parent")
	}

	// The sub-agent ran in the abandoned branch: the branch is its parent.
	a := res.Sessions[2]
	if a.Kind != loom.KindSubagent || a.ParentSourceID != id+"@u4" || a.Cwd != "/Users/dev/code/example" || a.Model != "gemini-2.5-flash" {
		t.Errorf("sub-agent: kind %q parent %q cwd %q model %q", a.Kind, a.ParentSourceID, a.Cwd, a.Model)
	}
	wantCounts(t, a, counts{
		Roles: map[string]int{loom.RoleUser: 1, loom.RoleAssistant: 2},
		Tools: map[string]int{loom.ToolCompleted: 1},
	})
	if m := importertest.Message(t, a, "s1"); m.Text() != "Find the parser." || !m.CreatedAt.Equal(importertest.Time(t, "2026-09-05T09:02:04.6Z")) {
		t.Errorf("s1 %q %v", m.Text(), m.CreatedAt)
	}
	if !a.CreatedAt.Equal(importertest.Time(t, "2026-09-05T09:02:04.5Z")) || !a.UpdatedAt.Equal(importertest.Time(t, "2026-09-05T09:02:14Z")) {
		t.Errorf("sub-agent times %v %v", a.CreatedAt, a.UpdatedAt)
	}
}

// $set of messages: after compression (a summary and its
// acknowledgement, which Gemini CLI writes and is a system message, come
// in before the kept messages) and after a reload (the environment
// context comes in first).
func TestSnapshot(t *testing.T) {
	res := read(t, filepath.Join("testdata", "snapshot.jsonl"))
	if len(res.Sessions) != 1 || len(res.Skipped) != 0 || len(res.Problems) != 0 {
		t.Fatalf("sessions %d skipped %v problems %v", len(res.Sessions), res.Skipped, res.Problems)
	}
	s := res.Sessions[0]
	want := []string{"a1", "a2", "0123456789abcdef0123456789abcdef", "sum1", "ack1", "a3", "a4", "a5", "a6", "a8", "a9"}
	if got := ids(s); !slices.Equal(got, want) {
		t.Errorf("ids %v\nwant %v", got, want)
	}
	wantCounts(t, s, counts{
		Roles: map[string]int{loom.RoleUser: 4, loom.RoleAssistant: 4, loom.RoleSystem: 2, loom.RoleSummary: 1},
		Tools: map[string]int{loom.ToolCompleted: 2},
	})
	if m := importertest.Message(t, s, "ack1"); m.Role != loom.RoleSystem {
		t.Errorf("acknowledgement of the summary is a %s message", m.Role)
	}
	if m := importertest.Message(t, s, "sum1"); m.Role != loom.RoleSummary || !strings.Contains(m.Text(), "The user asked for reply 1.") {
		t.Errorf("summary %s %q", m.Role, m.Text())
	}
	if m := importertest.Message(t, s, "0123456789abcdef0123456789abcdef"); m.Role != loom.RoleSystem {
		t.Errorf("context role %s", m.Role)
	}
	if m := importertest.Message(t, s, "a4"); m.Text() != "reply 2" {
		t.Errorf("a4 %q", m.Text())
	}
	// A call written only in the reply's content, answered by the next
	// user record.
	p := tool(t, s, "call-b")
	if p.Status != loom.ToolCompleted || p.Name != "list_directory" || string(p.Input) != `{"dir_path":"."}` ||
		output(p) != "a.go\nb.go" || !p.EndedAt.Equal(importertest.Time(t, "2026-10-01T12:02:04Z")) {
		t.Errorf("call-b %+v", p)
	}
	if m := importertest.Message(t, s, "a6"); m.Parts[0].Text != "Listing." || m.Parts[1].CallID != "call-b" {
		t.Errorf("a6 parts %+v", m.Parts)
	}
	if s.Cwd != "/Users/dev/code/snap" || !s.UpdatedAt.Equal(importertest.Time(t, "2026-10-01T12:03:00Z")) {
		t.Errorf("cwd %q updated %v", s.Cwd, s.UpdatedAt)
	}
}

// A rewind to an id the file does not hold takes everything out, as
// Gemini CLI does; a rewind in the middle of a turn forks at the turn
// before.
func TestRewindLost(t *testing.T) {
	res := read(t, filepath.Join("testdata", "rewind-lost.jsonl"))
	if len(res.Problems) != 0 || len(res.Skipped) != 0 {
		t.Errorf("problems %v skipped %v", res.Problems, res.Skipped)
	}
	if got, want := ids(importertest.Session(t, res, "lost-1")), []string{"x3", "x5"}; !slices.Equal(got, want) {
		t.Errorf("main %v, want %v", got, want)
	}
	a := importertest.Session(t, res, "lost-1@x1")
	if got, want := ids(a), []string{"x1", "x2"}; !slices.Equal(got, want) || a.ForkTurn != 0 || a.ParentSourceID != "lost-1" {
		t.Errorf("fork x1: %v turn %d parent %q", got, a.ForkTurn, a.ParentSourceID)
	}
	b := importertest.Session(t, res, "lost-1@x4")
	if got, want := ids(b), []string{"x3", "x4"}; !slices.Equal(got, want) || b.ForkTurn != 0 {
		t.Errorf("fork x4: %v turn %d", got, b.ForkTurn)
	}
}

// A file made of rewinds cannot make the branches it keeps grow past its
// budget.
func TestRewindBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"sessionId":"many","projectHash":"x"}` + "\n")
	for i := range 2000 {
		b.WriteString(`{"id":"p` + strconv.Itoa(i) + `","type":"user","content":"q"}` + "\n")
	}
	for i := range 200 {
		b.WriteString(`{"id":"r` + strconv.Itoa(i) + `","type":"user","content":"r"}` + "\n")
		b.WriteString(`{"$rewindTo":"r` + strconv.Itoa(i) + `"}` + "\n")
	}
	file := filepath.Join(t.TempDir(), "many.jsonl")
	importertest.WriteFile(t, file, []byte(b.String()), 0o600)
	res := read(t, file)
	total := 0
	for _, s := range res.Sessions {
		if s.Kind == loom.KindFork {
			total += len(s.Messages)
		}
	}
	limit := forkBudgetBase + b.Len()/forkBudgetPerByte
	if total > limit || len(res.Sessions) > 1+limit/2001 || len(res.Sessions) < 10 {
		t.Errorf("%d sessions, %d fork messages, limit %d", len(res.Sessions), total, limit)
	}
	if len(res.Problems) == 0 || len(res.Problems) > maxProblems+1 {
		t.Errorf("%d problems", len(res.Problems))
	}
}
