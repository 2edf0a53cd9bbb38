package gemini

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// copyTree copies the directory src to dst, modification times kept.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		copyFile(t, p, out)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	raw := importertest.ReadBytes(t, src)
	importertest.MkdirAll(t, filepath.Dir(dst))
	importertest.WriteFile(t, dst, raw, 0o644)
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dst, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// geminiHome builds a realistic ~/.gemini in a new home directory: the
// test trees' projects (a hash-named one without a marker, a named one
// with its .project_root, sub-agents, a migrated .json, an orphan
// sub-agent directory, a project of sub-agents), the real sample in a
// project of its own, and what else Gemini CLI keeps there. It returns
// the home directory.
func geminiHome(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	dot := filepath.Join(home, ".gemini")
	copyTree(t, filepath.Join("testdata", "tmp"), filepath.Join(dot, "tmp"))
	copyTree(t, filepath.Join("testdata", "agents"), filepath.Join(dot, "tmp", "retry"))
	copyFile(t, sample, filepath.Join(dot, "tmp", "vibecodingtracker", "chats", "session-2026-04-23T12-52-0ab84937.jsonl"))
	for name, body := range map[string]string{
		"settings.json":                           `{"security":{"auth":{"selectedType":"oauth-personal"}}}`,
		"installation_id":                         "0f6f5a52-52c4-4b53-93f6-7d1b2c1c9a55",
		"tmp/vibecodingtracker/.project_root":     "/home/dev/code/VibeCodingTracker\n",
		"tmp/vibecodingtracker/logs.json":         `[{"sessionId":"0ab84937-9fe7-4284-986a-33c832af0b6a","messageId":0,"type":"user","message":"/init","timestamp":"2026-04-23T12:53:05.283Z"}]`,
		"history/vibecodingtracker/.project_root": "/home/dev/code/VibeCodingTracker\n",
	} {
		p := filepath.Join(dot, filepath.FromSlash(name))
		importertest.MkdirAll(t, filepath.Dir(p))
		importertest.WriteFile(t, p, []byte(body), 0o644)
	}
	return home
}

func storedSession(t testing.TB, st loom.Store, sourceID string) *loom.Session {
	t.Helper()
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Key: "gemini:" + sourceID, Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 {
		t.Fatalf("%d sessions with key gemini:%s", len(ss), sourceID)
	}
	return ss[0]
}

// bundleFiles lists every file of bs, each as often as bs lists it.
func bundleFiles(bs []importer.Bundle) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Files...)
	}
	slices.Sort(out)
	return out
}

