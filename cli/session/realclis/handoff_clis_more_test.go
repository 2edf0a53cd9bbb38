package realclis_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/loomhq/loom"
	clineim "github.com/loomhq/loom/importer/cline"
	"github.com/loomhq/loom/importer/continuedev"
	droidim "github.com/loomhq/loom/importer/droid"
	"github.com/loomhq/loom/importer/opencode"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// agentRun is one run of an agent that continues a handed-off session
// in its own way (realAgent.resume).
type agentRun struct {
	bin, dir string
	env      []string
	// id is the handed-off session's, prompt the one to send, turn 1
	// or 2.
	id, prompt string
	turn       int
	timeout    time.Duration
	// shown is the last word of the session's last reply, which an
	// agent with a terminal interface shows once it has the session.
	shown string
}

// lastWord is the last word of the last reply of loom session id, as
// a terminal interface shows it (without the punctuation around it).
func lastWord(t *testing.T, fx *clitest.Fixture, id string) string {
	t.Helper()
	msgs := sessionMessages(t, fx, id)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == loom.RoleAssistant {
			if words := strings.Fields(m.Text()); len(words) > 0 {
				return strings.TrimFunc(words[len(words)-1], unicode.IsPunct)
			}
		}
	}
	t.Fatalf("session %s has no reply", id)
	return ""
}

// chatServer starts a fake OpenAI Chat Completions server.
func chatServer(t *testing.T) *openaitest.Server {
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return srv
}

// opencodeStart sets up a program of opencode's line (app: opencode or
// kilo) with a custom provider of the fake model in its config, with
// env turning off what would reach the network.
func opencodeStart(app string, env ...string) func(t *testing.T, home string) (requester, []string, string, string) {
	return func(t *testing.T, home string) (requester, []string, string, string) {
		srv := chatServer(t)
		clitest.WriteSettings(t, filepath.Join(home, ".config", app, app+".json"), `{"autoupdate": false, "share": "disabled", "model": "fake/gpt-fake",
			"provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
				"options": {"baseURL": "`+srv.BaseURL()+`", "apiKey": "sk-fake"},
				"models": {"gpt-fake": {"name": "GPT Fake", "limit": {"context": 1000000, "output": 8000}}}}}}`)
		return srv, agentclitest.Env(home, env...), filepath.Join(home, ".local", "share", app), app + ".db"
	}
}

// opencodeRun continues session r.id with `run --session`, the prompt
// on standard input (run quotes each argument it joins into a prompt).
// A run takes its time: the program starts a server of its own and
// more, minutes on a busy machine.
func opencodeRun(t *testing.T, r agentRun) string {
	return runAgentWithin(t, r.timeout, r.dir, r.env, r.prompt, r.bin, "run", "--session", r.id)
}

