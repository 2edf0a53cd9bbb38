package export_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/export"
)

var base = time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)

func at(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }

func tp(t time.Time) *time.Time { return &t }

func text(id string, seq int64, role, s string, when time.Time) *loom.Message {
	return &loom.Message{ID: id, Seq: seq, Role: role, CreatedAt: when, Parts: []loom.Part{{ID: id + "-p", Type: loom.PartText, Text: s}}}
}

// sample is a session with every part type and its sub-agent session, as
// a store would return them (ids, seq, turns and counters filled in).
func sample() []*loom.SessionData {
	main := &loom.Session{ID: "0196a3b2-0000-7000-8000-000000000001", UserID: "local", Key: "cli:api", Surface: "cli", Kind: loom.KindMain,
		Project: loom.Project{ID: "p1", Name: "api", Root: "/src/api"}, Cwd: "/src/api", Model: "gpt-x", Provider: "openai",
		Title: "Fix the flaky test", MessageCount: 4, TurnCount: 2, LastPrompt: "Use a fake clock then.",
		Usage: loom.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0125, APICalls: 1}, CreatedAt: at(0), UpdatedAt: at(6),
		Lock: &loom.Lock{PID: 42, Host: "laptop", Since: at(6)}}
	sub := &loom.Session{ID: "0196a3b2-0000-7000-8000-000000000002", UserID: "local", Kind: loom.KindSubagent, ParentID: main.ID,
		Title: "explore retry", MessageCount: 1, TurnCount: 1, CreatedAt: at(2), UpdatedAt: at(3)}
	tool := &loom.Message{ID: "0196a3b2-0000-7000-8000-0000000000a2", Seq: 2, Role: loom.RoleAssistant, Model: "gpt-x", Provider: "openai", CreatedAt: at(1), CompletedAt: tp(at(1).Add(3 * time.Second)),
		Usage: loom.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0125, APICalls: 1},
		Parts: []loom.Part{
			{ID: "p1", Type: loom.PartStepStart},
			{ID: "p2", Type: loom.PartReasoning, Text: "The retry loop races with the timer."},
			{ID: "p3", Type: loom.PartTool, CallID: "call_1", Name: "read_file", Status: loom.ToolCompleted, Title: "retry_test.go",
				Input: json.RawMessage(`{"path":"retry_test.go"}`), Output: json.RawMessage(`"package retry"`), Metadata: json.RawMessage(`{"lines":42}`),
				StartedAt: tp(at(1).Add(time.Second)), EndedAt: tp(at(1).Add(time.Second + 120*time.Millisecond))},
			{ID: "p4", Type: loom.PartAgent, Name: "explore", SessionID: sub.ID},
			{ID: "p5", Type: loom.PartStepFinish, Usage: &loom.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0125, APICalls: 1}},
		}}
	u2 := text("0196a3b2-0000-7000-8000-0000000000a3", 3, loom.RoleUser, "Use a fake clock then.", at(5))
	u2.Parts = append(u2.Parts, loom.Part{ID: "p6", Type: loom.PartFile, Mime: "text/x-go", Filename: "retry_test.go", URL: "file:///src/api/retry_test.go",
		Source: &loom.FileSource{Type: "file", Path: "retry_test.go", Start: 10, End: 42}})
	failed := &loom.Message{ID: "0196a3b2-0000-7000-8000-0000000000a4", Seq: 4, Role: loom.RoleAssistant, CreatedAt: at(6), Error: &loom.MessageError{Message: "rate limited", Type: "rate_limit"}}
	msgs := []*loom.Message{text("0196a3b2-0000-7000-8000-0000000000a1", 1, loom.RoleUser, "Why does TestRetry flake?", at(0)), tool, u2, failed}
	for i, m := range msgs {
		m.SessionID, m.Turn = main.ID, 1+i/2
	}
	subMsg := text("s1", 1, loom.RoleUser, "List the files.", at(2))
	subMsg.SessionID, subMsg.Turn = sub.ID, 1
	return []*loom.SessionData{{Session: main, Messages: msgs}, {Session: sub, Messages: []*loom.Message{subMsg}}}
}

