package chatgpttui

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
)

// TestRealChatGPTTUI builds j178's chatgpt (agentclitest.ChatGPTTUI)
// and runs it on a terminal against a fake model on the Chat
// Completions API, no account: two questions in its first
// conversation, then a new conversation (ctrl+t) of one, then esc,
// which saves conversations.json. With LOOM_TEST_GO_AGENTS_WRITE=1 the
// file is kept as testdata/real. It runs only with
// LOOM_TEST_GO_AGENTS=1.
func TestRealChatGPTTUI(t *testing.T) {
	bin := agentclitest.GoInstall(t, agentclitest.ChatGPTTUI)
	srv := agentclitest.NewChatRepliesServer(t)
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "chatgpt")
	agentclitest.WriteConfig(t, filepath.Join(dir, "config.json"), `{"api_key": "sk-fake", "endpoint": "`+srv.BaseURL()+`"}`, 0o600)
	cmd := exec.Command(bin)
	cmd.Dir, cmd.Env = home, agentclitest.Env(home, "TERM=xterm")
	term := termtest.Start(t, cmd, 100, 30)
	ask := func(q, a string) {
		t.Helper()
		time.Sleep(500 * time.Millisecond)
		term.Send(q)
		term.Send("\r")
		term.WaitForWithin(t, a, time.Minute)
	}
	ask("Say hello in one line.", "Hello there.")
	ask("One more on the greeting?", "Continued and answering.")
	term.Send("\x14") // ctrl+t: a new conversation
	ask("What is in a list of alpha and beta?", "Alpha and beta.")
	time.Sleep(500 * time.Millisecond)
	term.Send("\x1b")
	if code := term.WaitWithin(t, time.Minute); code != 0 {
		t.Fatalf("chatgpt exited %d:\n%s", code, term.Output())
	}
	checkRead(t, dir)
	agentclitest.KeepFiles(t, dir, filepath.Join("testdata", "real"), home, "/home/u")
	os.Remove(filepath.Join("testdata", "real", "config.json"))
}
