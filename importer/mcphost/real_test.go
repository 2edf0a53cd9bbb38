package mcphost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// TestRealMCPHost builds MCPHost (agentclitest.MCPHost) and runs it
// against a fake model on the Chat Completions API (its openai
// provider at --provider-url), no account: a session saved with
// --save-session and continued with --session, and one whose turn
// reads a file with its builtin filesystem server. With
// LOOM_TEST_GO_AGENTS_WRITE=1 the files are kept as testdata/real, the
// home directory renamed /home/u. It runs only with
// LOOM_TEST_GO_AGENTS=1.
func TestRealMCPHost(t *testing.T) {
	bin := agentclitest.GoInstall(t, agentclitest.MCPHost)
	home := t.TempDir()
	work, other, notes := agentclitest.Projects(t, home)
	agentclitest.WriteConfig(t, filepath.Join(home, ".mcphost.yml"), "mcpServers:\n  files:\n    type: builtin\n    name: fs\n    options:\n      allowed_directories: [\""+other+"\"]\n", 0o644)
	srv := agentclitest.NewChatServer(t)
	srv.Respond(func(req providertest.Request) (openaitest.Reply, bool) {
		last := agentclitest.LastMessage(req)
		switch content, _ := last["content"].(string); {
		case last["role"] == "tool":
			return openaitest.Reply{Text: "It says alpha and beta.", Usage: &openaitest.Usage{PromptTokens: 140, CompletionTokens: 9}}, true
		case strings.Contains(content, "notes.txt"):
			name := "read_file"
			tools, _ := req.Body["tools"].([]any)
			for _, tl := range tools {
				fn, _ := tl.(map[string]any)["function"].(map[string]any)
				if n, _ := fn["name"].(string); strings.HasSuffix(n, "read_file") {
					name = n
				}
			}
			return openaitest.Reply{ToolCalls: []providertest.ToolCall{{Name: name, Args: `{"path":"` + notes + `"}`}}, Usage: &openaitest.Usage{PromptTokens: 130, CompletionTokens: 12}}, true
		case strings.Contains(content, "One more"):
			return openaitest.Reply{Text: "Continued and answering.", Usage: &openaitest.Usage{PromptTokens: 31, CompletionTokens: 4}}, true
		}
		return openaitest.Reply{Text: "Hello there.", Usage: &openaitest.Usage{PromptTokens: 20, CompletionTokens: 3}}, true
	})
	env := agentclitest.Env(home)
	run := func(dir string, args ...string) {
		t.Helper()
		args = append([]string{"-m", "openai:gpt-fake", "--provider-url", srv.BaseURL(), "--provider-api-key", "sk-fake", "--compact"}, args...)
		t.Log(agentclitest.Run(t, time.Minute, dir, env, bin, args...))
	}
	run(work, "--save-session", filepath.Join(work, "hello.json"), "-p", "Say hello in one line.")
	run(work, "--session", filepath.Join(work, "hello.json"), "-p", "One more on the greeting?")
	run(other, "--save-session", filepath.Join(other, "notes.json"), "-p", "What is in notes.txt?")
	checkRead(t, home)
	for _, f := range []string{"work/hello.json", "other/notes.json"} {
		agentclitest.KeepFiles(t, filepath.Join(home, filepath.Dir(f)), filepath.Join("testdata", "real", filepath.Dir(f)), home, "/home/u")
	}
	// The file read is the test's, not MCPHost's.
	os.Remove(filepath.Join("testdata", "real", "other", "notes.txt"))
}