func write(t *testing.T, f export.Format, data []*loom.SessionData) string {
	t.Helper()
	var b bytes.Buffer
	if err := export.Write(&b, f, data); err != nil {
		t.Fatalf("write %s: %v", f, err)
	}
	return b.String()
}

func read(t *testing.T, content string) []*loom.SessionData {
	t.Helper()
	data, err := export.Read(strings.NewReader(content), export.ReadOptions{Name: "x"})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return data
}

func TestWriteReadRoundTrip(t *testing.T) {
	want := write(t, export.JSONL, sample())
	if strings.Contains(want, `"lock":{`) {
		t.Fatal("a lock was exported")
	}
	if strings.Index(want, `"id":"0196a3b2-0000-7000-8000-000000000002"`) < strings.Index(want, `"id":"0196a3b2-0000-7000-8000-000000000001"`) {
		t.Fatal("sub-agent session written before its parent")
	}
	for _, f := range []export.Format{export.JSONL, export.JSON} {
		got := write(t, export.JSONL, read(t, write(t, f, sample())))
		if got != want {
			t.Fatalf("%s: write → read → write differs:\n%s\n---\n%s", f, want, got)
		}
	}
	doc := write(t, export.JSON, sample())
	if !strings.HasPrefix(doc, "{\n  \"version\": 1,\n  \"sessions\": [") {
		t.Fatalf("json export starts %q", doc[:min(60, len(doc))])
	}
}

func TestReadDetectsFormat(t *testing.T) {
	for _, f := range []export.Format{export.JSONL, export.JSON} {
		out := write(t, f, sample()[:1])
		compact := out
		if f == export.JSON {
			var b bytes.Buffer
			json.Compact(&b, []byte(out))
			compact = b.String()
		}
		for _, content := range []string{out, compact, "\xef\xbb\xbf  \n" + out} {
			data := read(t, content)
			if len(data) != 1 || data[0].Session.ID != sample()[0].Session.ID || len(data[0].Messages) != 4 {
				t.Fatalf("%s: read %d sessions", f, len(data))
			}
		}
	}
}

func TestReadGivesSessionsToTheUser(t *testing.T) {
	content := strings.ReplaceAll(write(t, export.JSONL, sample()), `"user_id":"local",`, "")
	if _, err := export.Read(strings.NewReader(content), export.ReadOptions{Name: "x"}); err == nil || !strings.Contains(err.Error(), "x:1: ") {
		t.Fatalf("sessions without a user: %v", err)
	}
	data, err := export.Read(strings.NewReader(content), export.ReadOptions{Name: "x", UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range data {
		if d.Session.UserID != "alice" {
			t.Fatalf("session %s read as %q's", d.Session.ID, d.Session.UserID)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for name, want := range map[string]export.Format{"jsonl": export.JSONL, "json": export.JSON, "markdown": export.Markdown, "md": export.Markdown, "html": export.HTML} {
		if f, ok := export.ParseFormat(name); !ok || f != want {
			t.Fatalf("ParseFormat(%q) = %q, %v", name, f, ok)
		}
	}
	if _, ok := export.ParseFormat("pdf"); ok {
		t.Fatal("pdf is not a format")
	}
	if err := export.Write(&bytes.Buffer{}, "yaml", nil); loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("Write yaml: %v", err)
	}
}

func TestOrder(t *testing.T) {
	mk := func(id, kind, parent string, min int) *loom.Session {
		return &loom.Session{ID: id, Kind: kind, ParentID: parent, CreatedAt: at(min)}
	}
	all := []*loom.Session{
		mk("sub-of-b", loom.KindSubagent, "b", 1),
		mk("b", loom.KindMain, "", 2),
		mk("a", loom.KindMain, "", 3),
		mk("fork-of-a", loom.KindFork, "a", 4),
		mk("sub-of-a", loom.KindSubagent, "a", 5),
		mk("orphan", loom.KindSubagent, "gone", 6),
		mk("loop1", loom.KindSubagent, "loop2", 7),
		mk("loop2", loom.KindSubagent, "loop1", 8),
	}
	var got []string
	for _, s := range export.Order(all) {
		got = append(got, s.ID)
	}
	want := "b sub-of-b a sub-of-a fork-of-a orphan loop1 loop2"
	if strings.Join(got, " ") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
}
