package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// Hand-written files for what the samples do not show. Lines are built
// from maps; a string is written as it is.

type L = map[string]any

const caseSID = "11111111-2222-3333-4444-555555555555"

var base = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

func at(sec int) string { return base.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano) }

func writeLines(t *testing.T, path string, lines ...any) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		switch v := l.(type) {
		case string:
			b.WriteString(v)
		default:
			j, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(j)
		}
		b.WriteByte('\n')
	}
	importertest.MkdirAll(t, filepath.Dir(path))
	importertest.WriteFile(t, path, []byte(b.String()), 0o644)
	return path
}

// sessionFile writes <caseSID>.jsonl in a temporary directory.
func sessionFile(t *testing.T, lines ...any) string {
	t.Helper()
	return writeLines(t, filepath.Join(t.TempDir(), caseSID+".jsonl"), lines...)
}

func line(typ, uuid, parent string, sec int) L {
	l := L{"type": typ, "uuid": uuid, "timestamp": at(sec), "sessionId": caseSID, "cwd": "/work/p", "gitBranch": "main", "version": "2.1.50", "isSidechain": false}
	if parent != "" {
		l["parentUuid"] = parent
	} else {
		l["parentUuid"] = nil
	}
	return l
}

func user(uuid, parent string, sec int, content any) L {
	l := line("user", uuid, parent, sec)
	l["message"] = L{"role": "user", "content": content}
	return l
}

func asst(uuid, parent string, sec int, msgID string, blocks ...any) L {
	l := line("assistant", uuid, parent, sec)
	l["message"] = L{"id": msgID, "role": "assistant", "model": "claude-opus-4-6", "content": blocks,
		"usage": L{"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}}
	return l
}

func text(s string) L { return L{"type": "text", "text": s} }

func toolUse(id, name string, input any) L {
	return L{"type": "tool_use", "id": id, "name": name, "input": input}
}

func toolResult(id string, content any, isErr bool) L {
	return L{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": isErr}
}

func with(l L, kv ...any) L {
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i].(string)] = kv[i+1]
	}
	return l
}

func roles(s *importer.Session) []string {
	var out []string
	for _, m := range s.Messages {
		out = append(out, m.Role+":"+m.ID)
	}
	return out
}

