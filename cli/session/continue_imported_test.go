package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/anthropic"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/openai/openaitest"
)

// What the other tool injected into the imported session: never sent to
// loom's model.
var injected = []string{"CODEX BASE INSTRUCTIONS", "environment_context", "CODEX REMINDER", "/compact"}

// importCodexSession stores a session as the Codex importer does: its
// base instructions, environment block, a reminder and a slash-command
// line as system messages around two prompts, a tool call with its
// result and the replies; extra messages follow them.
func importCodexSession(t *testing.T, fx *clitest.Fixture, extra ...*loom.Message) *loom.Session {
	t.Helper()
	at := clitest.Base.Add(-24 * time.Hour)
	text := func(s string) loom.Part { return loom.Part{Type: loom.PartText, Text: s} }
	start, end := at.Add(4*time.Second), at.Add(5*time.Second)
	msgs := []*loom.Message{
		{Role: loom.RoleSystem, Parts: []loom.Part{text("You are Codex, based on GPT-5. CODEX BASE INSTRUCTIONS: " + strings.Repeat("be careful. ", 40))}},
		{Role: loom.RoleSystem, Parts: []loom.Part{text("<environment_context>\n  <cwd>" + fx.Project + "</cwd>\n</environment_context>")}},
		{Role: loom.RoleUser, Parts: []loom.Part{text("Why does the build fail?")}},
		{Role: loom.RoleAssistant, Model: "gpt-5-codex", Provider: "openai", Parts: []loom.Part{text("Let me run it."),
			{Type: loom.PartTool, CallID: "call_build", Name: "shell", Status: loom.ToolCompleted, Input: json.RawMessage(`{"command":["go","build","./..."]}`),
				Output: json.RawMessage(`"main.go:3: undefined: x"`), StartedAt: &start, EndedAt: &end}}},
		{Role: loom.RoleSystem, Parts: []loom.Part{text("<system-reminder>CODEX REMINDER</system-reminder>")}},
		{Role: loom.RoleSystem, Parts: []loom.Part{text("/compact")}},
		{Role: loom.RoleUser, Parts: []loom.Part{text("Fix it then.")}},
		{Role: loom.RoleAssistant, Model: "gpt-5-codex", Provider: "openai", Parts: []loom.Part{text("Fixed: x is declared now.")}},
	}
	msgs = append(msgs, extra...)
	for i, m := range msgs {
		m.ID, m.Seq = fmt.Sprintf("codex-item-%d", i+1), int64(i+1)
		m.CreatedAt = at.Add(time.Duration(i) * time.Second)
		for j := range m.Parts {
			m.Parts[j].ID = fmt.Sprintf("codex-part-%d-%d", i+1, j)
		}
	}
	s := &loom.Session{ID: clitest.IDAt(at), UserID: "local", Key: "codex:0199a213-81c0", Title: "Fix the build", Project: fx.Proj, Cwd: fx.Project,
		Model: "gpt-5-codex", Provider: "openai", Source: &loom.Source{Tool: "codex", Version: "0.39.0", Path: "/home/me/.codex/sessions/rollout.jsonl"},
		CreatedAt: at, UpdatedAt: at}
	st := fx.OpenStore(t)
	defer st.Close()
	if err := st.Import(context.Background(), []*loom.SessionData{{Session: s, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// bothProviders are the providers main builds in, for in-process runs.
func bothProviders(f *cli.Factory) {
	f.Providers = map[string]agent.ProviderFunc{
		"openai": func(e config.Endpoint) loom.Provider {
			return openai.New(openai.Config{APIKey: e.APIKey, BaseURL: e.BaseURL, MaxRetries: -1})
		},
		"anthropic": func(e config.Endpoint) loom.Provider {
			return anthropic.New(anthropic.Config{APIKey: e.APIKey, BaseURL: e.BaseURL, MaxRetries: -1})
		},
	}
}

// fakeProvider is a fake service of one provider and the environment
// that points loom at it.
type fakeProvider struct {
	name     string
	env      map[string]string
	requests func() []map[string]any
}

func fakeOpenAI(t *testing.T) fakeProvider {
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return fakeProvider{"openai", map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "k", "LOOM_MODEL": "gpt-4o-mini"},
		func() []map[string]any {
			var out []map[string]any
			for _, r := range srv.Requests() {
				out = append(out, r.Body)
			}
			return out
		}}
}

func fakeAnthropic(t *testing.T) fakeProvider {
	srv := anthropictest.NewServer()
	t.Cleanup(srv.Close)
	return fakeProvider{"anthropic", map[string]string{"LOOM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": srv.BaseURL(), "ANTHROPIC_API_KEY": "k", "LOOM_MODEL": "claude-sonnet-4-5"},
		func() []map[string]any {
			var out []map[string]any
			for _, r := range srv.Requests() {
				out = append(out, r.Body)
			}
			return out
		}}
}

// sentText is every text a request carries to the model, by role (the
// system prompt under "system"), in order; tool calls as "call:<id>" and
// their results as "result:<id>" under the role that carries them.
func sentText(body map[string]any) (texts map[string][]string, order []string) {
	texts = map[string][]string{}
	add := func(role, s string) {
		texts[role] = append(texts[role], s)
		order = append(order, role)
	}
	switch sys := body["system"].(type) {
	case string:
		add("system", sys)
	case []any:
		for _, b := range sys {
			add("system", b.(map[string]any)["text"].(string))
		}
	}
	for _, raw := range body["messages"].([]any) {
		m := raw.(map[string]any)
		role := m["role"].(string)
		switch c := m["content"].(type) {
		case string:
			add(role, c)
		case []any:
			for _, b := range c {
				blk := b.(map[string]any)
				switch blk["type"] {
				case "text":
					add(role, blk["text"].(string))
				case "tool_use":
					add(role, "call:"+blk["id"].(string))
				case "tool_result":
					add(role, "result:"+blk["tool_use_id"].(string))
				}
			}
		}
		if calls, ok := m["tool_calls"].([]any); ok {
			for _, tc := range calls {
				add(role, "call:"+tc.(map[string]any)["id"].(string))
			}
		}
		if id, ok := m["tool_call_id"].(string); ok {
			add(role, "result:"+id)
		}
	}
	return texts, order
}

// The system messages of an imported session (the other tool's
// instructions, environment, reminders and command lines) are history,
// never model input: resumed with loom run on the OpenAI and the
// Anthropic service, the request holds loom's system prompt only, first,
// and every prompt, tool call and result of the import; `session <id>`
// names the fork the turn is stored in.
func TestResumedImportSendsNoOtherToolsSystemText(t *testing.T) {
	t.Parallel()
	for _, mk := range []func(*testing.T) fakeProvider{fakeOpenAI, fakeAnthropic} {
		p := mk(t)
		t.Run(p.name, func(t *testing.T) {
			fx := clitest.NewEmptyFixture(t)
			src := importCodexSession(t, fx)
			r := fx.RunWith(t, clitest.RunOpts{Env: p.env, Before: bothProviders}, "run", "--resume", src.ID, "What next?")
			if r.Code != 0 {
				t.Fatalf("run --resume: exit %d\n%s", r.Code, r.Stderr)
			}
			reqs := p.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			raw, _ := json.Marshal(reqs[0])
			for _, s := range injected {
				if strings.Contains(string(raw), s) {
					t.Errorf("the request carries the other tool's %q:\n%s", s, raw)
				}
			}
			texts, order := sentText(reqs[0])
			if len(texts["system"]) != 1 || !strings.HasPrefix(texts["system"][0], "You are loom") || order[0] != "system" {
				t.Errorf("system text sent: %q (roles in order %q)", texts["system"], order)
			}
			for i, role := range order {
				if role == "system" && i > 0 {
					t.Errorf("a system message in the middle of the history: roles %q", order)
				}
			}
			all := strings.Join(append(texts["user"], texts["assistant"]...), "\n") + "\n" + strings.Join(texts["tool"], "\n")
			for _, want := range []string{"Why does the build fail?", "Fix it then.", "What next?", "call:call_build", "result:call_build",
				"Let me run it.", "Fixed: x is declared now."} {
				if !strings.Contains(all, want) {
					t.Errorf("the request lacks %q: %q", want, texts)
				}
			}

			id := clitest.SessionOf(t, r.Stderr)
			st := fx.OpenStore(t)
			fk, err := st.Session(context.Background(), id)
			if err != nil {
				t.Fatalf("session %q printed: %v\n%s", id, err, r.Stderr)
			}
			msgs, _ := st.Messages(context.Background(), id, loom.MessageQuery{Limit: 2})
			if fk.ParentID != src.ID || fk.Kind != loom.KindFork || len(msgs) != 2 || msgs[0].Text() != "What next?" {
				t.Fatalf("session %s printed is not the fork with the turn: %+v", id, fk)
			}
		})
	}
}

// A compacted imported session sends the model its summary: a summary
// message of one text part that carries metadata (as a Claude Code
// compaction is stored) reaches the request as "Summary of the earlier
// conversation:" and its text.
func TestResumedImportSendsItsSummary(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	const summary = "The build failed on an undeclared x; it is declared now and the tests pass."
	src := importCodexSession(t, fx,
		&loom.Message{Role: loom.RoleSummary, Parts: []loom.Part{{Type: loom.PartText, Text: summary,
			Metadata: json.RawMessage(`{"trigger":"auto","pre_tokens":150000}`)}}},
		&loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "Now the docs."}}},
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "Docs updated."}}},
	)
	p := fakeOpenAI(t)
	r := fx.RunWith(t, clitest.RunOpts{Env: p.env, Before: bothProviders}, "run", "--resume", src.ID, "What next?")
	if r.Code != 0 {
		t.Fatalf("run --resume: exit %d\n%s", r.Code, r.Stderr)
	}
	texts, _ := sentText(p.requests()[0])
	want := loom.SummaryPrefix + summary
	if len(texts["user"]) != 3 || texts["user"][0] != want || texts["user"][1] != "Now the docs." {
		t.Fatalf("user messages sent %q; want the summary %q first, then what follows it", texts["user"], want)
	}
}

