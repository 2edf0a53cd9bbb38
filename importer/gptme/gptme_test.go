package gptme

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	hello = "2026-06-13-write-hello-world"
	flat  = "2025-01-02-old-flat"
)

var logs = filepath.Join("testdata", "logs")

// A conversation in gptme's tool format: the system prompt left out;
// each prompt and reply once, in order, a <thinking> block reasoning; each call a tool part where the
// reply wrote it, completed by the system message that carries its
// call id; the markdown format's output kept as the system message it
// is; usage and model per reply.
func TestReadConversation(t *testing.T) {
	res, s := importertest.ReadAllFor(t, Format{}, logs, hello)
	if s.Cwd != "/home/u/hello" || s.Model != "claude-sonnet-4-6" || s.Provider != "anthropic" {
		t.Errorf("session %+v", s)
	}
	if got := importertest.Roles(s); got != "user assistant assistant user assistant system" {
		t.Fatalf("roles %q", got)
	}
	if want := time.Date(2026, 6, 13, 10, 0, 1, 0, time.Local); !s.CreatedAt.Equal(want) {
		t.Errorf("created %v, want %v (gptme writes local time)", s.CreatedAt, want)
	}
	save := s.Messages[1]
	if len(save.Parts) != 3 || save.Parts[0].Type != loom.PartReasoning || save.Parts[0].Text != "A one-line script will do." || save.Parts[1].Text != "I'll write the file." {
		t.Fatalf("reply %+v", save.Parts)
	}
	if p := save.Parts[2]; p.Name != "save" || p.CallID != "call_01" || p.Status != loom.ToolCompleted ||
		string(p.Input) != `{"path":"hello.py","content":"print('hello world')\n"}` || string(p.Output) != `"Saved file to hello.py"` {
		t.Errorf("save %+v", p)
	}
	if u := save.Usage; u.InputTokens != 120 || u.CacheReadTokens != 80 || u.OutputTokens != 42 || u.CostUSD != 0.0018 || u.APICalls != 1 {
		t.Errorf("usage %+v", u)
	}
	run := s.Messages[2]
	if len(run.Parts) != 3 || run.Parts[1].Name != "shell" || run.Parts[1].Status != loom.ToolCompleted || run.Parts[2].Text != "and that is all: @ignored(x): not json" {
		t.Errorf("run %+v", run.Parts)
	}
	if p := s.Messages[3].Parts[1]; p.Type != loom.PartFile || p.Source.Path != "/home/u/hello/shot.png" {
		t.Errorf("attached %+v", p)
	}
	if s.Messages[5].Text() != "Patch applied" {
		t.Errorf("output %q", s.Messages[5].Text())
	}
	if res.Skipped["system-prompt"] != 2 || res.Skipped["tool-result"] != 2 || res.Skipped["unknown:critic"] != 1 || len(res.Problems) != 1 {
		t.Errorf("skipped %v, problems %v", res.Skipped, res.Problems)
	}
}

// Before gptme nested usage, its tokens were at the metadata's top.
func TestReadFlatUsage(t *testing.T) {
	_, s := importertest.ReadAllFor(t, Format{}, filepath.Join(logs, flat), flat)
	if u := s.Messages[1].Usage; u.InputTokens != 30 || u.OutputTokens != 1 || s.Messages[1].Model != "gpt-4o" || s.Messages[1].Provider != "openai" {
		t.Errorf("reply %+v", s.Messages[1])
	}
}

// Imported once, a second import adds nothing, and --watch follows the
// turn gptme appends.
func TestImportAndFollow(t *testing.T) {
	st := importertest.Store(t)
	if rep := importertest.Import(t, st, Format{}, logs); rep.SessionsNew != 2 || rep.MessagesAdded != 8 || rep.ProblemCount != 1 {
		t.Fatalf("first import %+v", rep)
	}
	if rep := importertest.Import(t, st, Format{}, logs); rep.SessionsNew != 0 || rep.MessagesAdded != 0 {
		t.Fatalf("second import %+v", rep)
	}
	dir := filepath.Join(t.TempDir(), flat)
	os.MkdirAll(dir, 0o755)
	data := importertest.ReadBytes(t, filepath.Join(logs, flat, logFile))
	file := filepath.Join(dir, logFile)
	os.WriteFile(file, data, 0o644)
	importertest.Follows(t, Format{}, filepath.Dir(dir), func() {
		importertest.AppendLines(t, file, `{"role": "user", "content": "and 3+3?", "timestamp": "2025-01-02T09:01:00.000000"}`,
			`{"role": "assistant", "content": "6", "timestamp": "2025-01-02T09:01:01.000000"}`)
	}, 2)
}

func TestRoots(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	home := filepath.FromSlash("/home/u")
	if got := (Format{}).Roots(get, home); got[0] != filepath.Join(home, ".local", "share", "gptme", "logs") {
		t.Errorf("roots %v", got)
	}
	env["XDG_DATA_HOME"] = filepath.FromSlash("/data")
	if got := (Format{}).Roots(get, home); !slices.Equal(got, []string{filepath.FromSlash("/data/gptme/logs")}) {
		t.Errorf("roots %v", got)
	}
	env[envLogs] = filepath.FromSlash("/logs")
	if got := (Format{}).Roots(get, home); !slices.Equal(got, []string{filepath.FromSlash("/logs")}) {
		t.Errorf("roots %v", got)
	}
}
