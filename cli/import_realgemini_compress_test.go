package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	geminiim "github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/internal/agentclitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealGeminiCompression: Gemini CLI 0.61 compresses a chat
// before a model call when the prompt tokens of the chat's last call
// pass model.compressionThreshold of the model's limit. In `gemini -p`
// each process starts counting from nothing, so the call that passes it
// has to be one of the same turn: the model answers a file read
// reporting 300,000 prompt tokens, and Gemini CLI compresses before it
// sends the read's result, with the prompt and the call in flight. It
// then records that prompt and call again under new ids; the import
// holds each once, the summary once, and counts one compaction.
func TestImportRealGeminiCompression(t *testing.T) {
	if onPostgres() {
		t.Skip("runs the real agents once, on the SQLite pass")
	}
	t.Parallel()
	started := time.Now()
	g := startGemini(t, `, "model": {"compressionThreshold": 0.2}`)
	fx, dir, sc, srv, say, usage, gemini := g.fx, g.dir, g.sc, g.srv, g.say, g.usage, g.run

	// A first turn long enough that a compression has something to
	// summarise before the prompt it keeps.
	long := "Remember this list: " + strings.Repeat("item, ", 400) + "end."
	sc.on("Remember this list", say("", "Remembered.", usage(1000, 0, 3, 0)))
	sid := gemini("", long)
	sc.on("What is in notes.txt?", say("The user wants the file.", "", usage(300000, 0, 40, 20),
		providertest.ToolCall{Name: "read_file", Args: `{"file_path":"` + filepath.Join(dir, "notes.txt") + `"}`}))
	sc.on("Generate a new <state_snapshot>", say("", "<state_snapshot>The user had a list remembered.</state_snapshot>", usage(2000, 0, 30, 0)))
	sc.on("Critically evaluate the <state_snapshot>", say("", "<state_snapshot>The user had a list remembered.</state_snapshot>", usage(2100, 0, 30, 0)))
	sc.on("beta", say("Both lines are read.", "It says alpha and beta.", usage(1400, 0, 9, 3)))
	gemini(sid, "What is in notes.txt?")
	compressed := false
	for _, r := range srv.Requests() {
		if strings.Contains(lastJSON(r, "contents"), "Critically evaluate the <state_snapshot>") {
			compressed = true
		}
	}
	if !compressed {
		t.Fatal("Gemini CLI did not compress the chat")
	}
	t.Logf("gemini ran %d model calls in %s", len(srv.Requests()), time.Since(started).Round(time.Millisecond))
	keepAgentHome(fx)
	// The two calls that wrote the summary are in no record: their
	// usage is not imported. Gemini CLI's "Got it. Thanks for the
	// additional context!" after the summary is no reply.
	checkImportedFlows(t, fx, geminiim.Tool, []*flowWant{{flow: "compression",
		prompts: []string{long, "What is in notes.txt?"}, replies: []string{"Remembered.", "It says alpha and beta."},
		reasoning: []string{"The user wants the file.", "Both lines are read."},
		tools:     []toolWant{{"read_file", "beta"}}, summaries: 1,
		usage: usageOf(1000+300000+1400, 0, 3+40+9, 20+3)}})
}

// realGemini is Gemini CLI set up to run against a scripted fake model
// in a fixture's HOME, in its work directory (which holds notes.txt).
type realGemini struct {
	fx    *fixture
	dir   string
	srv   *agentclitest.Scripted
	sc    *script[agentclitest.Turn]
	say   func(think, text string, u agentclitest.Usage, calls ...providertest.ToolCall) func(string) agentclitest.Turn
	usage func(in, cached, out, reasoning int64) agentclitest.Usage
	// run runs `gemini -p prompt`, resuming resume when not empty, and
	// returns the session id it names.
	run func(resume, prompt string) string
}

// startGemini installs Gemini CLI and sets it up; settings is added to
// its settings.json (`, "key": value`), extraEnv to its environment.
func startGemini(t *testing.T, settings string, extraEnv ...string) *realGemini {
	t.Helper()
	bin := agentclitest.Install(t, agentclitest.Gemini)
	g := &realGemini{fx: newEmptyFixture(t), srv: agentclitest.NewScriptedGemini()}
	g.dir = filepath.Join(g.fx.home, "work")
	mustWrite(t, filepath.Join(g.dir, "notes.txt"), "alpha\nbeta\n")
	t.Cleanup(g.srv.Close)
	g.sc = &script[agentclitest.Turn]{last: func(r providertest.Request) string { return lastJSON(r, "contents") }}
	g.srv.Respond(g.sc.respond)
	writeSettings(t, filepath.Join(g.fx.home, ".gemini", "settings.json"),
		`{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}, `+
			`"privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}, `+
			`"general": {"disableAutoUpdate": true, "disableUpdateNag": true}`+settings+`}`)
	env := agentclitest.Env(g.fx.home, "GEMINI_API_KEY=fake-key", "GOOGLE_GEMINI_BASE_URL="+g.srv.URL, "GEMINI_CLI_NO_RELAUNCH=true")
	// A hook it runs finds the fixture's store.
	env = append(append(env, "LOOM_HOME="+g.fx.home), extraEnv...)
	g.say = func(think, text string, u agentclitest.Usage, calls ...providertest.ToolCall) func(string) agentclitest.Turn {
		return g.sc.answer(agentclitest.Turn{Reasoning: think, Text: text, Calls: calls, Usage: u})
	}
	g.usage = func(in, cached, out, reasoning int64) agentclitest.Usage {
		return agentclitest.Usage{Input: in, Cached: cached, Output: out, Reasoning: reasoning}
	}
	g.run = func(resume, prompt string) string {
		args := []string{"-m", "gemini-2.5-flash", "--yolo", "-o", "json"}
		if resume != "" {
			args = append(args, "--resume", resume)
		}
		return sessionIDIn(t, agentclitest.Run(t, cliTimeout, g.dir, env, bin, append(args, "-p", prompt)...), `"session_id": "`)
	}
	return g
}
