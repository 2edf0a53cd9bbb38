package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// installAgentSessions puts the sample files where each tool keeps its
// sessions under home, and returns the Claude Code projects directory.
func installAgentSessions(t *testing.T, home string) string {
	t.Helper()
	claude := filepath.Join(home, ".claude", "projects")
	clitest.CopyTree(t, filepath.Join(clitest.Samples, "claude-code", "viewer-sample-project"), filepath.Join(claude, "-path-to-Demo"))
	clitest.CopyTree(t, filepath.Join(clitest.Samples, "claude-code", "spotter"), filepath.Join(claude, "-home-user-spotter"))
	codexDir := filepath.Join(home, ".codex", "sessions", "2025", "09", "20")
	os.MkdirAll(codexDir, 0o755)
	b, _ := os.ReadFile(filepath.Join(clitest.Samples, "codex", "vibecodingtracker-codex.jsonl"))
	os.WriteFile(filepath.Join(codexDir, "rollout-2025-09-20T10-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl"), b, 0o644)
	gemDir := filepath.Join(home, ".gemini", "tmp", "9e6a1b5c", "chats")
	os.MkdirAll(gemDir, 0o755)
	b, _ = os.ReadFile(filepath.Join(clitest.Samples, "gemini", "vibecodingtracker-gemini.jsonl"))
	os.WriteFile(filepath.Join(gemDir, "session-2025-09-20T10-00-a1b2c3d4.jsonl"), b, 0o644)
	// Open Codex keeps its conversations beside Codex's days, a file
	// written by the real open-codex 0.1.31.
	b, _ = os.ReadFile(filepath.Join("..", "..", "importer", "opencodex", "testdata", "real", "rollout-2026-11-27-0a86b004-88c3-40c9-8bda-06b4e856fc21.json"))
	os.WriteFile(filepath.Join(home, ".codex", "sessions", "rollout-2026-11-27-0a86b004-88c3-40c9-8bda-06b4e856fc21.json"), b, 0o644)
	// opencode wrote no sample: its reader's own storage tree stands in.
	clitest.CopyTree(t, filepath.Join("..", "..", "importer", "opencode", "testdata", "data", "storage"), filepath.Join(home, ".local", "share", "opencode", "storage"))
	// Written a while ago, as a user's files are.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	return claude
}

