package clitest

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/providertest"
)

// realGemini is Gemini CLI set up to run against a scripted fake model
// in a fixture's HOME, in its work directory (which holds notes.txt).
type realGemini struct {
	Fx    *Fixture
	Dir   string
	Srv   *agentclitest.Scripted
	Sc    *Script[agentclitest.Turn]
	Say   func(think, text string, u agentclitest.Usage, calls ...providertest.ToolCall) func(string) agentclitest.Turn
	Usage func(in, cached, out, reasoning int64) agentclitest.Usage
	// Run runs `gemini -p prompt`, resuming resume when not empty, and
	// returns the session id it names.
	Run func(resume, prompt string) string
}

// StartGemini installs Gemini CLI and sets it up; settings is added to
// its settings.json (`, "key": value`), extraEnv to its environment.
func StartGemini(t *testing.T, settings string, extraEnv ...string) *realGemini {
	t.Helper()
	bin := agentclitest.Install(t, agentclitest.Gemini)
	g := &realGemini{Fx: NewEmptyFixture(t), Srv: agentclitest.NewScriptedGemini()}
	g.Dir = filepath.Join(g.Fx.Home, "work")
	MustWrite(t, filepath.Join(g.Dir, "notes.txt"), "alpha\nbeta\n")
	t.Cleanup(g.Srv.Close)
	g.Sc = &Script[agentclitest.Turn]{Last: func(r providertest.Request) string { return LastJSON(r, "contents") }}
	g.Srv.Respond(g.Sc.Respond)
	WriteSettings(t, filepath.Join(g.Fx.Home, ".gemini", "settings.json"),
		`{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}, `+
			`"privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}, `+
			`"general": {"disableAutoUpdate": true, "disableUpdateNag": true}`+settings+`}`)
	env := agentclitest.Env(g.Fx.Home, "GEMINI_API_KEY=fake-key", "GOOGLE_GEMINI_BASE_URL="+g.Srv.URL, "GEMINI_CLI_NO_RELAUNCH=true")
	// A hook it runs finds the fixture's store.
	env = append(append(env, "LOOM_HOME="+g.Fx.Home), extraEnv...)
	g.Say = func(think, text string, u agentclitest.Usage, calls ...providertest.ToolCall) func(string) agentclitest.Turn {
		return g.Sc.Answer(agentclitest.Turn{Reasoning: think, Text: text, Calls: calls, Usage: u})
	}
	g.Usage = func(in, cached, out, reasoning int64) agentclitest.Usage {
		return agentclitest.Usage{Input: in, Cached: cached, Output: out, Reasoning: reasoning}
	}
	g.Run = func(resume, prompt string) string {
		args := []string{"-m", "gemini-2.5-flash", "--yolo", "-o", "json"}
		if resume != "" {
			args = append(args, "--resume", resume)
		}
		return SessionIDIn(t, agentclitest.Run(t, CLITimeout, g.Dir, env, bin, append(args, "-p", prompt)...), `"session_id": "`)
	}
	return g
}
