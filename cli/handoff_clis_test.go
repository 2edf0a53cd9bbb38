package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/agentclitest"
	"github.com/loomhq/loom/providertest"
)

// cliTimeout bounds one run of an agent's command.
const cliTimeout = 90 * time.Second

// handedHistory is what the model must be sent when the agent resumes
// the fixture's main session: every prompt (the summary as one), every
// reply's text, and every tool call's arguments and result.
func handedHistory(t *testing.T, fx *fixture, id string) []string {
	t.Helper()
	st := fx.openStore(t)
	defer st.Close()
	msgs, err := st.Messages(t.Context(), id, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range msgs {
		if m.Role == loom.RoleSystem {
			continue
		}
		for _, p := range m.Parts {
			switch {
			case p.Type == loom.PartText && strings.TrimSpace(p.Text) != "":
				want = append(want, p.Text)
			case p.Type == loom.PartTool:
				// The call's arguments (under the target's tool name,
				// which may not be the source's) and its result.
				want = append(want, strings.Fields(agentclitest.Strings(p.Input))...)
				want = append(want, importer.ResultText(p))
			}
		}
	}
	return want
}

// checkSent checks that one of the requests the fake model received
// holds prompt and the whole handed-off history.
func checkSent(t *testing.T, srv interface{ Requests() []providertest.Request }, prompt string, want []string) {
	t.Helper()
	var best string
	for _, r := range srv.Requests() {
		if s := agentclitest.Strings(r.Raw); strings.Contains(s, prompt) {
			best = s
		}
	}
	if best == "" {
		t.Fatalf("no request to the model holds the prompt %q (%d requests)", prompt, len(srv.Requests()))
	}
	for _, w := range want {
		if !strings.Contains(best, w) {
			t.Errorf("the model was not sent %.100q", w)
		}
	}
}

// handoffFor hands a session to tool and returns the report: the
// fixture's main session when sample is "", else the longest session
// imported from sample, a file of tool's own, which goes back to it with
// its own tool calls.
func handoffFor(t *testing.T, fx *fixture, tool, sample string) handoffJSON {
	t.Helper()
	id, dir := fx.main.ID, fx.project
	if sample != "" {
		id = sourceSession(t, fx, tool, sample).ID
	}
	r := fx.runWith(t, runOpts{before: allFormats}, "session", "handoff", id, "--to", tool, "--dir", dir, "--json")
	if r.code != 0 {
		t.Fatalf("handoff: exit %d: %s", r.code, r.stderr)
	}
	return decodeJSON[handoffJSON](t, r.stdout)
}

// resumeTwice has the agent continue the handed-off session for two
// turns (run resumes it with a prompt and returns the agent's output)
// and checks that the model was sent the whole history with each
// prompt, that both turns went to the handed-off file (no other session
// file of the tool under root, matching glob, holds either), and that
// importing the tool's sessions from root brings the session back as a
// fork of the original holding them.
func resumeTwice(t *testing.T, fx *fixture, out handoffJSON, srv interface{ Requests() []providertest.Request }, root, glob string, run func(prompt string) string) {
	t.Helper()
	first, second := "Which file holds the fix?", "And what should the test use?"
	t.Logf("%s: %s", out.Tool, run(first))
	checkSent(t, srv, first, handedHistory(t, fx, out.From))
	run(second)
	checkSent(t, srv, second, append(handedHistory(t, fx, out.From), first))
	prompts := []string{first, second}
	data, err := os.ReadFile(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, glob))
	for _, p := range prompts {
		if !strings.Contains(string(data), p) {
			t.Errorf("the handed-off file lacks the prompt %q:\n%s", p, data)
		}
		for _, f := range files {
			if b, _ := os.ReadFile(f); f != out.Path && strings.Contains(string(b), p) {
				t.Errorf("the prompt %q went to %s too", p, f)
			}
		}
	}
	r := fx.runWith(t, runOpts{before: allFormats}, "session", "import", "--from", out.Tool, root)
	if r.code != 0 {
		t.Fatalf("import: exit %d: %s", r.code, r.stderr)
	}
	ss := decodeJSON[[]*loom.Session](t, fx.mustRun(t, "session", "list", "-a", "--surface", out.Tool, "--json"))
	var back *loom.Session
	for _, s := range ss {
		if s.Key == out.Tool+":"+out.SessionID {
			back = s
		}
	}
	if back == nil || back.Kind != loom.KindFork || back.ParentID != out.From {
		t.Fatalf("imported %+v; want %s:%s as a fork of %s", ss, out.Tool, out.SessionID, out.From)
	}
	show := fx.mustRun(t, "session", "show", back.ID, "--json")
	for _, p := range prompts {
		if !strings.Contains(show, p) {
			t.Errorf("the imported session lacks %q", p)
		}
	}
}

