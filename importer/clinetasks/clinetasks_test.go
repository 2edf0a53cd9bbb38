package clinetasks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	clineTask  = "1761900000000"
	legacyTask = "1700000000000"
	rooTask    = "9b2f6c1e-4d3a-4e5f-8a7b-1c2d3e4f5a6b"
	rooChild   = "0d1e2f3a-4b5c-4d6e-9f8a-7b6c5d4e3f2a"
)

// Cline's native tool calls (the environment details of both tasks
// counted): every prompt, reply, reasoning block and
// call once and in order, each call with its result; the environment
// details left out but read for the working directory; each request's
// usage on its reply.
func TestReadCline(t *testing.T) {
	res, s := importertest.ReadAllFor(t, Cline, filepath.Join("testdata", "cline"), clineTask)
	if s.Cwd != "/home/u/proj" || s.Model != "claude-sonnet-4-5" || s.Provider != "anthropic" || s.Title != "" || s.Kind != loom.KindMain {
		t.Errorf("session %+v", s)
	}
	if s.CreatedAt.UnixMilli() != 1761900000000 || s.UpdatedAt.UnixMilli() != 1761900120500 {
		t.Errorf("times %v %v", s.CreatedAt, s.UpdatedAt)
	}
	if got := importertest.Roles(s); got != "user assistant assistant user assistant user assistant" {
		t.Errorf("roles %q", got)
	}
	if got := s.Messages[0].Text(); got != "Fix the failing test in retry.go" {
		t.Errorf("prompt %q: the <task> tag is the extension's", got)
	}
	c := importertest.TallyOf(s)
	if c.Reasoning != 2 || c.Tools[loom.ToolCompleted] != 1 || c.Tools[loom.ToolError] != 1 || c.Files != 1 {
		t.Errorf("tally %+v", c)
	}
	read := s.Messages[1].Parts[2]
	if read.Name != "read_file" || read.CallID != "toolu_1" || string(read.Input) != `{"path":"retry.go"}` || string(read.Output) != `"for { try() }"` {
		t.Errorf("read_file %+v", read)
	}
	if run := s.Messages[2].Parts[1]; run.Status != loom.ToolError || run.Error != "exit status 1" {
		t.Errorf("execute_command %+v", run)
	}
	if got := s.Messages[3].Text(); !strings.HasPrefix(got, "[TASK RESUMPTION]") {
		t.Errorf("the text sent with the result %q", got)
	}
	if u := s.Messages[1].Usage; u.InputTokens != 1200 || u.OutputTokens != 80 || u.CacheWriteTokens != 3000 || u.CostUSD != 0.012 || u.APICalls != 1 {
		t.Errorf("first reply's usage %+v", u)
	}
	var total loom.Usage
	for _, m := range s.Messages {
		total.Add(m.Usage)
	}
	if total.InputTokens != 2400 || total.OutputTokens != 250 || total.APICalls != 4 {
		t.Errorf("the task's usage %+v: each finished request once", total)
	}
	if m := s.Messages[1]; m.CreatedAt.UnixMilli() != 1761900000020 || m.Model != "claude-sonnet-4-5" {
		t.Errorf("reply %v %q: the time of its request", m.CreatedAt, m.Model)
	}
	if res.Skipped["environment-details"] != 6 || res.Skipped["unknown-block:citations_delta"] != 1 || res.Skipped["unknown:system"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// Cline before native tool calls: the calls are in the reply's text and
// their results in the next prompt's, which are kept as they were sent.
func TestReadClineBeforeToolCalls(t *testing.T) {
	_, s := importertest.ReadAllFor(t, Cline, filepath.Join("testdata", "cline"), legacyTask)
	if got := importertest.Roles(s); got != "user assistant user assistant" || s.Cwd != "/home/u/old" {
		t.Errorf("roles %q, cwd %q", got, s.Cwd)
	}
	if !strings.Contains(s.Messages[1].Text(), "<read_file>") || !strings.Contains(s.Messages[2].Text(), `println("hi")`) {
		t.Errorf("messages %q %q", s.Messages[1].Text(), s.Messages[2].Text())
	}
	if u := s.Messages[3].Usage; u.InputTokens != 950 || u.OutputTokens != 25 {
		t.Errorf("usage %+v", u)
	}
}

// Roo Code: a sub-task is a sub-agent session linked from the call that
// started it; a compaction's summary is a summary message; OpenAI's
// prompt tokens lose the cached ones.
func TestReadRooCode(t *testing.T) {
	res := importertest.ReadAll(t, Roo, filepath.Join("testdata", "roo"))
	if len(res.Sessions) != 2 || len(res.Problems) != 0 {
		t.Fatalf("%d sessions, problems %v", len(res.Sessions), res.Problems)
	}
	s := importertest.Session(t, res, rooTask)
	if s.Title != "plan the release" || s.Cwd != "/home/u/rel" || s.CreatedAt.UnixMilli() != 1762000000000 {
		t.Errorf("session %+v", s)
	}
	if got := importertest.Roles(s); got != "user assistant summary assistant" {
		t.Errorf("roles %q", got)
	}
	reply := s.Messages[1]
	if reply.Parts[0].Type != loom.PartReasoning || reply.Parts[2].Status != loom.ToolCompleted || reply.CreatedAt.UnixMilli() != 1762000002000 {
		t.Errorf("reply %+v", reply)
	}
	agent := reply.Parts[3]
	if agent.Type != loom.PartAgent || agent.SessionID != rooChild {
		t.Errorf("agent part %+v", agent)
	}
	if m := s.Messages[2]; m.Usage.Compactions != 1 || m.Usage.APICalls != 0 {
		t.Errorf("summary %+v", m)
	}
	if u := s.Messages[3].Usage; u.InputTokens != 1000 || u.CacheReadTokens != 5000 || u.OutputTokens != 50 {
		t.Errorf("usage %+v", u)
	}
	child := importertest.Session(t, res, rooChild)
	if child.Kind != loom.KindSubagent || child.ParentSourceID != rooTask || child.Title != "write the changelog" {
		t.Errorf("sub-task %+v", child)
	}
}

// A task is imported once; a second import adds nothing; the task's
// next request and reply are added alone, and the sub-task is linked
// from its parent.
func TestImportAgain(t *testing.T) {
	st := importertest.Store(t)
	rep := importertest.Import(t, st, Roo, filepath.Join("testdata", "roo"))
	if rep.SessionsNew != 2 || rep.MessagesAdded != 6 || rep.ProblemCount != 0 {
		t.Fatalf("first import %+v", rep)
	}
	rep = importertest.Import(t, st, Roo, filepath.Join("testdata", "roo"))
	if rep.SessionsNew != 0 || rep.MessagesAdded != 0 {
		t.Fatalf("second import %+v", rep)
	}
	list, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var parent, child *loom.Session
	for _, x := range list {
		switch x.Kind {
		case loom.KindSubagent:
			child = x
		default:
			parent = x
		}
	}
	if parent == nil || child == nil || child.ParentID != parent.ID {
		t.Fatalf("sessions %+v", list)
	}
}

// --watch follows a task as the extension rewrites its conversation.
func TestWatchFollowsTask(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tasks", clineTask)
	src := filepath.Join("testdata", "cline", "tasks", clineTask)
	var api []json.RawMessage
	for _, n := range []string{apiFile, uiFile, metadataFile} {
		data := importertest.ReadBytes(t, filepath.Join(src, n))
		if n == apiFile {
			if err := json.Unmarshal(data, &api); err != nil {
				t.Fatal(err)
			}
			data, _ = json.Marshal(api[:6])
		}
		importertest.MkdirAll(t, dir)
		importertest.WriteFile(t, filepath.Join(dir, n), data, 0o644)
	}
	importertest.Follows(t, Cline, filepath.Dir(dir), func() {
		data, _ := json.Marshal(api[:8])
		if err := os.WriteFile(filepath.Join(dir, apiFile), data, 0o644); err != nil {
			t.Error(err)
		}
	}, 2)
}

func TestRootsAndBundles(t *testing.T) {
	home := filepath.FromSlash("/home/u")
	roots := Roo.Roots(func(string) string { return "" }, home)
	var want string
	switch runtime.GOOS {
	case "windows":
		want = filepath.Join(home, "AppData", "Roaming", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks")
	case "darwin":
		want = filepath.Join(home, "Library", "Application Support", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks")
	default:
		want = filepath.Join(home, ".config", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks")
	}
	if len(roots) != len(editors) || roots[0] != want {
		t.Errorf("roots %v, want %s first", roots, want)
	}
	portable := filepath.FromSlash("/opt/vscode/data")
	roots = Cline.Roots(importertest.Getenv("VSCODE_PORTABLE", portable), home)
	if roots[0] != filepath.Join(portable, "user-data", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks") {
		t.Errorf("portable roots %v", roots)
	}
	// One file of a task reads the whole task.
	one := filepath.Join("testdata", "cline", "tasks", clineTask, uiFile)
	bs, err := Cline.Bundles(context.Background(), one)
	if err != nil || len(bs) != 1 || !slices.Equal(bs[0].Files, []string{
		filepath.Join("testdata", "cline", "tasks", clineTask, apiFile), one,
		filepath.Join("testdata", "cline", "tasks", clineTask, metadataFile),
	}) {
		t.Errorf("bundles %v %v", bs, err)
	}
	if bs, err := Cline.Bundles(context.Background(), filepath.Join("testdata", "nosuch")); err != nil || len(bs) != 0 {
		t.Errorf("bundles %v %v", bs, err)
	}
}

// A conversation that is no JSON array is a problem, not an error; a
// task with only its UI messages is skipped.
func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	for n, data := range map[string]string{
		filepath.Join("a", apiFile): `{"role":"user"}`,
		filepath.Join("a", uiFile):  `[1, {"ts":"x"}]`,
		filepath.Join("b", uiFile):  `[]`,
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(n)), 0o755)
		os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644)
	}
	res := importertest.ReadAll(t, Cline, dir)
	if len(res.Sessions) != 0 || len(res.Problems) != 3 || res.Skipped["task-without-conversation"] != 1 {
		t.Errorf("sessions %d, problems %v, skipped %v", len(res.Sessions), res.Problems, res.Skipped)
	}
}
