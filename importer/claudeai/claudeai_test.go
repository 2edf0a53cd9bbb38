package claudeai

import (
	"bytes"
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

const sample = "testdata/conversations.json"

func read(t testing.TB, data []byte) (*importer.Result, error) {
	return importer.ReadExportFrom(context.Background(), Tool, "conversations.json", bytes.NewReader(data), func(i int, elem []byte, res *importer.Result) error {
		return readConversation("conversations.json", i, elem, res)
	})
}

func TestReadExport(t *testing.T) {
	res := importertest.ReadFile(t, Format, sample)
	if len(res.Sessions) != 4 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Reason, "conversation 5") {
		t.Fatalf("%d sessions, problems %v", len(res.Sessions), res.Problems)
	}
	if res.Skipped["empty-conversation"] != 1 || res.Skipped["content:token_budget"] != 1 || res.Skipped["branch"] != 0 {
		t.Errorf("skipped %v", res.Skipped)
	}
	s := importertest.Session(t, res, "1b7e0a3c-0000-4000-8000-0000000000c1")
	if s.Title != "Plan a trip" || s.Model != "claude-sonnet-4-20250514" || len(s.Messages) != 4 {
		t.Fatalf("session %q %q, %d messages", s.Title, s.Model, len(s.Messages))
	}
	u := s.Messages[0]
	if u.Role != loom.RoleUser || u.Text() != "Where should I go in May?" || len(u.Parts) != 3 || u.Parts[1].Source == nil || u.Parts[1].Source.Text != "Lisbon in May" || u.Parts[2].Filename != "map.png" {
		t.Errorf("prompt %+v", u)
	}
	a := s.Messages[1]
	c := importertest.TallyOf(s)
	if a.Role != loom.RoleAssistant || a.Text() != "Lisbon: sunny and 22°C in May." || c.Reasoning != 1 || c.Tools[loom.ToolCompleted] != 1 || a.Provider != Provider || a.Model != s.Model {
		t.Errorf("reply %+v", a)
	}
	call := a.Parts[1]
	if call.CallID != "toolu_01" || call.Name != "web_search" || string(call.Input) != `{"query":"Lisbon weather May"}` || string(call.Output) != `"Sunny, 22°C"` || !call.EndedAt.Equal(time.Date(2025, 6, 1, 9, 0, 5, 0, time.UTC)) {
		t.Errorf("tool part %+v", call)
	}
	if !a.CreatedAt.Equal(time.Date(2025, 6, 1, 9, 0, 2, 0, time.UTC)) || !a.CompletedAt.Equal(time.Date(2025, 6, 1, 9, 0, 6, 0, time.UTC)) {
		t.Errorf("reply times %v %v", a.CreatedAt, *a.CompletedAt)
	}

	old := importertest.Session(t, res, "2c8f1b4d-0000-4000-8000-0000000000c2")
	if len(old.Messages) != 2 || old.Messages[1].Text() != "A monoid in the category of endofunctors." || importer.Title(old) != "What is a monad?" {
		t.Errorf("text-only export: %+v", old.Messages)
	}
	retried := importertest.Session(t, res, "4e9a2c5e-0000-4000-8000-0000000000c4")
	if len(retried.Messages) != 2 || retried.Messages[1].Text() != "Green." {
		t.Errorf("retried reply: %+v", retried.Messages)
	}
	first := importertest.Session(t, res, retried.SourceID+"@b2")
	if first.Kind != loom.KindFork || first.ParentSourceID != retried.SourceID || first.ForkTurn != 0 || len(first.Messages) != 2 || first.Messages[1].Text() != "Blue." {
		t.Errorf("the first try's branch: %+v", first)
	}
}