// A second import of files that did not change reads none of them. The
// importer records each file under one bundle: a file in several
// bundles (the project's .project_root marker once was in every one of
// its sessions' bundles) made each of them look changed on every run.
func TestImportAgainReadsNothing(t *testing.T) {
	tmp := filepath.Join(geminiHome(t), ".gemini", "tmp")
	a, err := Format{}.Bundles(context.Background(), tmp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Format{}.Bundles(context.Background(), tmp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two listings differ:\n%v\n%v", a, b)
	}
	files := bundleFiles(a)
	if c := slices.Compact(slices.Clone(files)); len(c) != len(files) {
		t.Errorf("a file is in several bundles: %v", files)
	}
	for _, f := range files {
		if base := filepath.Base(f); !strings.HasSuffix(base, ".json") && !strings.HasSuffix(base, ".jsonl") || base == "logs.json" {
			t.Errorf("bundle lists %s, which is no recording", f)
		}
	}

	st := importertest.Store(t)
	first := importertest.Import(t, st, Format{}, tmp)
	if first.FilesFailed != 0 {
		t.Fatalf("first import: files failed: %v", first.Problems)
	}
	if first.FilesRead != len(files) || first.FilesUnchanged != 0 || first.SessionsNew < 10 {
		t.Errorf("first import: %d read, %d unchanged, %d new sessions", first.FilesRead, first.FilesUnchanged, first.SessionsNew)
	}
	second := importertest.Import(t, st, Format{}, tmp)
	if second.FilesFailed != 0 {
		t.Fatalf("second import: files failed: %v", second.Problems)
	}
	if second.FilesRead != 0 || second.FilesUnchanged != len(files) || second.SessionsNew+second.SessionsGrown+second.MessagesAdded != 0 {
		t.Errorf("second import: %d read, %d unchanged (want 0 and %d), %d new, %d grown, %d messages",
			second.FilesRead, second.FilesUnchanged, len(files), second.SessionsNew, second.SessionsGrown, second.MessagesAdded)
	}
	// The marker still gives the working directory.
	if s := storedSession(t, st, "0ab84937-9fe7-4284-986a-33c832af0b6a"); s.Project.Root != "/home/dev/code/VibeCodingTracker" {
		t.Errorf("project from .project_root: %+v", s.Project)
	}
}

// Every form of PATH a user may name finds the same recordings: the home
// directory, ~/.gemini, its tmp directory, a project's directory, its
// chats directory, one file.
func TestRootForms(t *testing.T) {
	home := geminiHome(t)
	dot := filepath.Join(home, ".gemini")
	tmp := filepath.Join(dot, "tmp")
	// A project may be named tmp or chats, after its directory.
	copyTree(t, filepath.Join("testdata", "agents"), filepath.Join(tmp, "tmp"))
	copyTree(t, filepath.Join("testdata", "agents"), filepath.Join(tmp, "chats"))
	all, err := Format{}.Bundles(context.Background(), tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 8 {
		t.Fatalf("%d bundles under tmp: %v", len(all), all)
	}
	project := func(name string) []importer.Bundle {
		var out []importer.Bundle
		for _, b := range all {
			if strings.HasPrefix(b.Name(), filepath.Join(tmp, name, "chats")+string(filepath.Separator)) {
				out = append(out, b)
			}
		}
		return out
	}
	one := filepath.Join(tmp, "example", "chats", "session-2026-09-05T09-00-0a1b2c3d.jsonl")
	for _, tc := range []struct {
		root string
		want []importer.Bundle
	}{
		{home, all},
		{dot, all},
		{tmp, all},
		{filepath.Join(tmp, "example"), project("example")},
		{filepath.Join(tmp, "example", "chats"), project("example")},
		{filepath.Join(tmp, "tmp"), project("tmp")},
		{filepath.Join(tmp, "chats"), project("chats")},
		{filepath.Join(tmp, "chats", "chats"), project("chats")},
		{one, []importer.Bundle{{Files: []string{one}}}},
	} {
		got, err := Format{}.Bundles(context.Background(), tc.root)
		if err != nil {
			t.Fatalf("Bundles(%s): %v", tc.root, err)
		}
		if len(tc.want) == 0 || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Bundles(%s) =\n%v\nwant\n%v", tc.root, got, tc.want)
		}
	}

	st := importertest.Store(t)
	tr := importertest.Import(t, st, Format{}, dot)
	if tr.FilesFailed != 0 {
		t.Fatalf("import of ~/.gemini: files failed: %v", tr.Problems)
	}
	if tr.FilesRead != len(bundleFiles(all)) || tr.SessionsNew == 0 {
		t.Errorf("import of ~/.gemini: %d files read, %d sessions", tr.FilesRead, tr.SessionsNew)
	}
}

// Dotfile managers leave Gemini CLI's directories as symbolic links:
// ~/.gemini/tmp, a project's directory, a recording, a sub-agents'
// directory. They read like real ones; a link back up the tree and a
// dangling one are passed over.
func TestSymlinks(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(dir, "dotfiles")
	copyTree(t, filepath.Join("testdata", "tmp", "example"), filepath.Join(elsewhere, "example"))
	copyTree(t, filepath.Join("testdata", "agents"), filepath.Join(elsewhere, "retry"))
	// The retry project: real directories, its recording and its
	// sub-agents' directory links.
	const sid = "7c1e9f20-4b2a-4d8e-9a61-3f0c2b7d5e14"
	realTmp := filepath.Join(dir, "disk", "gemini-tmp")
	rec := filepath.Join(realTmp, "retry", "chats", "session-2026-05-12T10-15-7c1e9f20.jsonl")
	importertest.Symlink(t, filepath.Join(elsewhere, "retry", "chats", "session-2026-05-12T10-15-7c1e9f20.jsonl"), rec)
	importertest.Symlink(t, filepath.Join(elsewhere, "retry", "chats", sid), filepath.Join(realTmp, "retry", "chats", sid))
	importertest.Symlink(t, filepath.Join(elsewhere, "retry", ".project_root"), filepath.Join(realTmp, "retry", ".project_root"))
	// The example project: its directory a link.
	importertest.Symlink(t, filepath.Join(elsewhere, "example"), filepath.Join(realTmp, "example"))
	// The same project again, and a link up the tree, and a dangling one.
	importertest.Symlink(t, filepath.Join(elsewhere, "example"), filepath.Join(realTmp, "example-again"))
	importertest.Symlink(t, realTmp, filepath.Join(realTmp, "loop"))
	importertest.Symlink(t, filepath.Join(dir, "gone"), filepath.Join(realTmp, "gone"))
	// ~/.gemini/tmp itself a link.
	dot := filepath.Join(dir, "home", ".gemini")
	importertest.Symlink(t, realTmp, filepath.Join(dot, "tmp"))

	tmp := filepath.Join(dot, "tmp")
	want := []importer.Bundle{
		{Files: []string{filepath.Join(tmp, "example", "chats", "session-2026-09-01T08-00-11111111.jsonl")}},
		{Files: []string{
			filepath.Join(tmp, "example", "chats", "session-2026-09-05T09-00-0a1b2c3d.jsonl"),
			filepath.Join(tmp, "example", "chats", "0a1b2c3d-0000-4000-8000-000000000001", "b2c3d4e5-0000-4000-8000-000000000002.jsonl"),
		}},
		{Files: []string{filepath.Join(tmp, "example", "chats", "99999999-0000-4000-8000-000000000009", "c3d4e5f6-0000-4000-8000-000000000010.jsonl")}},
		{Files: []string{
			filepath.Join(tmp, "retry", "chats", "session-2026-05-12T10-15-7c1e9f20.jsonl"),
			filepath.Join(tmp, "retry", "chats", sid, "a3f1c2d4-6b8e-4f0a-9c2d-1e5f7a9b3c60.jsonl"),
			filepath.Join(tmp, "retry", "chats", sid, "b7d2e4f6-1a3c-4e5b-8d7f-2c4e6a8b0d91.jsonl"),
			filepath.Join(tmp, "retry", "chats", sid, "c9e4f6a8-2b4d-4f6e-9a8c-3d5f7b9c1e02.jsonl"),
		}},
	}
	for _, root := range []string{dot, tmp} {
		got, err := Format{}.Bundles(context.Background(), root)
		if err != nil {
			t.Fatalf("Bundles(%s): %v", root, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Bundles(%s) =\n%v\nwant\n%v", root, got, want)
		}
	}

	st := importertest.Store(t)
	tr := importertest.Import(t, st, Format{}, dot)
	if tr.FilesFailed != 0 {
		t.Fatalf("import through links: files failed: %v", tr.Problems)
	}
	if tr.FilesRead != 8 || tr.SessionsNew != 9 {
		t.Errorf("import through links: %d files read, %d sessions new", tr.FilesRead, tr.SessionsNew)
	}
	if s := storedSession(t, st, sid); s.Project.Root != "/home/dev/code/retry" {
		t.Errorf("project through a linked marker: %+v", s.Project)
	}
	tr = importertest.Import(t, st, Format{}, dot)
	if tr.FilesFailed != 0 {
		t.Fatalf("second import through links: files failed: %v", tr.Problems)
	}
	if tr.FilesRead != 0 || tr.FilesUnchanged != 8 {
		t.Errorf("second import through links: %d read, %d unchanged", tr.FilesRead, tr.FilesUnchanged)
	}
}

// A sub-agent's session is titled with its task, never with raw JSON
// (its first prompt, or what the title's first line of it would be, "{"):
// the task from the JSON prompt, else from the call that ran it, else the
// agent's name.
func TestSubagentTitles(t *testing.T) {
	const sid = "7c1e9f20-4b2a-4d8e-9a61-3f0c2b7d5e14"
	chats := filepath.Join("testdata", "agents", "chats")
	bs, err := Format{}.Bundles(context.Background(), filepath.Join("testdata", "agents"))
	if err != nil || len(bs) != 1 || len(bs[0].Files) != 4 {
		t.Fatalf("bundles %v: %v", bs, err)
	}
	res := read(t, bs[0].Files...)
	if len(res.Problems) != 0 || len(res.Skipped) != 0 {
		t.Errorf("problems %v skipped %v", res.Problems, res.Skipped)
	}
	main := importertest.Session(t, res, sid)
	if main.Cwd != "/home/dev/code/retry" || main.Title != "" {
		t.Errorf("main: cwd %q title %q", main.Cwd, main.Title)
	}
	var agents []string
	for _, m := range main.Messages {
		for _, p := range m.Parts {
			if p.Type == loom.PartAgent {
				agents = append(agents, p.Name+" "+p.SessionID)
			}
		}
	}
	wantAgents := []string{
		"codebase_investigator " + sid + "/a3f1c2d4-6b8e-4f0a-9c2d-1e5f7a9b3c60",
		"codebase_investigator " + sid + "/b7d2e4f6-1a3c-4e5b-8d7f-2c4e6a8b0d91",
		"dependency_auditor " + sid + "/c9e4f6a8-2b4d-4f6e-9a8c-3d5f7b9c1e02",
	}
	if !slices.Equal(agents, wantAgents) {
		t.Errorf("agent parts %v\nwant %v", agents, wantAgents)
	}
	for _, tc := range []struct{ agent, title string }{
		// invoke_agent's prompt, sent as a JSON object
		{"a3f1c2d4-6b8e-4f0a-9c2d-1e5f7a9b3c60", "Find where the HTTP retry policy is configured and how it handles 429 responses. Report the files and functions involved, with line numbers."},
		// "Get Started!": the objective of the call
		{"b7d2e4f6-1a3c-4e5b-8d7f-2c4e6a8b0d91", "List the tests that cover the retry policy in internal/httpx."},
		// JSON with no task: the agent's name
		{"c9e4f6a8-2b4d-4f6e-9a8c-3d5f7b9c1e02", "dependency_auditor"},
	} {
		s := importertest.Session(t, res, sid+"/"+tc.agent)
		if s.Kind != loom.KindSubagent || s.ParentSourceID != sid || s.Title != tc.title {
			t.Errorf("%s: kind %q parent %q title %q, want %q", tc.agent, s.Kind, s.ParentSourceID, s.Title, tc.title)
		}
	}

	// A sub-agent read without its parent, whose prompt is JSON: the task
	// still comes out of it, or it is named for what it is.
	res = read(t, filepath.Join(chats, sid, "a3f1c2d4-6b8e-4f0a-9c2d-1e5f7a9b3c60.jsonl"))
	if got := res.Sessions[0].Title; !strings.HasPrefix(got, "Find where the HTTP retry policy") {
		t.Errorf("orphan with a JSON prompt: title %q", got)
	}
	res = read(t, filepath.Join(chats, sid, "c9e4f6a8-2b4d-4f6e-9a8c-3d5f7b9c1e02.jsonl"))
	if got := res.Sessions[0].Title; got == "" || strings.ContainsAny(got, "{}[]\"") {
		t.Errorf("orphan with a JSON prompt and no task: title %q", got)
	}

	// As stored: no title is raw JSON.
	st := importertest.Store(t)
	if tr := importertest.Import(t, st, Format{}, filepath.Join("testdata", "agents")); tr.FilesFailed != 0 {
		t.Fatalf("files failed: %v", tr.Problems)
	}
	for _, a := range []string{"a3f1c2d4-6b8e-4f0a-9c2d-1e5f7a9b3c60", "b7d2e4f6-1a3c-4e5b-8d7f-2c4e6a8b0d91", "c9e4f6a8-2b4d-4f6e-9a8c-3d5f7b9c1e02"} {
		s := storedSession(t, st, sid+"/"+a)
		if s.Title == "" || strings.HasPrefix(s.Title, "{") || strings.HasPrefix(s.Title, "[") {
			t.Errorf("stored sub-agent %s titled %q", a, s.Title)
		}
	}
	if s := storedSession(t, st, sid); s.Title != loom.TitleFrom("where is the retry policy configured, and what does it do on a 429?") {
		t.Errorf("main session titled %q", s.Title)
	}
}

// After a resume Gemini CLI rewrote the conversation ($set of messages)
// from the model's history: the first turn came back with the time of the
// resume and without its thoughts, usage and tool calls, and the session
// context it injected came in first. Each message keeps the time it was
// first recorded with and what it had; the context is a system message,
// never the title.
func TestResumeKeepsTimes(t *testing.T) {
	file := filepath.Join("testdata", "resume.jsonl")
	res := read(t, file)
	if len(res.Sessions) != 1 || len(res.Problems) != 0 || len(res.Skipped) != 0 {
		t.Fatalf("sessions %d problems %v skipped %v", len(res.Sessions), res.Problems, res.Skipped)
	}
	s := res.Sessions[0]
	want := []struct {
		id, role, at string
	}{
		{"e4d1b7c9-0f3a-4b6d-8e2c-5a7f9b1d3e60", loom.RoleSystem, "2026-06-03T09:12:04.551Z"},
		{"1f4c2a8e-5b3d-4e6f-a7b8-c9d0e1f2a3b4", loom.RoleUser, "2026-06-02T08:30:11.204Z"},
		{"2a5d3b9f-6c4e-4f70-b8c9-d0e1f2a3b4c5", loom.RoleAssistant, "2026-06-02T08:30:15.880Z"},
		{"3b6e4c0a-7d5f-4a81-c9d0-e1f2a3b4c5d6", loom.RoleAssistant, "2026-06-02T08:30:40.117Z"},
		{"4c7f5d1b-8e6a-4b92-d0e1-f2a3b4c5d6e7", loom.RoleUser, "2026-06-03T09:12:04.560Z"},
		{"5d806e2c-9f7b-4ca3-e1f2-a3b4c5d6e7f8", loom.RoleAssistant, "2026-06-03T09:12:19.036Z"},
	}
	if len(s.Messages) != len(want) {
		t.Fatalf("ids %v", ids(s))
	}
	for i, w := range want {
		m := s.Messages[i]
		if m.ID != w.id || m.Role != w.role || !m.CreatedAt.Equal(importertest.Time(t, w.at)) {
			t.Errorf("message %d: %s %s %s, want %s %s %s", i, m.ID, m.Role, m.CreatedAt.Format(time.RFC3339Nano), w.id, w.role, w.at)
		}
	}
	if ctx := s.Messages[0]; !strings.Contains(ctx.Text(), "This is the Gemini CLI. We are setting up the context for our chat.") {
		t.Errorf("context %.80q", ctx.Text())
	}
	g1 := importertest.Message(t, s, "2a5d3b9f-6c4e-4f70-b8c9-d0e1f2a3b4c5")
	if want := (loom.Usage{InputTokens: 8714, OutputTokens: 41 + 188, ReasoningTokens: 188, APICalls: 1}); g1.Usage != want || g1.Model != "gemini-3-flash-preview" {
		t.Errorf("first reply: usage %+v model %q", g1.Usage, g1.Model)
	}
	if len(g1.Parts) != 2 || g1.Parts[0].Type != loom.PartReasoning {
		t.Errorf("first reply parts %+v", g1.Parts)
	}
	if p := tool(t, s, "read_file_1780389015880_0"); p.Status != loom.ToolCompleted || !strings.HasPrefix(output(p), "package main") ||
		!p.EndedAt.Equal(importertest.Time(t, "2026-06-02T08:30:15.997Z")) {
		t.Errorf("read_file %+v", p)
	}
	if !s.CreatedAt.Equal(importertest.Time(t, "2026-06-02T08:30:02.318Z")) || !s.UpdatedAt.Equal(importertest.Time(t, "2026-06-03T09:12:19.036Z")) {
		t.Errorf("session times %v %v", s.CreatedAt, s.UpdatedAt)
	}

	st := importertest.Store(t)
	if tr := importertest.Import(t, st, Format{}, file); tr.FilesFailed != 0 {
		t.Fatalf("files failed: %v", tr.Problems)
	}
	stored := storedSession(t, st, "3e8b5d21-9c4f-4a7e-b1d0-6f2a8c4e9b37")
	if stored.Title != "add a --dry-run flag to the sync command" {
		t.Errorf("title %q", stored.Title)
	}
	msgs, err := st.Messages(context.Background(), stored.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 6 || !msgs[1].CreatedAt.Equal(importertest.Time(t, "2026-06-02T08:30:11.204Z")) {
		t.Errorf("stored: %d messages, first prompt at %v", len(msgs), msgs[1].CreatedAt)
	}
}

// Gemini CLI's injected session context, in the forms its versions wrote
// it, is a system message: never a prompt, never the title.
func TestInjectedContext(t *testing.T) {
	dir := t.TempDir()
	for name, context := range map[string]string{
		"old": "This is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Thursday, December 4, 2025 (formatted according to the user's locale).\nMy operating system is: darwin\nI'm currently working in the directory: /Users/dev/code/site\nHere is the folder structure of the current working directories:\n\nShowing up to 200 items (files + folders).\n\n/Users/dev/code/site/\n├───index.html\n└───style.css",
		"new": "\n<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Friday, April 10, 2026 (formatted according to the user's locale).\nMy operating system is: linux\nThe project's temporary directory is: /home/dev/.gemini/tmp/site\n- **Workspace Directories:**\n  - /home/dev/code/site\n- **Directory Structure:**\n\nShowing up to 200 items (files + folders).\n\n/home/dev/code/site/\n└───index.html\n\n\n</session_context>",
	} {
		doc := map[string]any{
			"sessionId": "ctx-" + name, "projectHash": "h", "startTime": "2025-12-04T09:00:00.000Z", "lastUpdated": "2025-12-04T09:01:00.000Z",
			"messages": []any{
				map[string]any{"id": "c", "timestamp": "2025-12-04T09:00:00.000Z", "type": "user", "content": []any{map[string]any{"text": context}}},
				map[string]any{"id": "ack", "timestamp": "2025-12-04T09:00:00.000Z", "type": "gemini", "content": []any{map[string]any{"text": "Got it. Thanks for the context!"}}},
				map[string]any{"id": "p", "timestamp": "2025-12-04T09:00:30.000Z", "type": "user", "content": []any{map[string]any{"text": "make the header sticky"}}},
			},
		}
		file := filepath.Join(dir, "session-2025-12-04T09-00-"+name+".json")
		writeJSON(t, file, doc)
		res := read(t, file)
		s := res.Sessions[0]
		if m := importertest.Message(t, s, "c"); m.Role != loom.RoleSystem {
			t.Errorf("%s: context is a %s message", name, m.Role)
		}
		st := importertest.Store(t)
		if tr := importertest.Import(t, st, Format{}, file); tr.FilesFailed != 0 {
			t.Fatalf("%s: files failed: %v", name, tr.Problems)
		}
		if got := storedSession(t, st, "ctx-"+name).Title; got != "make the header sticky" {
			t.Errorf("%s: title %q", name, got)
		}
	}
}

func writeJSON(t testing.TB, file string, v any) {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	importertest.WriteFile(t, file, raw, 0o644)
}

// Gemini CLI 0.61 after a resume writes each reply again from the
// model's history, its thoughts as text parts marked thought beside the
// thoughts it kept; after a compression it writes the turn in flight
// (the prompt, the call and its response) again under new ids after the
// summary. Each reasoning, prompt and call is imported once, and the
// summary counts a compaction.
func TestResumeAndCompressionWrittenAgain(t *testing.T) {
	res := read(t, filepath.Join("testdata", "compress.jsonl"))
	if len(res.Sessions) != 1 || len(res.Problems) != 0 {
		t.Fatalf("sessions %d problems %v", len(res.Sessions), res.Problems)
	}
	s := res.Sessions[0]
	want := []string{
		"0f9e8d7c-6b5a-4948-8372-6150f4e3d2c1", // the session context, at the resume
		"6f1a2b3c-4d5e-4f60-8a1b-2c3d4e5f6a70",
		"7a2b3c4d-5e6f-4a71-9b2c-3d4e5f6a7b81",
		"8b3c4d5e-6f7a-4b82-8c3d-4e5f6a7b8c92",
		"be6f7a8b-9cad-4eb5-9f6a-7b8c9daebfc5", // the summary
		"cf7a8b9c-adbe-4fc6-8a7b-8c9daebfc0d6", // Gemini CLI's "Got it.", a system message
		"9c4d5e6f-7a8b-4c93-9d4e-5f6a7b8c9da3", // the prompt in flight, under its first id
		"ad5e6f7a-8b9c-4da4-8e5f-6a7b8c9daeb4",
		"03bedfd0-e1f2-4304-8ebf-c0d1e2f3041a",
	}
	if got := ids(s); !slices.Equal(got, want) {
		t.Errorf("ids %v\nwant %v", got, want)
	}
	wantCounts(t, s, counts{
		Roles: map[string]int{loom.RoleUser: 2, loom.RoleAssistant: 4, loom.RoleSystem: 2, loom.RoleSummary: 1},
		Tools: map[string]int{loom.ToolCompleted: 2},
	})
	g1 := importertest.Message(t, s, "7a2b3c4d-5e6f-4a71-9b2c-3d4e5f6a7b81")
	var reasoning []string
	for _, p := range g1.Parts {
		if p.Type == loom.PartReasoning {
			reasoning = append(reasoning, p.Text)
		}
	}
	if len(reasoning) != 1 || !strings.Contains(reasoning[0], "I'll look at what is here first.") {
		t.Errorf("reasoning of the first reply %q, want it once", reasoning)
	}
	if p := tool(t, s, "read_file_1795686083530_0"); p.Status != loom.ToolCompleted || !strings.HasPrefix(output(p), "Ship the importer") {
		t.Errorf("read_file %+v", p)
	}
	if m := importertest.Message(t, s, "9c4d5e6f-7a8b-4c93-9d4e-5f6a7b8c9da3"); !m.CreatedAt.Equal(importertest.Time(t, "2026-11-20T09:41:20.118Z")) {
		t.Errorf("prompt in flight at %v, want its first time", m.CreatedAt)
	}
	if m := importertest.Message(t, s, "be6f7a8b-9cad-4eb5-9f6a-7b8c9daebfc5"); m.Role != loom.RoleSummary || m.Usage.Compactions != 1 {
		t.Errorf("summary %s usage %+v", m.Role, m.Usage)
	}
	if res.Skipped["part:thought:duplicate"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// A sub-agent's summary that is JSON (Gemini CLI 0.61 writes the
// agent's {"response": …} there) is no title: its task titles it.
func TestSubagentJSONSummary(t *testing.T) {
	const sid = "7c1e9f20-4b2a-4d8e-9a61-3f0c2b7d5e14"
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "agents"))); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(dir, "chats", sid, "a3f1c2d4-6b8e-4f0a-9c2d-1e5f7a9b3c60.jsonl")
	f, err := os.OpenFile(agent, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"$set":{"summary":"{\n  \"response\": \"The policy is in internal/httpx/retry.go.\"\n}"}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res := read(t, agent)
	if got := res.Sessions[0].Title; !strings.HasPrefix(got, "Find where the HTTP retry policy") {
		t.Errorf("title %q, want the task", got)
	}
}