func TestToolStatesAndContent(t *testing.T) {
	img := L{"type": "image", "source": L{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
	path := sessionFile(t,
		user("u1", "", 0, []any{text("what is in this picture?"), img}),
		asst("a1", "u1", 1, "m1",
			L{"type": "redacted_thinking", "data": "opaque"},
			L{"type": "thinking", "thinking": "", "signature": "sig"},
			toolUse("t1", "Read", L{"file_path": "/shot.png"}),
			toolUse("t2", "Bash", L{"command": "sleep 100"})),
		user("r1", "a1", 2, []any{toolResult("t1", []any{text("the file"), img}, false)}),
		// t2 never answered: the user interrupted and went on.
		user("i1", "r1", 3, []any{text("[Request interrupted by user for tool use]")}),
		user("u2", "i1", 4, "try again"),
		with(asst("e1", "u2", 5, "m-err", text("API Error: 529 overloaded")), "isApiErrorMessage", true),
		user("u3", "e1", 6, "again"),
		asst("a2", "u3", 7, "m2", toolUse("t3", "Bash", L{"command": "make"}), toolUse("t4", "Bash", nil)),
		user("r3", "a2", 8, []any{toolResult("t3", "boom", true)}),
	)
	// The API error line is Claude Code's own.
	lines, _ := os.ReadFile(path)
	path = writeLines(t, path, strings.Replace(string(lines), `"model":"claude-opus-4-6","role":"assistant","usage":{"cache_creation_input_tokens":20,"cache_read_input_tokens":100,"input_tokens":10,"output_tokens":5}},"parentUuid":"u2"`,
		`"model":"<synthetic>","role":"assistant"},"parentUuid":"u2"`, 1))
	res := readFiles(t, path)
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{"thinking:empty": 1})
	s := res.Sessions[0]
	checkTally(t, s, tally{
		Roles:     map[string]int{"user": 3, "assistant": 3, "system": 1},
		Tools:     map[string]int{"completed": 1, "error": 2, "running": 1},
		Reasoning: 1,
		Files:     2,
	})
	u := s.Messages[0]
	if len(u.Parts) != 2 || u.Parts[1].Type != loom.PartFile || u.Parts[1].Mime != "image/png" || u.Parts[1].URL != "data:image/png;base64,iVBORw0KGgo=" {
		t.Errorf("user message parts %+v", u.Parts)
	}
	a := s.Messages[1]
	if a.Parts[0].Type != loom.PartReasoning || string(a.Parts[0].Metadata) != `{"redacted_data":"opaque"}` {
		t.Errorf("redacted thinking %+v", a.Parts[0])
	}
	if _, p := toolPart(t, s, "t1"); p.Status != loom.ToolCompleted || output(p) != "the file" {
		t.Errorf("t1 %+v", p)
	}
	// The result's image comes after the reply's calls, in the order of
	// the lines that give them.
	if last := a.Parts[len(a.Parts)-1]; last.Type != loom.PartFile || last.ID != "r1/0/0" {
		t.Errorf("result image %+v", last)
	}
	if _, p := toolPart(t, s, "t2"); p.Status != loom.ToolError || p.Error != loom.Interrupted || p.EndedAt != nil {
		t.Errorf("t2 %+v", p)
	}
	if _, p := toolPart(t, s, "t3"); p.Status != loom.ToolError || p.Error != "boom" {
		t.Errorf("t3 %+v", p)
	}
	// The last message's unanswered call may still be running.
	if _, p := toolPart(t, s, "t4"); p.Status != loom.ToolRunning || string(p.Input) != "{}" {
		t.Errorf("t4 %+v", p)
	}
	e := importertest.Message(t, s, "e1")
	if e.Error == nil || e.Error.Message != "API Error: 529 overloaded" || e.Model != "" || e.Usage.APICalls != 0 {
		t.Errorf("API error message %+v", e)
	}
	if m := importertest.Message(t, s, "i1"); m.Role != loom.RoleSystem {
		t.Errorf("interruption role %s", m.Role)
	}
}

func TestInjectedText(t *testing.T) {
	path := sessionFile(t,
		user("u1", "", 0, []any{text("<ide_opened_file>The user opened main.go</ide_opened_file>"), text("fix the bug")}),
		with(user("m1", "u1", 0, "<system-reminder>be brief</system-reminder>"), "isMeta", true),
		asst("a1", "m1", 1, "m1x", text("fixed")),
		user("c1", "a1", 2, "<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>main.go</command-args>"),
		with(user("c1e", "c1", 2, []any{text("Review the file.")}), "isMeta", true),
		asst("a2", "c1e", 3, "m2", text("looks fine")),
		with(user("cv", "a2", 4, "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>"), "isMeta", true),
		user("c2", "cv", 4, "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"),
		user("o2", "c2", 4, "<local-command-stdout></local-command-stdout>"),
		user("bash", "o2", 5, "<bash-input>ls</bash-input>"),
		user("tn", "bash", 6, "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"),
	)
	res := readFiles(t, path)
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{})
	s := res.Sessions[0]
	want := []string{
		"system:u1/context", "user:u1", "system:m1", "assistant:a1",
		"user:c1", "system:c1e", "assistant:a2",
		"system:cv", "system:c2", "system:o2", "user:bash", "system:tn",
	}
	if got := roles(s); !slices.Equal(got, want) {
		t.Errorf("messages:\n got %v\nwant %v", got, want)
	}
	if got := importertest.Message(t, s, "u1").Text(); got != "fix the bug" {
		t.Errorf("typed text %q", got)
	}
	if got := importertest.Message(t, s, "c1").Text(); got != "/review main.go" {
		t.Errorf("command %q", got)
	}
	if got := importertest.Message(t, s, "c2").Text(); got != "/clear" {
		t.Errorf("local command %q", got)
	}
}