// Opening an imported session and leaving without a message (chat -r,
// session resume) stores nothing; the first message makes one fork,
// under the id the resume header named, holding the message.
func TestOpeningImportedSessionMakesNoFork(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	src := importCodexSession(t, fx)
	p := fakeOpenAI(t)
	sessions, messages := fx.SessionCount(t)
	for _, args := range [][]string{{"chat", "-r", src.ID}, {"session", "resume", src.ID}, {"chat", "--resume", src.Key}} {
		r := fx.RunWith(t, clitest.RunOpts{Env: p.env, Before: bothProviders, Stdin: "/exit\n"}, args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.Code, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "Fixed: x is declared now.") || !strings.Contains(r.Stderr, "in a fork of it") {
			t.Errorf("%v does not show the import's history and where it goes on:\n%s", args, r.Stderr)
		}
		if strings.Contains(r.Stderr, "resume this session with") {
			t.Errorf("%v names a session to resume that was never made:\n%s", args, r.Stderr)
		}
		if s, m := fx.SessionCount(t); s != sessions || m != messages {
			t.Fatalf("%v with no message: %d sessions, %d messages; was %d, %d", args, s, m, sessions, messages)
		}
	}

	r := fx.RunWith(t, clitest.RunOpts{Env: p.env, Before: bothProviders, Stdin: "Where were we?\n"}, "chat", "-r", src.ID)
	if r.Code != 0 {
		t.Fatalf("chat: exit %d\n%s", r.Code, r.Stderr)
	}
	var header string
	for _, line := range clitest.Lines(r.Stderr) {
		if rest, ok := strings.CutPrefix(line, "resuming session "); ok {
			header, _, _ = strings.Cut(rest, " ")
		}
	}
	if s, _ := fx.SessionCount(t); s != sessions+1 {
		t.Fatalf("%d sessions after the first message, want %d", s, sessions+1)
	}
	st := fx.OpenStore(t)
	fk, err := st.Session(context.Background(), header)
	if err != nil {
		t.Fatalf("the resume header named %q: %v\n%s", header, err, r.Stderr)
	}
	if n := strings.Count(r.Stderr, header); n != 2 {
		// The resume header, and on exit how to resume it.
		t.Fatalf("the fork's id is printed %d times before the first reply, want once:\n%s", n-1, r.Stderr)
	}
	msgs, _ := st.Messages(context.Background(), fk.ID, loom.MessageQuery{Limit: 2})
	if fk.Kind != loom.KindFork || fk.ParentID != src.ID || fk.Model != "gpt-4o-mini" || !strings.HasPrefix(fk.Key, "cli:api:") ||
		len(msgs) != 2 || msgs[0].Text() != "Where were we?" {
		t.Fatalf("the fork %+v", fk)
	}
	if !strings.Contains(r.Stderr, "resume this session with: loom chat --resume "+fk.ID) {
		t.Errorf("no resume hint for the fork:\n%s", r.Stderr)
	}
}

