package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// The command line and the server run turns through one conversation
// service: the same two turns on the same key, sent as two `loom run`
// processes and as two POST /api/v1/messages, leave the same session and
// the same replay log (session:start, the turn's steps, session:end, then
// session:resume for the second turn).
func TestSameConversationFromCLIAndServer(t *testing.T) {
	t.Parallel()
	script := func(fake *openaitest.Server) {
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "session_search", Args: `{"query":"retry backoff"}`}}},
			openaitest.Reply{Text: "Nothing about that yet."},
			openaitest.Reply{Text: "Use exponential backoff."},
		)
	}
	prompts := []string{"what did we decide about retries?", "then decide now"}

	// Through the command line.
	cliFx := clitest.NewAgentFixture(t)
	script(cliFx.Srv)
	var cliID string
	for _, p := range prompts {
		r := cliFx.MustLoom(t, "", "run", "--key", "test:same", p)
		cliID = strings.TrimSpace(strings.TrimPrefix(human.FirstLine(r.Stderr), "session "))
	}

	// Through the server.
	srvFx := clitest.NewEmptyFixture(t)
	fake := openaitest.NewServer()
	defer fake.Close()
	script(fake)
	sv := clitest.StartServe(t, srvFx, map[string]string{"OPENAI_BASE_URL": fake.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini"}, "")
	var srvID string
	for _, p := range prompts {
		srvID = clitest.PostTurn(t, sv, sv.Token, "test:same", p)
	}
	sv.Stop()

	cliSession, cliMsgs := storedConversation(t, cliFx.Fixture, cliID)
	srvSession, srvMsgs := storedConversation(t, srvFx, srvID)
	if !reflect.DeepEqual(cliSession, srvSession) {
		t.Errorf("sessions differ:\ncli:    %v\nserver: %v", cliSession, srvSession)
	}
	if !reflect.DeepEqual(cliMsgs, srvMsgs) {
		t.Errorf("messages differ:\ncli:    %q\nserver: %q", cliMsgs, srvMsgs)
	}
	cliLog, srvLog := replayKinds(t, cliFx.Fixture, cliID), replayKinds(t, srvFx, srvID)
	if !reflect.DeepEqual(cliLog, srvLog) {
		t.Errorf("replay logs differ:\ncli:    %q\nserver: %q", cliLog, srvLog)
	}
	for _, want := range []string{"session:start", "session:resume", "session:end"} {
		if !strings.Contains(strings.Join(srvLog, " "), want) {
			t.Errorf("the server's replay log has no %s: %q", want, srvLog)
		}
	}
}

// storedConversation is what a session holds, without ids and times.
func storedConversation(t *testing.T, fx *clitest.Fixture, id string) (string, []string) {
	t.Helper()
	st := fx.OpenStore(t)
	ctx := context.Background()
	s, err := st.Session(ctx, id)
	if err != nil {
		t.Fatalf("session %q: %v", id, err)
	}
	msgs, err := st.Messages(ctx, id, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	session := fmt.Sprintf("key=%s surface=%s kind=%s model=%s provider=%s messages=%d turns=%d title=%q last=%q",
		s.Key, s.Surface, s.Kind, s.Model, s.Provider, s.MessageCount, s.TurnCount, s.Title, s.LastPrompt)
	var out []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			out = append(out, fmt.Sprintf("%d %s %s %q %s %s %s", m.Turn, m.Role, p.Type, p.Text, p.Name, p.Status, p.Input))
		}
	}
	return session, out
}

// replayKinds is a session's replay log without times, ids and outputs.
func replayKinds(t *testing.T, fx *clitest.Fixture, id string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fx.Home, "state", "logs", "local", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Kind, Type, Text, Tool, Status string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("replay log line %q: %v", line, err)
		}
		out = append(out, strings.TrimSpace(strings.Join([]string{e.Kind, e.Type, e.Tool, e.Status, e.Text}, " ")))
	}
	return out
}
