package opencode

import (
	"context"
	"encoding/json"
	"maps"
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

// The fixture: a data directory with a storage tree and no database.
// Its three sessions were written for these tests from opencode's
// source (there is no public sample of opencode's files): a session
// with a compaction and a task that ran a sub-agent, that sub-agent's
// session, and an archived session never given a title.
const (
	fixture = "testdata/data"
	project = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750"
	mainID  = "ses_5b70280a7fffKy9Pf34qY6Nb3w"
	childID = "ses_5b702199bfffWD25RQ4F5ZR3qa"
	archID  = "ses_5d46f0bfbfff01kWZCWUFxS6gq"
)

// all is everything read from one root.
type all struct {
	bundles  []importer.Bundle
	sessions []*importer.Session
	skipped  map[string]int
	problems []importer.Problem
}

func readRoot(t testing.TB, root string) *all {
	t.Helper()
	ctx := context.Background()
	bs, err := Format{}.Bundles(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	a := &all{bundles: bs, skipped: map[string]int{}}
	for _, b := range bs {
		res, err := Format{}.Read(ctx, b)
		if err != nil {
			t.Fatalf("read %s: %v", b.Name(), err)
		}
		a.sessions = append(a.sessions, res.Sessions...)
		for k, n := range res.Skipped {
			a.skipped[k] += n
		}
		a.problems = append(a.problems, res.Problems...)
	}
	for _, s := range a.sessions {
		for _, m := range s.Messages {
			if err := m.Validate(); err != nil {
				t.Errorf("session %s message %s: %v", s.SourceID, m.ID, err)
			}
		}
	}
	return a
}

func (a *all) session(t testing.TB, id string) *importer.Session {
	t.Helper()
	for _, s := range a.sessions {
		if s.SourceID == id {
			return s
		}
	}
	t.Fatalf("no session %s", id)
	return nil
}

func roles(s *importer.Session) map[string]int {
	out := map[string]int{}
	for _, m := range s.Messages {
		out[m.Role]++
	}
	return out
}

// tools lists a session's tool parts as name:status, in order.
func tools(s *importer.Session) []string {
	var out []string
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type == loom.PartTool {
				out = append(out, p.Name+":"+p.Status)
			}
		}
	}
	return out
}

func partTypes(m *loom.Message) []string {
	var out []string
	for _, p := range m.Parts {
		out = append(out, p.Type)
	}
	return out
}