// handoffCLISources are the sessions each real agent resumes: loom's own,
// and one imported from a sample of the agent's own files.
func handoffCLISources(sample string) []struct{ name, sample string } {
	return []struct{ name, sample string }{{"loom", ""}, {"own", sample}}
}

// TestHandoffClaudeCodeCLI: the real Claude Code resumes a handed-off
// session non-interactively, sends the model the whole history, and a
// second turn appends to the same file.
func TestHandoffClaudeCodeCLI(t *testing.T) {
	bin := agentclitest.Install(t, agentclitest.ClaudeCode)
	for _, src := range handoffCLISources(agentSessions + "/claude-code/spotter/tool_heavy.jsonl") {
		t.Run(src.name, func(t *testing.T) {
			fx := newFixture(t)
			out := handoffFor(t, fx, importer.ClaudeCode, src.sample)
			srv := anthropictest.NewServer()
			defer srv.Close()
			env := agentclitest.Env(fx.home, "ANTHROPIC_BASE_URL="+srv.BaseURL(), "ANTHROPIC_API_KEY=sk-ant-fake",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
			resumeTwice(t, fx, out, srv, filepath.Join(fx.home, ".claude", "projects"), "*/*.jsonl", func(prompt string) string {
				return agentclitest.Run(t, cliTimeout, fx.project, env, bin, "-p", "--resume", out.SessionID, "--model", "claude-sonnet-4-5", prompt)
			})
		})
	}
}

// TestHandoffCodexCLI: the real Codex CLI resumes a handed-off session
// non-interactively (codex exec resume), sends the model the whole
// history, and a second turn appends to the same rollout.
func TestHandoffCodexCLI(t *testing.T) {
	bin := agentclitest.Install(t, agentclitest.Codex)
	for _, src := range handoffCLISources(agentSessions + "/codex/vibecodingtracker-codex.jsonl") {
		t.Run(src.name, func(t *testing.T) {
			fx := newFixture(t)
			out := handoffFor(t, fx, importer.Codex, src.sample)
			srv := agentclitest.NewResponses()
			defer srv.Close()
			codexHome := filepath.Join(fx.home, ".codex")
			config := strings.Join([]string{`model = "gpt-fake"`, `model_provider = "fake"`, `[model_providers.fake]`, `name = "fake"`,
				`base_url = "` + srv.URL + `/v1"`, `wire_api = "responses"`, `env_key = "FAKE_OPENAI_KEY"`,
				`request_max_retries = 0`, `stream_max_retries = 0`}, "\n")
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
			env := agentclitest.Env(fx.home, "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=sk-fake")
			resumeTwice(t, fx, out, srv, filepath.Join(codexHome, "sessions"), "*/*/*/rollout-*.jsonl", func(prompt string) string {
				return agentclitest.Run(t, cliTimeout, fx.project, env, bin, "exec", "--skip-git-repo-check", "resume", out.SessionID, prompt)
			})
		})
	}
}

// TestHandoffGeminiCLI: the real Gemini CLI resumes a handed-off session
// non-interactively (gemini --resume ID -p), sends the model the whole
// history, and a second turn appends to the same recording.
func TestHandoffGeminiCLI(t *testing.T) {
	bin := agentclitest.Install(t, agentclitest.Gemini)
	for _, src := range handoffCLISources(agentSessions + "/gemini/vibecodingtracker-gemini.jsonl") {
		t.Run(src.name, func(t *testing.T) {
			fx := newFixture(t)
			out := handoffFor(t, fx, importer.Gemini, src.sample)
			srv := agentclitest.NewGemini()
			defer srv.Close()
			settings := `{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}, ` +
				`"privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}, ` +
				`"general": {"disableAutoUpdate": true, "disableUpdateNag": true}}`
			if err := os.WriteFile(filepath.Join(fx.home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
				t.Fatal(err)
			}
			env := agentclitest.Env(fx.home, "GEMINI_API_KEY=fake-key", "GOOGLE_GEMINI_BASE_URL="+srv.URL, "GEMINI_CLI_NO_RELAUNCH=true")
			resumeTwice(t, fx, out, srv, filepath.Join(fx.home, ".gemini", "tmp"), "*/chats/session-*", func(prompt string) string {
				return agentclitest.Run(t, cliTimeout, fx.project, env, bin, "--resume", out.SessionID, "-m", "gemini-2.5-flash", "-p", prompt)
			})
		})
	}
}