func TestNotClaudeAI(t *testing.T) {
	if _, err := read(t, []byte(`[{"id":"x","title":"t","mapping":{"a":{}}}]`)); err == nil || !strings.Contains(err.Error(), "--from chatgpt") {
		t.Errorf("a ChatGPT export: %v", err)
	}
	if _, err := read(t, []byte(`{"uuid":"x"}`)); err == nil {
		t.Error("an object was read as an export")
	}
	b, _ := os.ReadFile(sample)
	res, err := read(t, b[:len(b)*7/10])
	if err != nil || len(res.Sessions) != 1 || len(res.Problems) != 1 {
		t.Errorf("cut export: %v, %d sessions, %v", err, len(res.Sessions), res.Problems)
	}
}

func TestImportTwice(t *testing.T) {
	st := importertest.Store(t)
	dir := t.TempDir()
	b, _ := os.ReadFile(sample)
	os.WriteFile(filepath.Join(dir, "conversations.json"), b, 0o644)
	if tr := importertest.Import(t, st, Format, dir); tr.SessionsNew != 4 || tr.MessagesAdded != 10 {
		t.Fatalf("first import: %+v", tr)
	}
	os.WriteFile(filepath.Join(dir, "conversations.json"), append(b, '\n'), 0o644)
	if tr := importertest.Import(t, st, Format, dir); tr.SessionsNew != 0 || tr.MessagesAdded != 0 || tr.SessionsUnchanged != 4 {
		t.Fatalf("the same export again: %+v", tr)
	}
}

// FuzzRead reads arbitrary bytes as conversations.json: it must not
// panic, must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	data := importertest.ReadBytes(f, sample)
	f.Add(data)
	for _, s := range []string{
		"", "[]", `[{"uuid":"a","chat_messages":[{"sender":"assistant","content":[{"type":"tool_result","content":5}]}]}]`,
		`[{"uuid":"a","current_leaf_message_uuid":"x","chat_messages":[{"uuid":"x","parent_message_uuid":"x","sender":"human","text":"a"},{"uuid":"y","parent_message_uuid":"x","sender":"human","text":"b"},{"uuid":"z","parent_message_uuid":"x","sender":"human","text":"c"}]}]`,
		`[{"uuid":"a","chat_messages":[{"uuid":"m","sender":"assistant","content":[{"type":"tool_use","id":"t","input":[1]},{"type":"tool_use","id":"t"},{"type":"tool_result","tool_use_id":"t","is_error":true,"stop_timestamp":"1999-01-01T00:00:00Z"}]}]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		res, err := read(t, data)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("read took %v", d)
		}
		if err == nil {
			importertest.CheckValidOf(t, Tool, res)
		}
	})
}

// --watch on the folder exports are downloaded to follows a newer export
// that replaces the old one (written beside it and renamed over it, as a
// download ends), from the file system's notification: the grown
// conversation gains only its new prompt.
func TestWatchFollowsNewerExport(t *testing.T) {
	b, _ := os.ReadFile(sample)
	var convs []map[string]any
	if err := json.Unmarshal(b, &convs); err != nil {
		t.Fatal(err)
	}
	// The sample's malformed conversation is left out: the watch's first
	// run must find no problem.
	convs = slices.DeleteFunc(convs, func(c map[string]any) bool {
		_, ok := c["chat_messages"].([]any)
		return !ok
	})
	b, _ = json.Marshal(convs)
	dir := t.TempDir()
	path := filepath.Join(dir, "conversations.json")
	importertest.WriteFile(t, path, b, 0o644)
	msgs := convs[0]["chat_messages"].([]any)
	convs[0]["chat_messages"] = append(msgs, map[string]any{
		"uuid": "m5", "parent_message_uuid": "m4", "sender": "human", "text": "And in June?",
		"content":    []any{map[string]any{"type": "text", "text": "And in June?"}},
		"created_at": "2025-06-02T09:00:00.000000Z", "updated_at": "2025-06-02T09:00:00.000000Z",
	})
	convs[0]["current_leaf_message_uuid"] = "m5"
	newer, err := json.Marshal(convs)
	if err != nil {
		t.Fatal(err)
	}
	importertest.Follows(t, Format, dir, func() {
		tmp := filepath.Join(dir, ".conversations.json.part")
		importertest.WriteFile(t, tmp, newer, 0o644)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}, 1)
}