func part(t testing.TB, m *loom.Message, id string) loom.Part {
	t.Helper()
	for _, p := range m.Parts {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("message %s has no part %s", m.ID, id)
	return loom.Part{}
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func equal[T any](t testing.TB, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

// wantSkipped is what the fixture holds that is left out on purpose:
// main's patch, snapshot, compaction request (its part and the message
// left empty), @explore mention and retry, a part type from the future,
// and the archived session's encrypted reasoning.
var wantSkipped = map[string]int{
	"patch":              1,
	"snapshot":           1,
	"compaction":         1,
	"empty-user-message": 1,
	"agent":              1,
	"retry":              1,
	"unknown:hologram":   1,
	"empty-reasoning":    1,
}

func TestRoots(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	equal(t, "default", Format{}.Roots(env(nil), "/home/ann"), []string{"/home/ann/.local/share/opencode"})
	equal(t, "XDG_DATA_HOME", Format{}.Roots(env(map[string]string{"XDG_DATA_HOME": "/data"}), "/home/ann"), []string{"/data/opencode"})
	equal(t, "no home", Format{}.Roots(env(nil), ""), []string(nil))
	equal(t, "tool", Format{}.Tool(), Tool)
}

func TestBundlesTree(t *testing.T) {
	storage := filepath.Join(fixture, storageDir)
	sessionFile := func(id string) string { return filepath.Join(storage, "session", project, id+".json") }
	want := []struct {
		id    string
		files int
	}{
		// Oldest first, so that main comes before the child it ran.
		{archID, 1 + 2 + 5},
		{mainID, 1 + 8 + 33},
		{childID, 1 + 2 + 7},
	}
	for _, root := range []string{fixture, storage} {
		bs, err := Format{}.Bundles(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != len(want) {
			t.Fatalf("%s: %d bundles, want %d", root, len(bs), len(want))
		}
		for i, w := range want {
			b := bs[i]
			equal(t, root+" bundle name", b.Name(), sessionFile(w.id))
			equal(t, root+" files of "+w.id, len(b.Files), w.files)
			for _, f := range b.Files[1:] {
				if !strings.Contains(f, string(filepath.Separator)+"message"+string(filepath.Separator)) &&
					!strings.Contains(f, string(filepath.Separator)+"part"+string(filepath.Separator)) {
					t.Errorf("bundle %s lists %s", w.id, f)
				}
			}
		}
	}
	// One session file as the root.
	bs, err := Format{}.Bundles(context.Background(), sessionFile(childID))
	if err != nil || len(bs) != 1 || len(bs[0].Files) != 10 {
		t.Errorf("session file root: %v, %v", bs, err)
	}
	// Not opencode's, or not there.
	for _, root := range []string{"testdata", filepath.Join(storage, "project", project+".json"), filepath.Join(t.TempDir(), "none")} {
		bs, err := Format{}.Bundles(context.Background(), root)
		if err != nil || len(bs) != 0 {
			t.Errorf("%s: %v, %v", root, bs, err)
		}
	}
}

func TestReadTree(t *testing.T) {
	a := readRoot(t, fixture)
	equal(t, "sessions", importertest.SourceIDs(a.sessions), []string{archID, mainID, childID})
	equal(t, "skipped", a.skipped, wantSkipped)
	equal(t, "problems", a.problems, []importer.Problem(nil))
	checkMain(t, a.session(t, mainID))
	checkChild(t, a.session(t, childID))
	checkArchived(t, a.session(t, archID))
	for _, s := range a.sessions {
		if !strings.HasSuffix(s.Path, filepath.Join("session", project, s.SourceID+".json")) {
			t.Errorf("%s: path %s", s.SourceID, s.Path)
		}
	}
}

func checkMain(t *testing.T, s *importer.Session) {
	t.Helper()
	equal(t, "main kind", s.Kind, loom.KindMain)
	equal(t, "main parent", s.ParentSourceID, "")
	equal(t, "main title", s.Title, "Fix login redirect loop")
	equal(t, "main cwd", s.Cwd, "/home/dev/webapp")
	equal(t, "main branch", s.GitBranch, "")
	equal(t, "main version", s.Version, "1.1.25")
	equal(t, "main model", s.Model+"/"+s.Provider, "claude-sonnet-4-5/anthropic")
	equal(t, "main created", s.CreatedAt, at("2025-11-03T09:12:44.120Z"))
	equal(t, "main updated", s.UpdatedAt, at("2025-11-03T09:35:23Z"))

	var order []string
	for _, m := range s.Messages {
		order = append(order, m.ID+" "+m.Role)
	}
	equal(t, "main messages", order, []string{
		"msg_a48fd814c0007yEeeby3abP3E2 user",
		"msg_a48fd814c0007yEeeby3abP3E2/synthetic system",
		"msg_a48fd8534000c47WQAmL9xVQ2z assistant",
		"msg_a48fe2750000VTUUJ596lLlGUr assistant",
		// msg_a490d55900001oHUGCiczMSpxk asked for the compaction.
		"msg_a490d58b0000dr0UwfMpf5rg7w summary",
		"msg_a490d7dcc000ZZ810pkf6Xlx8R system",
		"msg_a491208b0000GYQr83wlMvTgbq user",
		"msg_a491208b0000GYQr83wlMvTgbq/synthetic system",
		"msg_a49120c98000FCH2n6WSZ1mvw4 assistant",
	})
	equal(t, "main roles", roles(s), map[string]int{"user": 2, "system": 3, "assistant": 3, "summary": 1})
	equal(t, "main tools", tools(s), []string{"read:completed", "task:completed", "bash:error", "edit:completed", "write:running"})

	// The first prompt: what the user typed and the file attached; what
	// opencode added (the file read for the model) is a system message.
	u1 := importertest.Message(t, s, "msg_a48fd814c0007yEeeby3abP3E2")
	equal(t, "prompt", u1.Text(), "The login page redirects forever after I sign in. Can you fix it? @src/auth/login.ts")
	equal(t, "prompt parts", partTypes(u1), []string{"text", "file"})
	equal(t, "prompt created", u1.CreatedAt, at("2025-11-03T09:12:44.620Z"))
	equal(t, "attached file", u1.Parts[1], loom.Part{ID: "prt_a48fd8150000BinF5aJXVuLkSI", Type: loom.PartFile, Mime: "text/plain",
		Filename: "src/auth/login.ts", URL: "file:///home/dev/webapp/src/auth/login.ts",
		Source: &loom.FileSource{Type: "file", Path: "src/auth/login.ts", Text: "@src/auth/login.ts", Start: 66, End: 84}})
	added := importertest.Message(t, s, "msg_a48fd814c0007yEeeby3abP3E2/synthetic")
	equal(t, "added parts", partTypes(added), []string{"text", "text"})
	if !strings.HasPrefix(added.Parts[0].Text, `Called the Read tool with the following input: {"filePath":"/home/dev/webapp/src/auth/login.ts"}`) {
		t.Errorf("added text %q", added.Parts[0].Text)
	}
	equal(t, "added created", added.CreatedAt, u1.CreatedAt)

	// The first reply: two model calls, the tools they ran, and the
	// sub-agent the task ran.
	a1 := importertest.Message(t, s, "msg_a48fd8534000c47WQAmL9xVQ2z")
	equal(t, "reply parts", partTypes(a1), []string{"step-start", "reasoning", "text", "tool", "tool", "agent", "tool", "step-finish",
		"step-start", "text", "tool", "step-finish"})
	equal(t, "reply model", a1.Model+"/"+a1.Provider, "claude-sonnet-4-5/anthropic")
	equal(t, "reply created", a1.CreatedAt, at("2025-11-03T09:12:45.620Z"))
	equal(t, "reply completed", *a1.CompletedAt, at("2025-11-03T09:13:26.620Z"))
	// The message's own tokens are its last step's; the usage is both
	// steps'. (The costs are added at run time, as the reader adds them.)
	steps := []float64{0.0213, 0.0154}
	equal(t, "reply usage", a1.Usage, loom.Usage{InputTokens: 2150 + 640, OutputTokens: 412 + 96 + 233, ReasoningTokens: 96,
		CacheReadTokens: 11200 + 13000, CacheWriteTokens: 1800, CostUSD: steps[0] + steps[1], APICalls: 2})
	equal(t, "step usage", *a1.Parts[7].Usage, loom.Usage{InputTokens: 2150, OutputTokens: 412 + 96, ReasoningTokens: 96,
		CacheReadTokens: 11200, CacheWriteTokens: 1800, CostUSD: 0.0213, APICalls: 1})
	if !strings.HasPrefix(a1.Parts[1].Text, "The user reports an infinite redirect") {
		t.Errorf("reasoning %q", a1.Parts[1].Text)
	}
	read := part(t, a1, "prt_a48fd91b4000yTMAd7V3DnI8lF")
	equal(t, "read call", read.CallID, "toolu_01HqzW8c3Jg5bLx2RkTnYv4e")
	equal(t, "read input", string(read.Input), `{"filePath":"/home/dev/webapp/src/router.ts"}`)
	equal(t, "read output", loom.JSONText(read.Output), "<file>\n00001| export function redirect(to) {\n00002|   if (session()) return to\n00003|   return \"/login\"\n00004| }\n</file>")
	equal(t, "read title", read.Title, "src/router.ts")
	equal(t, "read metadata", string(read.Metadata), `{"preview":"export function redirect(to) {"}`)
	equal(t, "read started", *read.StartedAt, at("2025-11-03T09:12:48.920Z"))
	equal(t, "read ended", *read.EndedAt, at("2025-11-03T09:12:48.970Z"))
	task := part(t, a1, "prt_a48fd927c000PPwtV5ASPZHu8q")
	equal(t, "task status", task.Status, loom.ToolCompleted)
	equal(t, "agent part", part(t, a1, "prt_a48fd927c000PPwtV5ASPZHu8q/agent"),
		loom.Part{ID: "prt_a48fd927c000PPwtV5ASPZHu8q/agent", Type: loom.PartAgent, Name: "explore", SessionID: childID})
	bash := part(t, a1, "prt_a48fdfac8000RtZHjQMhuOzE95")
	equal(t, "bash status", bash.Status, loom.ToolError)
	equal(t, "bash error", bash.Error, "Error: command exited with code 1\nFAIL src/auth/login.test.ts\n  afterLogin redirects to next")
	equal(t, "bash output", bash.Output, json.RawMessage(nil))
	equal(t, "bash ended", *bash.EndedAt, at("2025-11-03T09:13:23.620Z"))
	edit := part(t, a1, "prt_a48fe21d8000PP6UeP3C4DSA7L")
	equal(t, "edit output", string(edit.Output), `""`)

	sum := importertest.Message(t, s, "msg_a490d58b0000dr0UwfMpf5rg7w")
	if !strings.HasPrefix(sum.Text(), "## Goal\nFix the infinite redirect after login.") {
		t.Errorf("summary %q", sum.Text())
	}
	equal(t, "summary usage", sum.Usage, loom.Usage{InputTokens: 18000, OutputTokens: 310, CostUSD: 0.0402, APICalls: 1, Compactions: 1})
	equal(t, "continue", importertest.Message(t, s, "msg_a490d7dcc000ZZ810pkf6Xlx8R").Text(),
		"Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.")
	equal(t, "mention", importertest.Message(t, s, "msg_a491208b0000GYQr83wlMvTgbq").Text(), "@explore where are the auth tests? Add a regression test for the loop.")

	// The last reply was aborted while writing a file: no result, no
	// step finished.
	a4 := importertest.Message(t, s, "msg_a49120c98000FCH2n6WSZ1mvw4")
	equal(t, "aborted error", a4.Error, &loom.MessageError{Message: "The operation was aborted.", Type: "MessageAbortedError"})
	equal(t, "aborted usage", a4.Usage, loom.Usage{})
	equal(t, "aborted parts", partTypes(a4), []string{"step-start", "text", "tool"})
	write := a4.Parts[2]
	equal(t, "write", write.Status+" "+write.CallID, "running toolu_01Pq8wE3rT6yU1iO9aSdF4gH")
	equal(t, "write ended", write.EndedAt, (*time.Time)(nil))
}

func checkChild(t *testing.T, s *importer.Session) {
	t.Helper()
	equal(t, "child kind", s.Kind, loom.KindSubagent)
	equal(t, "child parent", s.ParentSourceID, mainID)
	equal(t, "child title", s.Title, "Find redirect handler (@explore subagent)")
	equal(t, "child created", s.CreatedAt, at("2025-11-03T09:13:10.500Z"))
	equal(t, "child roles", roles(s), map[string]int{"user": 1, "assistant": 1})
	equal(t, "child tools", tools(s), []string{"grep:completed"})
	equal(t, "child prompt", s.Messages[0].Text(), "Find every place that calls redirect() with a /login target and report file and line.")
	equal(t, "child usage", s.Messages[1].Usage, loom.Usage{InputTokens: 1050, OutputTokens: 82, CacheReadTokens: 8900, CostUSD: 0.0011 + 0.0007, APICalls: 2})
}

func checkArchived(t *testing.T, s *importer.Session) {
	t.Helper()
	equal(t, "archived kind", s.Kind, loom.KindMain)
	equal(t, "archived title", s.Title, "") // "New session - …" is opencode's placeholder
	equal(t, "archived roles", roles(s), map[string]int{"user": 1, "assistant": 1})
	equal(t, "archived tools", tools(s), []string(nil))
	equal(t, "archived reply", partTypes(s.Messages[1]), []string{"step-start", "text", "step-finish"})
	equal(t, "archived reply text", s.Messages[1].Text(), "It runs tsc and then bundles src/ with esbuild into dist/.")
	equal(t, "archived usage", s.Messages[1].Usage, loom.Usage{InputTokens: 3000, OutputTokens: 40 + 12, ReasoningTokens: 12, CostUSD: 0.0009, APICalls: 1})
}

// TestReadDB reads databases built from the fixture tree, with the
// first schema and a later one: the sessions are the tree's.
func TestReadDB(t *testing.T) {
	tree := readRoot(t, fixture)
	for _, schema := range []struct{ name, ddl string }{{"v1.2", schemaV12}, {"later", schemaLater}} {
		t.Run(schema.name, func(t *testing.T) {
			dir := t.TempDir()
			db := buildDB(t, dir, schema.ddl)
			a := readRoot(t, dir)
			equal(t, "bundles", a.bundles, []importer.Bundle{{Files: []string{db}}})
			equal(t, "sessions", importertest.SourceIDs(a.sessions), []string{archID, mainID, childID})
			equal(t, "skipped", a.skipped, wantSkipped)
			equal(t, "problems", a.problems, []importer.Problem(nil))
			for i, s := range a.sessions {
				equal(t, s.SourceID+" path", s.Path, db)
				got, want := *s, *tree.sessions[i]
				got.Path, want.Path = "", ""
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				if string(gj) != string(wj) {
					t.Errorf("%s differs from the tree's:\n db: %s\ntree: %s", s.SourceID, gj, wj)
				}
			}
			// The database file as the root reads the same.
			b := readRoot(t, db)
			equal(t, "db root sessions", importertest.SourceIDs(b.sessions), []string{archID, mainID, childID})
		})
	}
}

// TestDataDirWithBoth: once opencode has moved the tree into its
// database, the data directory's sessions are read from the database
// only.
func TestDataDirWithBoth(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	db := buildDB(t, dir, schemaLater)
	a := readRoot(t, dir)
	equal(t, "bundles", a.bundles, []importer.Bundle{{Files: []string{db}}})
	equal(t, "sessions", importertest.SourceIDs(a.sessions), []string{archID, mainID, childID})
	// The tree named as the root is still read.
	tree := readRoot(t, filepath.Join(dir, storageDir))
	equal(t, "tree bundles", len(tree.bundles), 3)
}

func TestSkipKeysDocumented(t *testing.T) {
	doc := importertest.ReadBytes(t, "doc.go")
	for _, k := range slices.Sorted(maps.Keys(wantSkipped)) {
		k = strings.TrimPrefix(k, "unknown:")
		if k == "hologram" {
			k = "unknown:<type>"
		}
		if !strings.Contains(string(doc), k) {
			t.Errorf("doc.go does not mention %q", k)
		}
	}
}