// Every tool's sessions come in from their default places; a second run
// reads nothing and adds nothing; the imported sessions are listed,
// searchable and shown with where they came from.
func TestImportFromAgents(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	installAgentSessions(t, fx.Home)

	dry := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "all", "--dry-run", "--json"))
	if !dry.DryRun || clitest.ToolReport(t, dry, "claude-code").SessionsNew == 0 {
		t.Fatalf("dry run: %+v", dry)
	}
	if out := fx.MustExec(t, "session", "list", "--all-projects", "--json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("dry run wrote sessions: %s", out)
	}

	rep := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "all", "--json"))
	total := 0
	for _, tool := range []string{"claude-code", "codex", "gemini", "opencode"} {
		tr := clitest.ToolReport(t, rep, tool)
		if tr.FilesRead == 0 || tr.SessionsNew == 0 || tr.MessagesAdded == 0 || tr.ProblemCount != 0 {
			t.Errorf("%s: %+v", tool, tr)
		}
		total += tr.SessionsNew
	}
	cc := clitest.ToolReport(t, rep, "claude-code")
	if cc.Skipped["progress"] != 1348 {
		t.Errorf("claude-code progress lines skipped = %d, want 1348 (1335 + 3 + 10 in three files)", cc.Skipped["progress"])
	}

	again := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "all", "--json"))
	for _, tr := range again.Tools {
		if tr.FilesRead != 0 || tr.MessagesAdded != 0 || tr.SessionsNew != 0 {
			t.Errorf("second import of %s: %+v", tr.Tool, tr)
		}
	}

	// Lines appended to a session file: exactly those come in.
	file := filepath.Join(fx.Home, ".claude", "projects", "-home-user-spotter", "short.jsonl")
	last := lastLine(t, file)
	prev := last["uuid"]
	var add []byte
	for i, l := range []struct{ typ, text string }{{"user", "one more question"}, {"assistant", "one more answer"}} {
		id := fmt.Sprintf("7d3c9a10-0000-4000-8000-00000000000%d", i)
		msg := map[string]any{"role": "user", "content": l.text}
		if l.typ == "assistant" {
			msg = map[string]any{"id": "msg_appended", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
				"content": []any{map[string]any{"type": "text", "text": l.text}}, "stop_reason": "end_turn",
				"usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}
		}
		b, _ := json.Marshal(map[string]any{"parentUuid": prev, "isSidechain": false, "type": l.typ, "message": msg,
			"uuid": id, "sessionId": last["sessionId"], "cwd": last["cwd"], "version": last["version"],
			"timestamp": "2026-02-10T23:59:0" + fmt.Sprint(i) + ".000Z"})
		add = append(append(add, b...), '\n')
		prev = id
	}
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(add)
	f.Close()
	grown := clitest.ToolReport(t, clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "claude-code", "--json")), "claude-code")
	if grown.FilesRead != 1 || grown.SessionsGrown != 1 || grown.MessagesAdded != 2 || grown.SessionsNew != 0 {
		t.Fatalf("after appending two lines: %+v", grown)
	}
	if out := fx.MustExec(t, "search", "one more answer", "--all-projects", "--json"); !strings.Contains(out, "7d3c9a10-0000-4000-8000-000000000001") {
		t.Fatalf("appended reply not searchable: %s", out)
	}
	// --since: files changed before it are passed over.
	elsewhere := filepath.Join(fx.Home, "backup")
	os.MkdirAll(elsewhere, 0o755)
	b, _ := os.ReadFile(filepath.Join(clitest.Samples, "codex", "vibecodingtracker-codex.jsonl"))
	os.WriteFile(filepath.Join(elsewhere, "rollout-2025-09-19T09-02-12-01996135-afde-7911-97f0-d863511eca57.jsonl"), b, 0o644)
	for since, want := range map[string]int{"2100-01-01": 0, "7d": 1} {
		r := clitest.ToolReport(t, clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "codex", elsewhere, "--since", since, "--dry-run", "--json")), "codex")
		if r.FilesRead != want {
			t.Errorf("--since %s read %d files, want %d", since, r.FilesRead, want)
		}
	}

	var listed []*loom.Session
	json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "--all-projects", "--limit", "1000", "--json")), &listed)
	if len(listed) == 0 {
		t.Fatal("no sessions listed after the import")
	}
	var cl []*loom.Session
	json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "--all-projects", "--surface", "claude-code", "--json")), &cl)
	for _, s := range cl {
		if s.Surface != "claude-code" || s.Source == nil || s.Source.Tool != "claude-code" || !strings.HasPrefix(s.Key, "claude-code:") {
			t.Fatalf("listed claude-code session: %+v", s)
		}
	}
	if len(cl) == 0 {
		t.Fatal("--surface claude-code lists nothing")
	}

	// Plain output names the tool and what happened.
	out := fx.MustExec(t, "session", "import", "--from", "claude-code")
	for _, want := range []string{"claude-code", "files", "unchanged", "sessions", "messages"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// Bad input: an unknown tool is a usage error; a missing PATH is an
	// error naming it.
	if r := fx.Exec(t, "", "session", "import", "--from", "vim"); r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "claude-code, ") || !strings.Contains(r.Stderr, "codex, ") || !strings.Contains(r.Stderr, "opencode, ") {
		t.Errorf("unknown tool: exit %d, %s", r.Code, r.Stderr)
	}
	if r := fx.Exec(t, "", "session", "import", "--from", "codex", filepath.Join(fx.Home, "nope")); r.Code != cli.ExitError || !strings.Contains(r.Stderr, "nope") {
		t.Errorf("missing path: exit %d, %s", r.Code, r.Stderr)
	}
	if r := fx.Exec(t, "", "session", "import", "--watch", "x.jsonl"); r.Code != cli.ExitUsage {
		t.Errorf("--watch without --from: exit %d, %s", r.Code, r.Stderr)
	}
}

