package openhands

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

const convDir = "3f2a9c4e1b7d4e0a8c5f6a7b8c9d0e1f"

var conversations = filepath.Join("testdata", "conversations")

// A conversation of the SDK's events: the prompt, each action a reply
// with its reasoning, thought and tool call, completed or failed by the
// observation, error or rejection that answers it; the condensation's
// summary; each model call's usage once, on the reply it made.
func TestReadConversation(t *testing.T) {
	res, s := importertest.ReadAllFor(t, Format{}, conversations, "3f2a9c4e-1b7d-4e0a-8c5f-6a7b8c9d0e1f")
	if s.Cwd != "/home/u/dates" || s.Model != "claude-sonnet-4-5-20250929" || s.Provider != "anthropic" {
		t.Errorf("session %+v", s)
	}
	if got := importertest.Roles(s); got != "user assistant assistant assistant summary assistant" {
		t.Fatalf("roles %q", got)
	}
	run := s.Messages[1]
	if len(run.Parts) != 3 || run.Parts[0].Type != loom.PartReasoning || run.Parts[1].Text != "Let me check the date command first." {
		t.Fatalf("action %+v", run.Parts)
	}
	if p := run.Parts[2]; p.Name != "terminal" || p.CallID != "toolu_1" || p.Status != loom.ToolCompleted ||
		string(p.Input) != `{"command":"date","security_risk":"LOW"}` || !strings.Contains(string(p.Output), "Nov 20") {
		t.Errorf("terminal %+v", p)
	}
	if p := s.Messages[2].Parts[1]; p.Status != loom.ToolError || !strings.Contains(p.Error, "already exists") {
		t.Errorf("file_editor %+v", p)
	}
	if p := s.Messages[3].Parts[1]; p.Status != loom.ToolError || p.Error != "rejected: do not delete files" || string(p.Input) != `{"kind":"ExecuteBashAction","command":"rm date.sh"}` {
		t.Errorf("rejected %+v %s", p, p.Input)
	}
	if m := s.Messages[4]; m.Usage.Compactions != 1 {
		t.Errorf("summary %+v", m)
	}
	if u := run.Usage; u.InputTokens != 200 || u.CacheWriteTokens != 1800 || u.OutputTokens != 100 || u.APICalls != 1 {
		t.Errorf("usage %+v", u)
	}
	var total loom.Usage
	for _, m := range s.Messages {
		total.Add(m.Usage)
	}
	if total.OutputTokens != 310 || total.APICalls != 4 {
		t.Errorf("total %+v", total)
	}
	if len(res.Problems) != 1 || res.Skipped["SystemPromptEvent"] != 1 || res.Skipped["unknown:HologramEvent"] != 1 || res.Skipped["tool-result"] != 3 {
		t.Errorf("problems %v, skipped %v", res.Problems, res.Skipped)
	}
}

// Imported once, a second import adds nothing, and --watch follows the
// event OpenHands adds as a file of its own.
func TestImportAndFollow(t *testing.T) {
	st := importertest.Store(t)
	if rep := importertest.Import(t, st, Format{}, conversations); rep.SessionsNew != 1 || rep.MessagesAdded != 6 {
		t.Fatalf("first import %+v", rep)
	}
	if rep := importertest.Import(t, st, Format{}, conversations); rep.SessionsNew != 0 || rep.MessagesAdded != 0 {
		t.Fatalf("second import %+v", rep)
	}
	src := filepath.Join(conversations, convDir)
	dir := filepath.Join(t.TempDir(), convDir)
	os.MkdirAll(filepath.Join(dir, eventsDir), 0o755)
	copyFile := func(rel string) {
		data := importertest.ReadBytes(t, filepath.Join(src, rel))
		os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	}
	copyFile(stateFile)
	events, _ := os.ReadDir(filepath.Join(src, eventsDir))
	for _, e := range events[:4] {
		copyFile(filepath.Join(eventsDir, e.Name()))
	}
	importertest.Follows(t, Format{}, filepath.Dir(dir), func() {
		os.WriteFile(filepath.Join(dir, eventsDir, "event-00004-x.json"), []byte(`{"kind":"MessageEvent","id":"m5","timestamp":"2025-11-20T10:01:00","source":"user","llm_message":{"role":"user","content":[{"type":"text","text":"thanks"}]}}`), 0o644)
	}, 1)
}

func TestRootsAndBundles(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	home := filepath.FromSlash("/home/u")
	if got := (Format{}).Roots(get, home); !slices.Equal(got, []string{filepath.Join(home, ".openhands", "conversations")}) {
		t.Errorf("roots %v", got)
	}
	env[envPersistence] = filepath.FromSlash("/p")
	if got := (Format{}).Roots(get, home); !slices.Equal(got, []string{filepath.FromSlash("/p/conversations")}) {
		t.Errorf("roots %v", got)
	}
	env[envConversations] = filepath.FromSlash("/c")
	if got := (Format{}).Roots(get, home); !slices.Equal(got, []string{filepath.FromSlash("/c")}) {
		t.Errorf("roots %v", got)
	}
	// One event file reads its whole conversation, the state first.
	events, _ := os.ReadDir(filepath.Join(conversations, convDir, eventsDir))
	bs, err := Format{}.Bundles(context.Background(), filepath.Join(conversations, convDir, eventsDir, events[3].Name()))
	if err != nil || len(bs) != 1 || filepath.Base(bs[0].Name()) != stateFile || len(bs[0].Files) != 14 {
		t.Errorf("bundles %v %v", bs, err)
	}
}
