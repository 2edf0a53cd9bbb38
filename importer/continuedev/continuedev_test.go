package continuedev

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	guiID = "3f1c9a2e-5b7d-4e0a-9c1f-2a6b8d4e7f10"
	cliID = "c2d4e6f8-1a3b-4c5d-8e9f-0a1b2c3d4e5f"
)

var fixture = filepath.Join("testdata", "sessions")

// The extension's form: no message ids, a file:// workspace, context
// items, a thinking message, the single toolCallState of older versions,
// reasoning on a reply.
func TestReadExtensionSession(t *testing.T) {
	res, s := importertest.ReadAllFor(t, Format{}, fixture, guiID)
	if s.Title != "Explain the retry loop" || s.Cwd != filepath.FromSlash("/home/u/proj") || s.Model != "Claude 3.7 Sonnet" {
		t.Errorf("session %+v", s)
	}
	if s.CreatedAt.UnixMilli() != 1761900000000 {
		t.Errorf("created %v, want sessions.json's dateCreated", s.CreatedAt)
	}
	if got := importertest.Roles(s); got != "user system assistant assistant assistant" {
		t.Errorf("roles %q", got)
	}
	if s.Messages[0].ID != guiID+":0" || s.Messages[1].ID != guiID+":0/context" {
		t.Errorf("ids %s %s", s.Messages[0].ID, s.Messages[1].ID)
	}
	if c := importertest.TallyOf(s); c.Files != 1 || c.Reasoning != 2 || c.Tools[loom.ToolCompleted] != 1 {
		t.Errorf("tally %+v", c)
	}
	tool := s.Messages[3].Parts[0]
	if tool.Name != "read_file" || string(tool.Input) != `{"filepath":"retry.go"}` || string(tool.Output) != `"for { try() }"` {
		t.Errorf("tool %+v", tool)
	}
	if !strings.Contains(s.Messages[1].Text(), "for { try() }") {
		t.Errorf("context %q", s.Messages[1].Text())
	}
	if r := s.Messages[4]; r.Parts[0].Type != loom.PartReasoning || r.CreatedAt.IsZero() || r.CompletedAt == nil {
		t.Errorf("reply %+v", r)
	}
	if res.Skipped["unknown:critic"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// The CLI's form: message ids, a path as workspace, usage, tool
// messages after the call's states, a compaction's summary, a call still
// running.
func TestReadCLISession(t *testing.T) {
	res, s := importertest.ReadAllFor(t, Format{}, fixture, cliID)
	if s.Title != "" || s.Cwd != "/home/u/cli-proj" {
		t.Errorf("session %+v: the default title is none", s)
	}
	if got := importertest.Roles(s); got != "system user assistant assistant summary user assistant" {
		t.Errorf("roles %q", got)
	}
	reply := importertest.Message(t, s, "m-2")
	if u := reply.Usage; u.InputTokens != 500 || u.CacheReadTokens != 1000 || u.OutputTokens != 40 || reply.Model != "gpt-4o" {
		t.Errorf("usage %+v, model %q (cn 1.5's snake_case usage)", u, reply.Model)
	}
	if u := importertest.Message(t, s, "m-5").Usage; u.InputTokens != 1600 || u.OutputTokens != 10 {
		t.Errorf("usage %+v (camelCase)", u)
	}
	if p := reply.Parts[1]; p.Status != loom.ToolCompleted || string(p.Input) != `{"command":"go test ./..."}` {
		t.Errorf("call a %+v", p)
	}
	if p := reply.Parts[2]; p.Status != loom.ToolError || p.Error != "invalid arguments" || string(p.Input) != `{"arguments":"not json"}` {
		t.Errorf("call b %+v", p)
	}
	if p := importertest.Message(t, s, "m-7").Parts[0]; p.Status != loom.ToolRunning {
		t.Errorf("call c %+v", p)
	}
	sum := importertest.Message(t, s, "m-5/summary")
	if sum.Role != loom.RoleSummary || sum.Usage.Compactions != 1 {
		t.Errorf("summary %+v", sum)
	}
	if res.Skipped["tool-result"] != 2 {
		t.Errorf("skipped %v", res.Skipped)
	}
	var lines []string
	for _, p := range res.Problems {
		lines = append(lines, p.String())
	}
	if len(res.Problems) != 2 || !strings.Contains(strings.Join(lines, "\n"), "broken.json") {
		t.Errorf("problems %v: the item that is no object and the file cut short", lines)
	}
}

// A session that grows keeps its messages' ids: a re-import adds only
// what is new, and a third adds nothing.
func TestImportGrows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	importertest.MkdirAll(t, dir)
	data := importertest.ReadBytes(t, filepath.Join(fixture, guiID+".json"))
	file := filepath.Join(dir, guiID+".json")
	// The session as Continue saves it after its third and after its
	// fourth history item.
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	history := doc["history"].([]any)
	save := func(n int) {
		doc["history"] = history[:n]
		b, _ := json.MarshalIndent(doc, "", "  ")
		importertest.WriteFile(t, file, b, 0o644)
	}
	save(3)
	st := importertest.Store(t)
	rep := importertest.Import(t, st, Format{}, dir)
	if rep.SessionsNew != 1 || len(rep.Problems) != 0 {
		t.Fatalf("first import %+v", rep)
	}
	save(4)
	importertest.GrowsBy(t, st, Format{}, 1, dir)
}

func TestRoots(t *testing.T) {
	got := Format{}.Roots(importertest.Getenv("CONTINUE_GLOBAL_DIR", filepath.FromSlash("/x/cont")), "/home/u")
	if !slices.Equal(got, []string{filepath.FromSlash("/x/cont/sessions")}) {
		t.Errorf("roots %v", got)
	}
	if got := (Format{}).Roots(nil, "/home/u"); !slices.Equal(got, []string{filepath.Join("/home/u", ".continue", "sessions")}) {
		t.Errorf("roots %v", got)
	}
	// The global directory as root reads its sessions directory.
	bs, err := Format{}.Bundles(context.Background(), "testdata")
	if err != nil || len(bs) != 3 {
		t.Errorf("bundles %v %v", bs, err)
	}
}