func TestMalformedAndUnknownLines(t *testing.T) {
	path := sessionFile(t,
		user("u1", "", 0, "hello"),
		`{"type":"user","uuid":"broken`,
		L{"type": "mystery", "uuid": "x1", "parentUuid": "u1"},
		L{"type": "attachment", "attachment": L{"type": "hook_additional_context", "content": "ctx"}},
		asst("a1", "u1", 1, "m1", text("hi"), L{"type": "hologram"}),
		`{"no":"type"}`,
		user("bad", "a1", 2, 5),
		with(user("u2", "bad", 3, "still read"), "timestamp", "yesterday"),
		`[1,2,3]`,
		with(user("u3", "u2", 4, "typed"), "isSidechain", "no"),
		"",
		asst("a2", "u3", 5, "m2", text("bye")),
	)
	res := readFiles(t, path)
	var lines []int
	for _, p := range res.Problems {
		if p.File != path {
			t.Errorf("problem in %s", p.File)
		}
		lines = append(lines, p.Line)
	}
	if !slices.Equal(lines, []int{2, 6, 7, 8, 9, 10}) {
		t.Errorf("problems at lines %v: %v", lines, res.Problems)
	}
	checkSkipped(t, res, map[string]int{"unknown:mystery": 1, "attachment:hook_additional_context": 1, "unknown:block:hologram": 1, "user:empty": 1})
	if len(res.Sessions) != 1 {
		t.Fatalf("sessions = %v", importertest.SourceIDs(res.Sessions))
	}
	s := res.Sessions[0]
	if got := roles(s); !slices.Equal(got, []string{"user:u1", "assistant:a1", "user:u2", "user:u3", "assistant:a2"}) {
		t.Errorf("messages = %v", got)
	}
	// A line without a usable time takes the time of the line before.
	if m := importertest.Message(t, s, "u2"); !m.CreatedAt.Equal(base.Add(2 * time.Second)) {
		t.Errorf("u2 time %v", m.CreatedAt)
	}
}

func TestCompactionWithoutBoundary(t *testing.T) {
	// Claude Code before compact_boundary lines: the summary starts a new
	// root, and continues the conversation.
	path := sessionFile(t,
		user("u1", "", 0, "build it"),
		asst("a1", "u1", 1, "m1", text("built")),
		user("cs", "", 2, "This session is being continued from a previous conversation that ran out of context. The summary: built."),
		user("u2", "cs", 3, "now test it"),
		asst("a2", "u2", 4, "m2", text("tested")),
	)
	res := readFiles(t, path)
	checkNoProblems(t, res)
	if len(res.Sessions) != 1 {
		t.Fatalf("sessions = %v", importertest.SourceIDs(res.Sessions))
	}
	s := res.Sessions[0]
	if got := roles(s); !slices.Equal(got, []string{"user:u1", "assistant:a1", "summary:cs", "user:u2", "assistant:a2"}) {
		t.Errorf("messages = %v", got)
	}
	if m := importertest.Message(t, s, "cs"); m.Usage.Compactions != 1 || !strings.HasSuffix(m.Text(), "The summary: built.") {
		t.Errorf("summary %+v", m)
	}
}

func TestFileWithoutSession(t *testing.T) {
	path := sessionFile(t,
		L{"type": "summary", "summary": "Some other session", "leafUuid": "abc"},
		L{"type": "file-history-snapshot", "messageId": "x", "snapshot": L{}},
		L{"type": "queue-operation", "operation": "enqueue", "content": "hi"},
	)
	res := readFiles(t, path)
	checkNoProblems(t, res)
	if len(res.Sessions) != 0 {
		t.Errorf("sessions = %v", importertest.SourceIDs(res.Sessions))
	}
	checkSkipped(t, res, map[string]int{"summary": 1, "file-history-snapshot": 1, "queue-operation": 1})
}