// A Claude Code session compacted with /compact, imported from the file
// Claude Code wrote (the summary one text part with the boundary's
// metadata, no compaction agent's file), resumes with its summary text
// sent to the model, and none of Claude Code's own lines (the /compact
// command, its output) as system text.
func TestResumedCompactedClaudeCodeSession(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	file := filepath.Join(fx.Home, "claude", "6b1e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14.jsonl")
	os.MkdirAll(filepath.Dir(file), 0o755)
	b, err := os.ReadFile(filepath.Join("..", "..", "importer", "claudecode", "testdata", filepath.Base(file)))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, b, 0o644)
	if r := fx.Exec(t, "", "session", "import", "--from", "claude-code", file); r.Code != 0 {
		t.Fatalf("import: exit %d %s", r.Code, r.Stderr)
	}
	shown := clitest.DecodeJSON[struct {
		Session  *loom.Session   `json:"session"`
		Messages []*loom.Message `json:"messages"`
	}](t, fx.MustRun(t, "session", "show", "claude-code:6b1e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14", "--full-history", "--json"))
	summary := ""
	for _, m := range shown.Messages {
		if m.Role == loom.RoleSummary {
			summary = m.Text()
		}
	}
	if summary == "" {
		t.Fatalf("the imported summary has no text: %+v", shown.Messages)
	}
	p := fakeOpenAI(t)
	r := fx.RunWith(t, clitest.RunOpts{Env: p.env, Before: bothProviders}, "run", "--resume", "claude-code:6b1e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14", "go on")
	if r.Code != 0 {
		t.Fatalf("run --resume: exit %d\n%s", r.Code, r.Stderr)
	}
	texts, order := sentText(p.requests()[0])
	if len(texts["user"]) == 0 || texts["user"][0] != loom.SummaryPrefix+summary {
		t.Errorf("first user message sent %q, want the summary", texts["user"])
	}
	if n := len(texts["system"]); n != 1 || order[0] != "system" {
		t.Errorf("system texts sent: %q (order %v), want loom's prompt alone, first", texts["system"], order)
	}
}
