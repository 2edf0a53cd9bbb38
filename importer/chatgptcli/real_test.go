package chatgptcli

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/agentclitest"
)

// TestRealChatGPTCLI builds ChatGPT CLI (agentclitest.ChatGPTCLI) and
// runs it against a fake model on the Chat Completions API, no account:
// a thread of two runs, one streamed and one in query mode (-q), and a
// thread of its own with a role of the user's. What it writes in its
// history directory reads as the prompts typed and the replies the
// model gave. With LOOM_TEST_GO_AGENTS_WRITE=1 the files are kept as
// testdata/real, the home directory renamed /home/u. It runs only with
// LOOM_TEST_GO_AGENTS=1.
func TestRealChatGPTCLI(t *testing.T) {
	bin := agentclitest.GoInstall(t, agentclitest.ChatGPTCLI)
	srv := agentclitest.NewChatRepliesServer(t)
	home := t.TempDir()
	agentclitest.WriteConfig(t, filepath.Join(home, ".chatgpt-cli", "config.yaml"), "url: "+srv.URL+"\ncompletions_path: /v1/chat/completions\nmodel: gpt-fake\napi_key: sk-fake\n", 0o600)
	env := agentclitest.Env(home)
	run := func(args ...string) {
		t.Helper()
		t.Log(agentclitest.Run(t, time.Minute, home, env, bin, args...))
	}
	run("--thread", "work", "Say hello in one line.")
	run("--thread", "work", "-q", "One more on the greeting?")
	run("--thread", "notes", "--role", "You answer in few words.", "What is in a list of alpha and beta?")

	dir := filepath.Join(home, ".chatgpt-cli", "history")
	checkRead(t, dir)
	agentclitest.KeepFiles(t, dir, filepath.Join("testdata", "real"), home, "/home/u")
}