func TestDuplicateLines(t *testing.T) {
	u := user("u1", "", 0, "hello")
	path := sessionFile(t, u, u, asst("a1", "u1", 1, "m1", text("hi")))
	res := readFiles(t, path)
	checkSkipped(t, res, map[string]int{"duplicate:user": 1})
	if got := roles(res.Sessions[0]); !slices.Equal(got, []string{"user:u1", "assistant:a1"}) {
		t.Errorf("messages = %v", got)
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := New().Read(context.Background(), importer.Bundle{}); err == nil {
		t.Error("empty bundle: no error")
	}
	if _, err := New().Read(context.Background(), importer.Bundle{Files: []string{filepath.Join(t.TempDir(), "gone.jsonl")}}); err == nil {
		t.Error("missing file: no error")
	}
	// A missing sub-agent file is a problem, not an error.
	main := sessionFile(t, user("u1", "", 0, "hi"))
	res, err := New().Read(context.Background(), importer.Bundle{Files: []string{main, filepath.Join(filepath.Dir(main), caseSID, "subagents", "agent-x.jsonl")}})
	if err != nil || len(res.Problems) != 1 || len(res.Sessions) != 1 {
		t.Errorf("missing sub-agent file: %v, %+v", err, res)
	}
}

func TestRereadIsStable(t *testing.T) {
	path := filepath.Join(samples, "spotter", spotterID+".jsonl")
	a, b := readFiles(t, path), readFiles(t, path)
	ja, _ := json.Marshal(a.Sessions)
	jb, _ := json.Marshal(b.Sessions)
	if string(ja) != string(jb) {
		t.Error("two reads of one file differ")
	}
}

func TestFileWithoutTimes(t *testing.T) {
	u := user("u1", "", 0, "hello")
	delete(u, "timestamp")
	path := sessionFile(t, u)
	mtime := time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	res := readFiles(t, path)
	if s := res.Sessions[0]; !s.Messages[0].CreatedAt.Equal(mtime) || !s.CreatedAt.Equal(mtime) {
		t.Errorf("times %v %v", s.Messages[0].CreatedAt, s.CreatedAt)
	}
}

func TestCommandRoleKnownAtOnce(t *testing.T) {
	// Read before the model answered: the expansion Claude Code writes
	// with the command already tells it was sent to the model.
	path := sessionFile(t,
		user("c1", "", 0, "<command-message>fix is running…</command-message>\n<command-name>/fix</command-name>\n<command-args>the tests</command-args>"),
		with(user("c1e", "c1", 0, []any{text("Fix the failing tests: the tests")}), "isMeta", true),
	)
	res := readFiles(t, path)
	if got := roles(res.Sessions[0]); !slices.Equal(got, []string{"user:c1", "system:c1e"}) {
		t.Errorf("messages = %v", got)
	}
}

func TestServerToolsAndMixedLines(t *testing.T) {
	path := sessionFile(t,
		user("u1", "", 0, "search the web"),
		asst("a1", "u1", 1, "m1",
			L{"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": L{"query": "loom"}},
			L{"type": "web_search_tool_result", "tool_use_id": "srv1", "content": []any{L{"type": "web_search_result", "url": "https://example.com", "title": "Example"}}},
			toolUse("t1", "Bash", L{"command": "ls"})),
		// The result of t1 and a prompt typed while it ran, on one line.
		user("r1", "a1", 2, []any{toolResult("t1", "a.go", false), text("also check b.go")}),
		asst("a2", "r1", 3, "m2", text("ok")),
	)
	res := readFiles(t, path)
	checkNoProblems(t, res)
	checkSkipped(t, res, map[string]int{})
	s := res.Sessions[0]
	if got := roles(s); !slices.Equal(got, []string{"user:u1", "assistant:a1", "user:r1", "assistant:a2"}) {
		t.Errorf("messages = %v", got)
	}
	if _, p := toolPart(t, s, "srv1"); p.Status != loom.ToolCompleted || !strings.Contains(output(p), `"url":"https://example.com"`) {
		t.Errorf("server tool %+v", p)
	}
	if _, p := toolPart(t, s, "t1"); p.Status != loom.ToolCompleted || output(p) != "a.go" {
		t.Errorf("t1 %+v", p)
	}
	if got := importertest.Message(t, s, "r1").Text(); got != "also check b.go" {
		t.Errorf("typed text %q", got)
	}
}

// A sessionId that is not a UUID is not taken from the lines, and the
// file's name is made one plain segment: neither can name a path. (The
// id is a key only; loom gives the session a UUID of its own.)
func TestHostileSessionIDIsNotAPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "projects", "-work-p")
	path := writeLines(t, filepath.Join(dir, `..\..@x`+"\x1b]0;t\x07.jsonl"),
		with(user("u1", "", 0, "hello"), "sessionId", "../../x"),
		with(asst("a1", "u1", 1, "m1", text("hi")), "sessionId", "../../x"),
	)
	res := readFiles(t, path)
	checkNoProblems(t, res)
	ids := importertest.SourceIDs(res.Sessions)
	if len(ids) != 1 || strings.ContainsAny(ids[0], "/\\\x1b\x07") || strings.Contains(ids[0], "../") {
		t.Fatalf("source ids %q", ids)
	}
}

