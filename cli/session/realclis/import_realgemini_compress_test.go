package realclis_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	geminiim "github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
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
	clitest.RealAgentsOnce(t)
	started := time.Now()
	g := clitest.StartGemini(t, `, "model": {"compressionThreshold": 0.2}`)
	fx, dir, sc, srv, say, usage, gemini := g.Fx, g.Dir, g.Sc, g.Srv, g.Say, g.Usage, g.Run

	// A first turn long enough that a compression has something to
	// summarise before the prompt it keeps.
	long := "Remember this list: " + strings.Repeat("item, ", 400) + "end."
	sc.On("Remember this list", say("", "Remembered.", usage(1000, 0, 3, 0)))
	sid := gemini("", long)
	sc.On("What is in notes.txt?", say("The user wants the file.", "", usage(300000, 0, 40, 20),
		providertest.ToolCall{Name: "read_file", Args: `{"file_path":"` + filepath.Join(dir, "notes.txt") + `"}`}))
	sc.On("Generate a new <state_snapshot>", say("", "<state_snapshot>The user had a list remembered.</state_snapshot>", usage(2000, 0, 30, 0)))
	sc.On("Critically evaluate the <state_snapshot>", say("", "<state_snapshot>The user had a list remembered.</state_snapshot>", usage(2100, 0, 30, 0)))
	sc.On("beta", say("Both lines are read.", "It says alpha and beta.", usage(1400, 0, 9, 3)))
	gemini(sid, "What is in notes.txt?")
	compressed := false
	for _, r := range srv.Requests() {
		if strings.Contains(clitest.LastJSON(r, "contents"), "Critically evaluate the <state_snapshot>") {
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
	snapshot := asks("Generate a new <state_snapshot>")
	checkFidelity(t, fx, geminiim.Tool, agentclitest.TurnAnswers(srv.Answered()), agentclitest.Expect{Summary: snapshot,
		NotRecorded: map[string]func(providertest.Request) bool{"Gemini CLI's compression calls": func(r providertest.Request) bool {
			return snapshot(r) || asks("Critically evaluate the <state_snapshot>")(r)
		}}})
}
