package realclis_test

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	copilotim "github.com/loomhq/loom/importer/copilot"
	"github.com/loomhq/loom/importer/gemini"
	piim "github.com/loomhq/loom/importer/pi"
	qwenim "github.com/loomhq/loom/importer/qwen"
	"github.com/loomhq/loom/internal/shell"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// sessionMessages are the messages of the fixture's session id.
func sessionMessages(t *testing.T, fx *clitest.Fixture, id string) []*loom.Message {
	t.Helper()
	st := fx.OpenStore(t)
	defer st.Close()
	msgs, err := st.Messages(t.Context(), id, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// handedHistory is what the model must be sent when the agent (tool)
// resumes the fixture's main session: every prompt (the summary as one,
// without Claude Code's lines for itself when tool is another), every
// reply's text, and every tool call's arguments and result.
func handedHistory(t *testing.T, fx *clitest.Fixture, id, tool string) []string {
	t.Helper()
	var want []string
	for _, m := range sessionMessages(t, fx, id) {
		if m.Role == loom.RoleSystem {
			continue
		}
		for _, p := range m.Parts {
			switch {
			case p.Type == loom.PartText && m.Role == loom.RoleSummary && tool != claudecode.Tool:
				want = append(want, handoff.OtherToolSummary(p.Text))
			case p.Type == loom.PartText && strings.TrimSpace(p.Text) != "":
				want = append(want, p.Text)
			case p.Type == loom.PartTool:
				// What the call did (under the target's tool name, which
				// may not be the source's: a shell call carries its
				// command, a file read its path, any other call its
				// arguments) and its result.
				if cmd, ok := shell.Command(p); ok {
					want = append(want, cmd)
				} else if path, ok := handoff.ReadPath(p); ok {
					want = append(want, path)
				} else {
					want = append(want, strings.Fields(agentclitest.Strings(p.Input))...)
				}
				want = append(want, handoff.ResultText(p))
			}
		}
	}
	return want
}

// checkSent checks that one of the requests the fake model received
// holds prompt and the whole handed-off history.
func checkSent(t *testing.T, srv requester, prompt string, want []string) {
	t.Helper()
	// The largest request that holds the prompt is the model call that
	// answers it: an agent's side calls (Gemini CLI's model routing and
	// next-speaker check) carry less of the history, or a history its
	// own policies have shortened since.
	var best string
	for _, r := range srv.Requests() {
		if s := agentclitest.Strings(r.Raw); strings.Contains(s, prompt) && len(s) > len(best) {
			best = s
		}
	}
	if best == "" {
		t.Fatalf("no request to the model holds the prompt %q (%d requests)", prompt, len(srv.Requests()))
	}
	for _, w := range want {
		// A tool's arguments told as text are JSON in the text.
		quoted, _ := json.Marshal(w)
		if !strings.Contains(best, w) && !strings.Contains(best, strings.Trim(string(quoted), `"`)) {
			t.Errorf("with %q, the model was not sent %.100q", prompt, w)
		}
	}
}

// handoffFor hands a session to tool and returns the report: the
// fixture's main session when sample is "", else the longest session
// imported from sample, a file of from's.
func handoffFor(t *testing.T, fx *clitest.Fixture, tool, from, sample string) clitest.HandoffJSON {
	t.Helper()
	id := fx.Main.ID
	if sample != "" {
		id = fx.SourceSession(t, from, sample).ID
	}
	r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "handoff", id, "--to", tool, "--dir", fx.Project, "--json")
	if r.Code != 0 {
		t.Fatalf("handoff: exit %d: %s", r.Code, r.Stderr)
	}
	return clitest.DecodeJSON[clitest.HandoffJSON](t, r.Stdout)
}

// resumeFlow says how an agent continues a handed-off session: whole
// says the model is sent the whole history with the second prompt too
// (not so for an agent that masks older tool outputs); once, that it
// runs one turn, not two; fork, that it continues the session as a new
// one of the same history (cn --fork, droid exec --fork), whose file
// carries the handed-off one's marker, and a second turn continues that.
type resumeFlow struct {
	whole, once, fork bool
	// cut is the length past which the agent, by its own policy, sends
	// the model a tool result with its middle cut out (Cline, past
	// 8,000 characters): such a result is checked for its start and
	// its end.
	cut int
}

// cutMiddles is want with each string longer than cut replaced by its
// first and last quarter of cut characters.
func cutMiddles(want []string, cut int) []string {
	var out []string
	for _, w := range want {
		r := []rune(w)
		if cut == 0 || len(r) <= cut {
			out = append(out, w)
			continue
		}
		out = append(out, string(r[:cut/4]), string(r[len(r)-cut/4:]))
	}
	return out
}

// resumeTurns has the agent continue the handed-off session for two
// turns (one with f.once; run resumes it with a prompt, turn 1 or 2, and
// returns the agent's output) and checks that the model was sent the
// whole history with each prompt (with the second, unless f.whole, only
// the first prompt), that the turns went to the handed-off file (unless
// f.fork, or the file is a database of sessions: no other session file
// of the tool under root, matching glob, holds them), and that importing
// the tool's sessions from root brings the session back as a fork of
// the original holding them.
func resumeTurns(t *testing.T, fx *clitest.Fixture, out clitest.HandoffJSON, srv requester, root, glob string, f resumeFlow, run func(turn int, prompt string) string) {
	t.Helper()
	first, second := "Which file holds the fix?", "And what should the test use?"
	t.Logf("%s: %s", out.Tool, run(1, first))
	history := cutMiddles(handedHistory(t, fx, out.From, out.Tool), f.cut)
	checkSent(t, srv, first, history)
	prompts := []string{first}
	if !f.once {
		run(2, second)
		if f.whole {
			checkSent(t, srv, second, append(history, first))
		} else {
			checkSent(t, srv, second, []string{first})
		}
		prompts = append(prompts, second)
	}
	if !f.fork && !strings.HasSuffix(out.Path, ".db") {
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
	}
	r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", out.Tool, root)
	if r.Code != 0 {
		t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
	}
	ss := clitest.DecodeJSON[[]*loom.Session](t, fx.MustRun(t, "session", "list", "-a", "--surface", out.Tool, "--json"))
	var back *loom.Session
	for _, s := range ss {
		if s.Key == out.Tool+":"+out.SessionID || f.fork && s.Kind == loom.KindFork && s.ParentID == out.From {
			back = s
		}
	}
	if back == nil || back.Kind != loom.KindFork || back.ParentID != out.From {
		t.Fatalf("imported %+v; want %s:%s (or, forked by the agent, a session of its own) as a fork of %s", ss, out.Tool, out.SessionID, out.From)
	}
	show := fx.MustRun(t, "session", "show", back.ID, "--json")
	for _, p := range prompts {
		if !strings.Contains(show, p) {
			t.Errorf("the imported session lacks %q", p)
		}
	}
}

// requester is a fake model server: what it was asked.
type requester interface{ Requests() []providertest.Request }

// realAgent is how a test runs one agent against a fake model server.
type realAgent struct {
	// name names the subtest when it is not tool (a second setup of
	// the tool's).
	name   string
	pkg    agentclitest.Package
	tool   string
	sample string // a file of the agent's own, imported and handed back
	// start starts the fake model server for the agent, writes the
	// agent's settings under home, and returns the server, the
	// environment to run the agent in, and where its session files are
	// (a root and a glob under it).
	start func(t *testing.T, home string) (srv requester, env []string, root, glob string)
	// args resumes session id with prompt, without a terminal.
	args func(id, prompt string) []string
	// masks says the agent, by its own policy, replaces older bulky tool
	// outputs in the history of a later turn (Gemini CLI masks those past
	// 50,000 tokens of them): a second turn of a long session is checked
	// for its prompts only.
	masks bool
	// fresh starts a new session with prompt. With list, which lists the
	// agent's sessions: after the agent's next start (when it cleans up
	// its session files), the handed-off session must still be listed.
	// With last, which resumes the newest session: the agent runs a
	// session of its own before the hand-off (a machine that used it
	// before), and the handed-off session is resumed with last. Nil when
	// not checked.
	fresh func(prompt string) []string
	list  []string
	last  func(prompt string) []string
	// sources are the sessions handed off (loom, own, claude-code-long);
	// nil is all three.
	sources []string
	// resume, when set, continues the session in place of running args:
	// an agent resumed on a terminal, or one whose second turn continues
	// what its first forked.
	resume func(t *testing.T, r agentRun) string
	// timeout bounds a run of the agent; 0 is clitest.CLITimeout.
	timeout time.Duration
	// first says the agent runs a session of its own (fresh) before the
	// hand-off: one that makes its database when it first runs.
	first bool
	// flow is how it continues the session (whole is set from masks).
	flow resumeFlow
}

// codexStart starts the fake Responses API for Codex, configured as a
// model provider of its config.toml, with model (none: Codex's
// default).
func codexStart(model string) func(t *testing.T, home string) (requester, []string, string, string) {
	return func(t *testing.T, home string) (requester, []string, string, string) {
		srv := agentclitest.NewResponses()
		t.Cleanup(srv.Close)
		codexHome := filepath.Join(home, ".codex")
		var cfg []string
		if model != "" {
			cfg = append(cfg, `model = "`+model+`"`)
		}
		clitest.WriteSettings(t, filepath.Join(codexHome, "config.toml"), strings.Join(append(cfg,
			`model_provider = "fake"`, `[model_providers.fake]`, `name = "fake"`,
			`base_url = "`+srv.URL+`/v1"`, `wire_api = "responses"`, `env_key = "FAKE_OPENAI_KEY"`,
			`request_max_retries = 0`, `stream_max_retries = 0`), "\n"))
		env := agentclitest.Env(home, "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=sk-fake")
		return srv, env, filepath.Join(codexHome, "sessions"), "*/*/*/rollout-*.jsonl"
	}
}

var realAgents = []realAgent{{
	pkg: agentclitest.ClaudeCode, tool: claudecode.Tool, sample: clitest.Samples + "/claude-code/spotter/tool_heavy.jsonl",
	start: func(t *testing.T, home string) (requester, []string, string, string) {
		srv := anthropictest.NewServer()
		t.Cleanup(srv.Close)
		env := agentclitest.Env(home, "ANTHROPIC_BASE_URL="+srv.BaseURL(), "ANTHROPIC_API_KEY=sk-ant-fake",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
		return srv, env, filepath.Join(home, ".claude", "projects"), "*/*.jsonl"
	},
	args: func(id, prompt string) []string {
		return []string{"-p", "--resume", id, "--model", "claude-sonnet-4-5", prompt}
	},
}, {
	// Codex's default model (no model in its config.toml): in code
	// mode, offered exec and wait, not exec_command.
	pkg: agentclitest.Codex, tool: codex.Tool, sample: clitest.Samples + "/codex/vibecodingtracker-codex.jsonl",
	start: codexStart(""),
	args: func(id, prompt string) []string {
		return []string{"exec", "--skip-git-repo-check", "resume", id, prompt}
	},
	fresh: func(prompt string) []string { return []string{"exec", "--skip-git-repo-check", prompt} },
	last: func(prompt string) []string {
		return []string{"exec", "--skip-git-repo-check", "resume", "--last", prompt}
	},
}, {
	// A model of Codex's catalog without code mode: offered
	// exec_command.
	name: "codex-gpt-5.5", pkg: agentclitest.Codex, tool: codex.Tool, sample: clitest.Samples + "/codex/vibecodingtracker-codex.jsonl",
	start: codexStart("gpt-5.5"),
	args: func(id, prompt string) []string {
		return []string{"exec", "--skip-git-repo-check", "resume", id, prompt}
	},
	sources: []string{"own", "claude-code-long"},
}, {
	pkg: agentclitest.Gemini, tool: gemini.Tool, sample: clitest.Samples + "/gemini/vibecodingtracker-gemini.jsonl",
	start: func(t *testing.T, home string) (requester, []string, string, string) {
		srv := agentclitest.NewGemini()
		t.Cleanup(srv.Close)
		clitest.WriteSettings(t, filepath.Join(home, ".gemini", "settings.json"),
			`{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}, `+
				`"privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}, `+
				`"general": {"disableAutoUpdate": true, "disableUpdateNag": true}}`)
		env := agentclitest.Env(home, "GEMINI_API_KEY=fake-key", "GOOGLE_GEMINI_BASE_URL="+srv.URL, "GEMINI_CLI_NO_RELAUNCH=true")
		return srv, env, filepath.Join(home, ".gemini", "tmp"), "*/chats/session-*"
	},
	args: func(id, prompt string) []string {
		return []string{"--resume", id, "-m", "gemini-2.5-flash", "-p", prompt}
	},
	masks: true,
	fresh: func(prompt string) []string { return []string{"-m", "gemini-2.5-flash", "-p", prompt} },
	list:  []string{"--list-sessions"},
}, {
	pkg: agentclitest.Pi, tool: piim.Tool, sample: "../../../importer/pi/testdata/real-0.73.1-tool.jsonl",
	start: func(t *testing.T, home string) (requester, []string, string, string) {
		srv := agentclitest.NewResponses()
		t.Cleanup(srv.Close)
		agent := filepath.Join(home, ".pi", "agent")
		clitest.WriteSettings(t, filepath.Join(agent, "models.json"), `{"providers": {"fake": {
			"baseUrl": "`+srv.URL+`/v1", "api": "openai-responses", "apiKey": "FAKE_OPENAI_KEY",
			"models": [{"id": "gpt-fake", "reasoning": true, "input": ["text"], "contextWindow": 200000, "maxTokens": 8000}]}}}`)
		env := agentclitest.Env(home, "FAKE_OPENAI_KEY=sk-fake", "PI_OFFLINE=1", "PI_TELEMETRY=0")
		return srv, env, filepath.Join(agent, "sessions"), "*/*.jsonl"
	},
	args: func(id, prompt string) []string {
		return []string{"--provider", "fake", "--model", "gpt-fake", "--offline", "--session", id, "-p", prompt}
	},
}, {
	pkg: agentclitest.Qwen, tool: qwenim.Tool, sample: "../../../importer/qwen/testdata/projects/-tmp-qh-work/chats/0eabb966-8635-48db-a857-f8d8c01eec6b.jsonl",
	start: func(t *testing.T, home string) (requester, []string, string, string) {
		srv := openaitest.NewServer()
		t.Cleanup(srv.Close)
		// A context window that holds the long session whole: Qwen Code
		// compresses a history past its threshold before it sends it.
		clitest.WriteSettings(t, filepath.Join(home, ".qwen", "settings.json"),
			`{"memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false}, "privacy": {"usageStatisticsEnabled": false}, `+
				`"telemetry": {"enabled": false}, "model": {"generationConfig": {"contextWindowSize": 1000000}}}`)
		env := agentclitest.WithNode(t, agentclitest.Env(home, "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=sk-fake", "OPENAI_MODEL=gpt-fake"))
		return srv, env, filepath.Join(home, ".qwen", "projects"), "*/chats/*.jsonl"
	},
	args: func(id, prompt string) []string {
		return []string{"--auth-type", "openai", "--resume", id, prompt}
	},
}, {
	pkg: agentclitest.Copilot, tool: copilotim.Tool, sample: "../../../importer/copilot/testdata/session-state/e077fa0d-a491-487d-aa99-2b8a8f52d9a4/events.jsonl",
	start: func(t *testing.T, home string) (requester, []string, string, string) {
		srv := openaitest.NewServer()
		t.Cleanup(srv.Close)
		// Offline, with a provider of the user's own: no login. A prompt
		// window that holds the long session whole: Copilot CLI leaves
		// the oldest messages out of a history past it (128,000 tokens
		// by default).
		env := agentclitest.Env(home, "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false",
			"COPILOT_PROVIDER_BASE_URL="+srv.BaseURL(), "COPILOT_PROVIDER_API_KEY=sk-fake", "COPILOT_MODEL=gpt-fake",
			"COPILOT_PROVIDER_MAX_PROMPT_TOKENS=1000000")
		return srv, env, filepath.Join(home, ".copilot", "session-state"), "*/events.jsonl"
	},
	args: func(id, prompt string) []string { return []string{"--resume", id, "-p", prompt} },
}}

// TestHandoffRealCLIs: each real agent of the eleven (Claude Code:
// claude -p --resume; Codex CLI: codex exec resume; Gemini CLI: gemini
// --resume … -p; opencode: opencode run --session; Cline: cline --id on
// a terminal; cn and droid: a fork of the session …), installed from npm
// and run offline against a fake model server, resumes a handed-off
// session (loom's own, one imported from the agent's own files, a long
// one imported from Claude Code: those its realAgent names), sends the
// model the whole history, appends a second turn to the same session,
// and comes back through import as a fork.
func TestHandoffRealCLIs(t *testing.T) {
	// The agents read and write files; the store only hands off and
	// imports, which the SQLite pass and the matrix cover.
	clitest.RealAgentsOnce(t)
	for _, a := range slices.Concat(realAgents, moreRealAgents) {
		t.Run(cmp.Or(a.name, a.tool), func(t *testing.T) {
			t.Parallel()
			bin := agentclitest.Install(t, a.pkg)
			for _, src := range []struct{ name, tool, sample string }{
				{"loom", "", ""},
				{"own", a.tool, a.sample},
				// 155 messages and 186 tool calls (Bash, Read, Edit,
				// Grep, Task …) of Claude Code 2.1.
				{"claude-code-long", claudecode.Tool, clitest.Samples + "/claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"},
			} {
				if a.sources != nil && !slices.Contains(a.sources, src.name) {
					continue
				}
				t.Run(src.name, func(t *testing.T) {
					fx := clitest.NewFixture(t)
					srv, env, root, glob := a.start(t, fx.Home)
					timeout := cmp.Or(a.timeout, clitest.CLITimeout)
					if a.last != nil || a.first {
						agentclitest.Run(t, timeout, fx.Project, env, bin, a.fresh("An earlier session of its own.")...)
					}
					out := handoffFor(t, fx, a.tool, src.tool, src.sample)
					flow := a.flow
					flow.whole = !(a.masks && src.name == "claude-code-long")
					resumeTurns(t, fx, out, srv, root, glob, flow, func(turn int, prompt string) string {
						if a.resume != nil {
							return a.resume(t, agentRun{bin: bin, dir: fx.Project, env: env, id: out.SessionID, prompt: prompt, turn: turn,
								timeout: timeout, shown: lastWord(t, fx, out.From)})
						}
						args := a.args(out.SessionID, prompt)
						if a.last != nil {
							args = a.last(prompt)
						}
						return agentclitest.Run(t, timeout, fx.Project, env, bin, args...)
					})
					// That the agent's next start keeps and lists a handed-off
					// session does not depend on what it holds: checked once.
					if a.list != nil && src.name == "loom" {
						agentclitest.Run(t, clitest.CLITimeout, fx.Project, env, bin, a.fresh("Start something else.")...)
						listed := agentclitest.Run(t, clitest.CLITimeout, fx.Project, env, bin, a.list...)
						if _, err := os.Stat(out.Path); err != nil || !strings.Contains(listed, out.SessionID) {
							t.Errorf("after the agent's next start the handed-off session is gone (%v) or not listed:\n%s", err, listed)
						}
					}
				})
			}
		})
	}
}
