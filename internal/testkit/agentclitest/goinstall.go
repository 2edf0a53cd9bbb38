package agentclitest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom/openai/openaitest"
)

// GoPackage is an agent written in Go: the module that holds it, its
// command's package path, and the version tested.
type GoPackage struct {
	Module, Command, Version string
}

// The agents written in Go, at the versions the tests were written
// against.
var (
	// ChatGPTCLI is kardolus's ChatGPT CLI, chatgpt: the Chat
	// Completions API at the url of its config.yaml.
	ChatGPTCLI = GoPackage{Module: "github.com/kardolus/chatgpt-cli", Command: "github.com/kardolus/chatgpt-cli/cmd/chatgpt", Version: "v1.10.11"}
	// ChatGPTTUI is j178's ChatGPT in the terminal, chatgpt: the Chat
	// Completions API at the endpoint of its config.json.
	ChatGPTTUI = GoPackage{Module: "github.com/j178/chatgpt", Command: "github.com/j178/chatgpt/cmd/chatgpt", Version: "v1.3.5"}
	// MCPHost is mark3labs's MCPHost, mcphost: a provider's API at
	// --provider-url, MCP servers of ~/.mcphost.yml.
	// OpenCodeGo is OpenCode, the Go program Crush grew from, opencode:
	// the Chat Completions API of its local provider at
	// $LOCAL_ENDPOINT.
	OpenCodeGo = GoPackage{Module: "github.com/opencode-ai/opencode", Command: "github.com/opencode-ai/opencode", Version: "v0.0.55"}
	MCPHost    = GoPackage{Module: "github.com/mark3labs/mcphost", Command: "github.com/mark3labs/mcphost", Version: "v0.34.0"}
)

// RunGoAgents says whether the tests that build and run the agents
// written in Go run: only when LOOM_TEST_GO_AGENTS=1, as building one
// takes minutes of CPU that a test run otherwise spends on loom.
func RunGoAgents(t testing.TB) {
	t.Helper()
	if os.Getenv("LOOM_TEST_GO_AGENTS") != "1" || testing.Short() {
		t.Skip("builds and runs an agent written in Go: set LOOM_TEST_GO_AGENTS=1")
	}
}

var goInstalling sync.Map

// GoInstall builds p's command with the go command, from the Go module
// proxy, into $LOOM_AGENT_CLIS (default: the user's cache directory,
// loom-test/agent-clis), once for every test run that follows, and
// returns its path. The module is added as a tool of a module of its
// own (go get -tool) and then installed: the proxy serves an agent's
// exact version while refusing the list of its versions that a plain
// go install asks for. The test is skipped when the go command cannot
// build it.
func GoInstall(t testing.TB, p GoPackage) string {
	t.Helper()
	RunGoAgents(t)
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build %s with: %v", p.Command, err)
	}
	dir := os.Getenv("LOOM_AGENT_CLIS")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache directory to build %s into: %v", p.Command, err)
		}
		dir = filepath.Join(cache, "loom-test", "agent-clis")
	}
	dir = filepath.Join(dir, "go-"+strings.ReplaceAll(p.Command, "/", "-")+"-"+p.Version)
	bin := filepath.Join(dir, "bin", filepath.Base(p.Command))
	mu, _ := goInstalling.LoadOrStore(dir, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	env := append(os.Environ(), "GOBIN="+filepath.Join(dir, "bin"), "CGO_ENABLED=0", "GOFLAGS=-trimpath", "GOWORK=off")
	for _, args := range [][]string{
		{"mod", "init", "loomtest/goagent"},
		{"get", "-tool", p.Command + "@" + p.Version},
		{"install", p.Command},
	} {
		if args[0] == "mod" {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				continue
			}
		}
		cmd := exec.CommandContext(ctx, gocmd, args...)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Skipf("go %s could not build %s@%s: %v: %s", args[0], p.Command, p.Version, err, lastLine(out.String()))
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("go installed %s but not its command %s: %v", p.Command, bin, err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return bin
}

// KeepFiles copies the files under src, as an agent wrote them, to dst
// (a package's testdata), replacing dst's files, with every mention of
// home written as as: what a test that regenerates its testdata calls
// when LOOM_TEST_GO_AGENTS_WRITE=1.
func KeepFiles(t testing.TB, src, dst, home, as string) {
	t.Helper()
	if os.Getenv("LOOM_TEST_GO_AGENTS_WRITE") != "1" {
		return
	}
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.ContainsRune(data, 0) {
			data = bytes.ReplaceAll(data, []byte(home), []byte(as))
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Projects makes the two folders a run of an agent written in Go works
// in, below home: work, and other with notes.txt ("alpha\nbeta\n"),
// the file a turn reads; it returns them and that file's path.
func Projects(t testing.TB, home string) (work, other, notes string) {
	t.Helper()
	work, other = filepath.Join(home, "work"), filepath.Join(home, "other")
	for _, d := range []string{work, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	notes = filepath.Join(other, "notes.txt")
	if err := os.WriteFile(notes, []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return work, other, notes
}

// ChatReplies are the fake model's answers to a run of a chat client
// written in Go that asks three questions, "Say hello in one line.",
// "One more on the greeting?" and one about alpha and beta: a greeting,
// a continuation and "Alpha and beta.".
func ChatReplies() []openaitest.Reply {
	return []openaitest.Reply{
		{Text: "Hello there.", Usage: &openaitest.Usage{PromptTokens: 20, CompletionTokens: 3}},
		{Text: "Continued and answering.", Usage: &openaitest.Usage{PromptTokens: 31, CompletionTokens: 4}},
		{Text: "Alpha and beta.", Usage: &openaitest.Usage{PromptTokens: 25, CompletionTokens: 4}},
	}
}