// moreRealAgents are the agents a session is handed to that continue it
// in ways of their own: opencode and Kilo from a database, Cline on a
// terminal, Continue's cn and droid as a fork of the handed-off session.
// Each resumes the long Claude Code session (the test of every agent's
// run of the fake model's request is the same as the others'), those
// that run fast loom's own too.
var moreRealAgents = []realAgent{{
	// opencode's database, as opencode 1.18.33 left it after a run (its
	// first run makes it): the hand-off writes into it.
	pkg: agentclitest.Opencode, tool: opencode.Tool, sources: []string{"claude-code-long"},
	start: func(t *testing.T, home string) (requester, []string, string, string) {
		srv, env, root, glob := opencodeStart("opencode", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1")(t, home)
		data, err := os.ReadFile("../../../importer/opencode/testdata/real-1.18.33.db")
		if err != nil {
			t.Fatal(err)
		}
		clitest.MustWrite(t, filepath.Join(root, glob), string(data))
		return srv, env, root, glob
	},
	resume: opencodeRun, timeout: 8 * time.Minute,
}, {
	// Kilo makes kilo.db, of its own schema, when it first runs: a
	// session of its own first, then one turn of the handed-off one.
	pkg: agentclitest.Kilo, tool: opencode.KiloTool, sources: []string{"claude-code-long"},
	start: opencodeStart("kilo", "KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_AUTOUPDATE=1", "KILO_DISABLE_DEFAULT_PLUGINS=1",
		"KILO_DISABLE_SESSION_INGEST=1", "KILO_TELEMETRY_LEVEL=off"),
	first: true, fresh: func(prompt string) []string { return []string{"run", prompt} },
	resume: opencodeRun, timeout: 8 * time.Minute, flow: resumeFlow{once: true},
}, {
	// Cline resumes a session only in its terminal interface: each turn
	// is `cline --id ID` on a pseudo-terminal, the prompt typed once the
	// session is shown, left with Ctrl+C twice. It sends a tool result of
	// more than 8,000 characters with its middle cut out, its own as any.
	pkg: agentclitest.Cline, tool: clineim.Tool, sources: []string{"claude-code-long"},
	start: func(t *testing.T, home string) (requester, []string, string, string) {
		srv := chatServer(t)
		// What `cline auth openai --baseurl` writes.
		clitest.WriteSettings(t, filepath.Join(home, ".cline", "data", "settings", "providers.json"), `{"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
			"providers": {"openai-compatible": {"settings": {"provider": "openai-compatible", "apiKey": "sk-fake", "model": "gpt-fake",
			"baseUrl": "`+srv.BaseURL()+`"}, "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}}`)
		t.Cleanup(func() { stopClineHub(t, home) })
		return srv, agentclitest.Env(home), filepath.Join(home, ".cline", "data", "sessions"), "*/*.messages.json"
	},
	resume: func(t *testing.T, r agentRun) string {
		cmd := exec.Command(r.bin, "--id", r.id, "--compaction", "off")
		cmd.Dir, cmd.Env = r.dir, append(r.env, "TERM=xterm-256color")
		term := termtest.Start(t, cmd, 120, 40)
		term.WaitForScreen(t, r.shown, 5*time.Minute)
		term.Send(r.prompt)
		// Enter in the same burst as the text would be taken for a
		// pasted newline: it goes once the text is echoed, and again if
		// it was taken so all the same (the prompt stays in the box, no
		// turn starts).
		term.WaitForWithin(t, r.prompt, time.Minute)
		// The fake model echoes the prompt it answers: one echo more than
		// the session shows already.
		echoes := strings.Count(term.Output(), "echo:")
		answered := func() bool { return strings.Count(term.Output(), "echo:") > echoes }
		started := func() bool { return answered() || strings.Contains(term.Screen(), "esc to cancel") }
		deadline := time.Now().Add(3 * time.Minute)
		var sent time.Time
		for tries := 0; !answered(); time.Sleep(20 * time.Millisecond) {
			// Enter, and again after 10 seconds in which no turn started
			// (three times at most).
			if tries == 0 || tries < 3 && !started() && time.Since(sent) > 10*time.Second {
				term.Send("\r")
				sent, tries = time.Now(), tries+1
			}
			if time.Now().After(deadline) {
				t.Fatalf("cline did not answer %q; the terminal shows:\n%s", r.prompt, term.Screen())
			}
		}
		// Cline writes the turn to its session file after it shows the
		// answer: left at once, it can end before it has (seen on a
		// loaded machine), so the file is waited for first.
		files := filepath.Join(envHome(r.env), ".cline", "data", "sessions", "*", "*.json")
		for until := time.Now().Add(time.Minute); !globHolds(files, r.prompt) && time.Now().Before(until); {
			time.Sleep(50 * time.Millisecond)
		}
		term.Send("\x03")
		term.Send("\x03")
		term.WaitForWithin(t, "Session Summary", time.Minute)
		term.Wait(t)
		return term.Output()
	},
	timeout: 5 * time.Minute, flow: resumeFlow{cut: 8000},
}, {
	// cn resumes no session by its id: `cn --fork ID` continues it as a
	// new session (which cn --resume then goes on with).
	pkg: agentclitest.Continue, tool: continuedev.Tool, sources: []string{"loom", "claude-code-long"},
	start: func(t *testing.T, home string) (requester, []string, string, string) {
		srv := chatServer(t)
		clitest.WriteSettings(t, filepath.Join(home, "config.yaml"), "name: loom-test\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: fake\n    provider: openai\n"+
			"    model: gpt-fake\n    apiBase: "+srv.BaseURL()+"\n    apiKey: sk-fake\n    roles: [chat]\n    defaultCompletionOptions:\n      contextLength: 1000000\n")
		return srv, agentclitest.Env(home), filepath.Join(home, ".continue", "sessions"), "*.json"
	},
	resume: func(t *testing.T, r agentRun) string {
		args := []string{"--config", filepath.Join(envHome(r.env), "config.yaml"), "-p", "--fork", r.id, r.prompt}
		if r.turn > 1 {
			args = []string{"--config", filepath.Join(envHome(r.env), "config.yaml"), "-p", "--resume", r.prompt}
		}
		return agentclitest.Run(t, r.timeout, r.dir, r.env, r.bin, args...)
	},
	flow: resumeFlow{fork: true},
}, {
	// droid resumes a session without a terminal only through
	// Factory's service (`droid exec -s ID`), and its terminal interface
	// wants a Factory login: `droid exec --fork ID` continues it here,
	// offline, as a new session.
	pkg: agentclitest.Droid, tool: droidim.Tool, sources: []string{"loom", "claude-code-long"},
	start: func(t *testing.T, home string) (requester, []string, string, string) {
		srv := chatServer(t)
		clitest.WriteSettings(t, filepath.Join(home, ".factory", "settings.json"), `{"customModels": [{"model": "gpt-fake", "displayName": "Fake",
			"baseUrl": "`+srv.BaseURL()+`", "apiKey": "sk-fake", "provider": "generic-chat-completion-api", "maxOutputTokens": 8000, "contextWindow": 1000000}],
			"sessionDefaultSettings": {"model": "custom:gpt-fake"}}`)
		return srv, agentclitest.Env(home), filepath.Join(home, ".factory", "sessions"), "*/*.jsonl"
	},
	resume: func(t *testing.T, r agentRun) string {
		return agentclitest.Run(t, r.timeout, r.dir, r.env, r.bin, "exec", "--fork", r.id, r.prompt)
	},
	flow: resumeFlow{once: true, fork: true},
}}

// envHome is the HOME of env.
// globHolds reports whether a file that pattern matches holds text.
func globHolds(pattern, text string) bool {
	names, _ := filepath.Glob(pattern)
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil && strings.Contains(string(b), text) {
			return true
		}
	}
	return false
}

func envHome(env []string) string {
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			return h
		}
	}
	return ""
}