// A file read while Claude Code writes it, stopped after any line, gives
// each message it holds the role the whole file's reading gives it and
// the first of that reading's parts, in its order: a slash command read
// before its expansion, a compaction's boundary before its summary.
func TestReadingsStoppedAtAnyLine(t *testing.T) {
	cmds := sessionFile(t,
		user("u1", "", 0, "fix the bug"),
		asst("a1", "u1", 1, "m1x", text("fixed")),
		user("c1", "a1", 2, "<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>main.go</command-args>"),
		with(user("c1e", "c1", 2, []any{text("Review the file.")}), "isMeta", true),
		asst("a2", "c1e", 3, "m2", text("looks fine")),
		user("c2", "a2", 4, "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"),
		user("o2", "c2", 4, "<local-command-stdout></local-command-stdout>"),
	)
	compacted := filepath.Join("testdata", "6b1e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14.jsonl")
	for _, path := range []string{cmds, compacted} {
		data := importertest.ReadBytes(t, path)
		whole := map[string]*loom.Message{}
		for _, m := range readFiles(t, path).Sessions[0].Messages {
			whole[m.ID] = m
		}
		lines := strings.SplitAfter(string(data), "\n")
		for n := 1; n < len(lines); n++ {
			cut := filepath.Join(t.TempDir(), filepath.Base(path))
			importertest.WriteFile(t, cut, []byte(strings.Join(lines[:n], "")), 0o644)
			res := readFiles(t, cut)
			if len(res.Sessions) == 0 {
				continue
			}
			for _, m := range res.Sessions[0].Messages {
				w := whole[m.ID]
				if w == nil {
					t.Errorf("%s after %d lines: message %s is not the whole file's", filepath.Base(path), n, m.ID)
					continue
				}
				if m.Role != w.Role {
					t.Errorf("%s after %d lines: message %s is %s, the whole file's %s", filepath.Base(path), n, m.ID, m.Role, w.Role)
				}
				for i, p := range m.Parts {
					if i >= len(w.Parts) || w.Parts[i].ID != p.ID {
						t.Errorf("%s after %d lines: message %s part %d is %s, not the whole file's", filepath.Base(path), n, m.ID, i, p.ID)
						break
					}
				}
			}
		}
	}
}