// --watch: a line appended to a Claude Code session file is searchable
// in loom within two seconds.
func TestImportWatch(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	claude := installAgentSessions(t, fx.Home)
	reports := fx.WatchImports(t, "claude-code")
	select {
	case rep := <-reports:
		if clitest.ToolReport(t, rep, "claude-code").SessionsNew == 0 {
			t.Fatalf("first watch run: %+v", rep)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("--watch printed no first report")
	}

	file := filepath.Join(claude, "-home-user-spotter", "short.jsonl")
	st := fx.OpenStore(t)
	written := appendClaudeUserLine(t, file, "9d1e5f2a-0000-4000-8000-00000000a11e", "zanzibarquokka appended while watching")
	for {
		hits, err := st.Search(context.Background(), loom.SearchQuery{Text: "zanzibarquokka", UserID: "local"})
		if err == nil && len(hits) == 1 {
			t.Logf("searchable %s after the line was written", time.Since(written).Round(time.Millisecond))
			break
		}
		if time.Since(written) > 2*time.Second {
			t.Fatalf("appended line not searchable within 2 s (hits %v, err %v)", hits, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// appendClaudeUserLine appends a user message to a Claude Code session
// file, as Claude Code writes one, and returns when it was written.
func appendClaudeUserLine(t *testing.T, file, uuid, text string) time.Time {
	t.Helper()
	last := lastLine(t, file)
	line := map[string]any{
		"parentUuid": last["uuid"], "isSidechain": false, "userType": "external", "cwd": last["cwd"],
		"sessionId": last["sessionId"], "version": last["version"], "gitBranch": last["gitBranch"], "type": "user",
		"message": map[string]any{"role": "user", "content": text},
		"uuid":    uuid, "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
	}
	b, _ := json.Marshal(line)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	written := time.Now()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	return written
}

func lastLine(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal([]byte(lines[i]), &m) == nil && m["uuid"] != nil {
			return m
		}
	}
	t.Fatalf("no message line in %s", file)
	return nil
}

// A session imported from each tool resumes with the fake provider: the
// conversation continues in a fork, and the request holds every earlier
// message, each tool call answered by its result.
func TestImportedSessionsResume(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	installAgentSessions(t, fx.Home)
	// The whole history goes out in one request: no compaction first.
	os.MkdirAll(filepath.Join(fx.Home, "config"), 0o755)
	os.WriteFile(filepath.Join(fx.Home, "config", "config.toml"), []byte("compact_after = 100000\n"), 0o644)
	fx.MustLoom(t, "", "session", "import", "--from", "all")
	for _, tool := range []string{"claude-code", "codex", "gemini", "opencode"} {
		t.Run(tool, func(t *testing.T) {
			var listed []*loom.Session
			json.Unmarshal([]byte(fx.MustLoom(t, "", "session", "list", "--all-projects", "--surface", tool, "--limit", "100", "--json").Stdout), &listed)
			var src *loom.Session
			for _, s := range listed {
				if s.Kind == loom.KindMain && (src == nil || s.MessageCount > src.MessageCount) {
					src = s
				}
			}
			if src == nil {
				t.Fatalf("no %s session imported", tool)
			}
			var shown struct {
				Session  *loom.Session   `json:"session"`
				Messages []*loom.Message `json:"messages"`
			}
			json.Unmarshal([]byte(fx.MustLoom(t, "", "session", "show", src.ID, "--full-history", "--json").Stdout), &shown)
			calls := map[string]bool{}
			var prompts []string
			// The model sees the latest compaction summary and what follows.
			for _, m := range shown.Messages {
				if m.Seq < shown.Session.SummarySeq {
					continue
				}
				for _, p := range m.Parts {
					if p.Type == loom.PartTool {
						calls[p.CallID] = true
					}
				}
				if m.Role == loom.RoleUser && m.Text() != "" {
					prompts = append(prompts, m.Text())
				}
			}
			before := len(fx.Srv.Requests())
			r := fx.MustLoom(t, "", "run", "--resume", src.ID, "please go on")
			if !strings.Contains(r.Stderr, "in a fork of it") {
				t.Errorf("resuming an import does not say it forks: %s", r.Stderr)
			}
			reqs := fx.Srv.Requests()
			if len(reqs) != before+1 {
				t.Fatalf("provider got %d requests, want 1", len(reqs)-before)
			}
			body := reqs[len(reqs)-1].Body
			asked, answered := map[string]bool{}, map[string]bool{}
			var users []string
			for _, raw := range body["messages"].([]any) {
				m := raw.(map[string]any)
				if tcs, ok := m["tool_calls"].([]any); ok {
					for _, tc := range tcs {
						asked[tc.(map[string]any)["id"].(string)] = true
					}
				}
				if id, ok := m["tool_call_id"].(string); ok {
					if !asked[id] {
						t.Errorf("result for %s before its call", id)
					}
					answered[id] = true
				}
				if m["role"] == "user" {
					if c, ok := m["content"].(string); ok {
						users = append(users, c)
					}
				}
			}
			for id := range calls {
				if !asked[id] || !answered[id] {
					t.Errorf("tool call %s: sent %v, answered %v", id, asked[id], answered[id])
				}
			}
			if len(asked) != len(calls) || len(answered) != len(calls) {
				t.Errorf("%d calls stored, %d sent, %d answered", len(calls), len(asked), len(answered))
			}
			// Every prompt goes out, in order (a summary goes out as a
			// user message of its own too; the tool's injected context,
			// stored as system messages, does not), and the new one last.
			if len(users) == 0 || users[len(users)-1] != "please go on" {
				t.Fatalf("last user message sent: %q", users)
			}
			i := 0
			for _, u := range users {
				if i < len(prompts) && u == prompts[i] {
					i++
				}
			}
			if i != len(prompts) {
				t.Errorf("%d of %d stored prompts sent in order; sent %q", i, len(prompts), users)
			}
			// The import is left as it was; the fork holds the new turn.
			after := fx.MustLoom(t, "", "session", "show", src.ID, "--json").Stdout
			var again struct {
				Session *loom.Session `json:"session"`
			}
			json.Unmarshal([]byte(after), &again)
			if again.Session.MessageCount != src.MessageCount {
				t.Errorf("the import grew from %d to %d messages", src.MessageCount, again.Session.MessageCount)
			}
		})
	}
}

// On the server, the key of an imported session continues it: the first
// message forks it and the fork takes the key, the next one continues
// the fork; the import itself is left as it was.
func TestServerContinuesImportedSession(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	installAgentSessions(t, fx.Home)
	fx.MustExec(t, "session", "import", "--from", "codex")
	var imported []*loom.Session
	json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "--all-projects", "--surface", "codex", "--json")), &imported)
	if len(imported) != 1 {
		t.Fatalf("imported codex sessions: %d", len(imported))
	}
	src := imported[0]
	fake := openaitest.NewServer()
	defer fake.Close()
	sv := clitest.StartServe(t, fx, map[string]string{"OPENAI_BASE_URL": fake.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini"}, "")
	first := clitest.PostTurn(t, sv, sv.Token, src.Key, "where were we?")
	second := clitest.PostTurn(t, sv, sv.Token, src.Key, "and then?")
	sv.Stop()
	if first == src.ID || second != first {
		t.Fatalf("turns ran in %s then %s; the import is %s", first, second, src.ID)
	}
	st := fx.OpenStore(t)
	fork, err := st.Session(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	if fork.Kind != loom.KindFork || fork.ParentID != src.ID || fork.Key != src.Key || fork.Project.ID != "" ||
		fork.MessageCount < src.MessageCount+4 || fork.Source != nil || fork.Model != "gpt-4o-mini" {
		t.Fatalf("the continuing fork: %+v", fork)
	}
	if again, _ := st.Session(context.Background(), src.ID); again.MessageCount != src.MessageCount {
		t.Fatalf("the import grew to %d messages", again.MessageCount)
	}
	// Read again, the source finds its copy, not the fork that took its
	// key: nothing is added anywhere.
	now := time.Now().Add(-time.Minute)
	files, _ := filepath.Glob(filepath.Join(fx.Home, ".codex", "sessions", "*", "*", "*", "*.jsonl"))
	for _, f := range files {
		os.Chtimes(f, now, now)
	}
	tr := clitest.ToolReport(t, clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "codex", "--json")), "codex")
	if tr.FilesRead != 1 || tr.SessionsUnchanged != 1 || tr.SessionsNew+tr.SessionsGrown+tr.MessagesAdded != 0 {
		t.Fatalf("re-import after the server continued it: %+v", tr)
	}
}

// An import from a path that does not exist says that nothing was
// imported, in one line with the path, not "everything else was
// imported"; one that read other files beside a failed one still says
// the rest came in.
func TestImportFromAMissingPath(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	missing := filepath.Join(fx.Home, "no-such-dir")
	r := fx.Exec(t, "", "session", "import", "--from", "claude-code", missing)
	if line := strings.TrimSpace(r.Stderr); r.Code != cli.ExitError || strings.Contains(line, "\n") || !strings.Contains(line, missing) ||
		strings.Contains(line, "everything else") || !strings.Contains(line, "nothing was imported") {
		t.Errorf("import from a missing path: exit %d, stderr %q", r.Code, r.Stderr)
	}
	claude := installAgentSessions(t, fx.Home)
	r = fx.Exec(t, "", "session", "import", "--from", "claude-code", claude, missing)
	if r.Code != cli.ExitError || !strings.Contains(r.Stderr, "everything else was imported") {
		t.Errorf("import from a missing path and a real one: exit %d, stderr %q", r.Code, r.Stderr)
	}
}
