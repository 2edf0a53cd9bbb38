package agentclitest

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/providertest"
)

// TestInstall installs each agent (so that a CI run fills the cache
// before the tests that use them), several at a time, and runs its
// --version, which must name the version installed.
func TestInstall(t *testing.T) {
	for _, p := range []Package{ClaudeCode, Codex, CodexCodeMode, Gemini, Continue, Pi, Node22, Node24, Bun, Qwen, Copilot, Opencode, Kilo, Droid, Cline,
		Grok, CodeBuddy, OhMyPi, OpenClaw, Reasonix, CommandCode, Nanocoder, OpenCodex,
		NanoCode, Nanobot, Erosolar} {
		t.Run(p.Name+"@"+p.Version, func(t *testing.T) {
			t.Parallel()
			bin := Install(t, p)
			home := t.TempDir()
			env := Env(home)
			switch p {
			case Qwen:
				env = WithNode(t, env)
			case OhMyPi:
				env = WithCommand(t, Bun, env)
			case OpenClaw, CommandCode, Nanocoder, OpenCodex:
				env = WithCommand(t, Node24, env)
			}
			want := p.Version
			if p == CodeBuddy {
				// The program's own version, in the SDK's package.
				want = "2.117.0"
			}
			if p == NanoCode {
				// Its build's own version; without an install method on
				// record it runs itself without end to find one.
				want = "0.0.0-dev-202603210255"
				if err := os.MkdirAll(filepath.Join(home, ".config", "nanocode"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, ".config", "nanocode", "install-method"), []byte("gh-release"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := Run(t, 2*time.Minute, home, env, bin, "--version")
			if !strings.Contains(out, want) {
				t.Errorf("%s --version says %q, want %s", p.Bin, out, want)
			}
		})
	}
}

// TestStrings: the strings of a request body, those inside JSON-encoded
// strings included, without the keys.
func TestStrings(t *testing.T) {
	got := Strings([]byte(`{"input": [{"role": "user", "text": "hi"}, {"arguments": "{\"command\": \"ls -la\"}"}]}`))
	for _, want := range []string{"user\n", "hi\n", "ls -la\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("Strings = %q, lacks %q", got, want)
		}
	}
	if strings.Contains(got, "role") {
		t.Errorf("Strings = %q holds a key", got)
	}
}

// TestUncalledTool: the fake Responses API refuses, as the service
// does, a history that calls a tool the request does not offer, its
// tools or an additional_tools item's (Codex's code mode) alike, and a
// namespaced call whose namespace does not offer it.
func TestUncalledTool(t *testing.T) {
	codeMode := `{"type": "additional_tools", "tools": [{"type": "namespace", "name": "functions", "tools": [{"type": "custom", "name": "exec"}, {"type": "function", "name": "wait"}]}]}`
	for _, c := range []struct {
		body, refused string
	}{
		{`{"tools": [{"type": "function", "name": "exec_command"}], "input": [{"type": "function_call", "name": "exec_command"}]}`, ""},
		{`{"input": [` + codeMode + `, {"type": "custom_tool_call", "name": "exec"}, {"type": "function_call", "name": "wait"}]}`, ""},
		{`{"input": [{"type": "function_call", "name": "exec_command"}, ` + codeMode + `]}`, `input[0]: the function_call names tool "exec_command"`},
		{`{"tools": [{"type": "function", "name": "exec_command"}], "input": [{"type": "custom_tool_call", "name": "exec"}]}`, `names tool "exec"`},
		{`{"tools": [{"type": "namespace", "name": "multi_agent_v1", "tools": [{"type": "function", "name": "spawn_agent"}]}], "input": [{"type": "function_call", "namespace": "multi_agent_v1", "name": "spawn_agent"}]}`, ""},
		{`{"tools": [{"type": "function", "name": "spawn_agent"}], "input": [{"type": "function_call", "namespace": "collab", "name": "spawn_agent"}]}`, `names tool "collab.spawn_agent"`},
	} {
		var body map[string]any
		if err := json.Unmarshal([]byte(c.body), &body); err != nil {
			t.Fatal(err)
		}
		if got := uncalledTool(body); c.refused == "" && got != "" || !strings.Contains(got, c.refused) {
			t.Errorf("%s: refused %q, want %q", c.body, got, c.refused)
		}
	}
}

// TestResponsesCallArguments: the fake Responses API streams a call's
// arguments (response.function_call_arguments.delta and .done, naming
// the call's item) as the service does, for a client that builds its
// calls from these events and not from the finished item.
func TestResponsesCallArguments(t *testing.T) {
	srv := NewScriptedResponses()
	t.Cleanup(srv.Close)
	srv.Enqueue(Turn{Calls: []providertest.ToolCall{{Name: "read_file", Args: `{"path":"notes.txt"}`}}})
	body := `{"model": "gpt-fake", "stream": true, "tools": [{"type": "function", "name": "read_file"}], "input": [{"role": "user", "content": "Read it."}]}`
	resp, err := http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var item, delta, done string
	for _, line := range strings.Split(string(data), "\n") {
		var ev struct {
			Type      string `json:"type"`
			ItemID    string `json:"item_id"`
			Delta     string `json:"delta"`
			Arguments string `json:"arguments"`
			Item      struct {
				ID string `json:"id"`
			} `json:"item"`
		}
		if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "response.output_item.added":
			item = ev.Item.ID
		case "response.function_call_arguments.delta":
			delta = ev.ItemID + " " + ev.Delta
		case "response.function_call_arguments.done":
			done = ev.ItemID + " " + ev.Arguments
		}
	}
	want := item + ` {"path":"notes.txt"}`
	if item == "" || delta != want || done != want {
		t.Errorf("item %q, delta %q, done %q; want %q:\n%s", item, delta, done, want, data)
	}
}

// An install cut off before its mark (a killed test run) is started
// over: what it left in node_modules is gone before npm runs, so a file
// it wrote short cannot outlive it. The npm run here is a script on
// PATH that says whether the leftover was still there.
func TestInstallStartsOverAfterACutOffInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Install, which -short skips")
	}
	bin := t.TempDir()
	npm := "#!/bin/sh\n" +
		"for a; do [ \"$prev\" = --prefix ] && dir=$a; prev=$a; done\n" +
		"[ -e \"$dir/node_modules/left/short.node\" ] && echo left > \"$dir/seen\"\n" +
		"mkdir -p \"$dir/node_modules/.bin\" && printf '#!/bin/sh\\n' > \"$dir/node_modules/.bin/tool\"\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(npm), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	clis := t.TempDir()
	t.Setenv("LOOM_AGENT_CLIS", clis)
	p := Package{Name: "cutoff-tool", Version: "1.0.0", Bin: "tool"}
	dir := filepath.Join(clis, "cutoff-tool-1.0.0")
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "left"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", "left", "short.node"), []byte("cut"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Install(t, p); got != filepath.Join(dir, "node_modules", ".bin", "tool") {
		t.Fatalf("installed at %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "seen")); err == nil {
		t.Error("npm ran over what the cut-off install left in node_modules")
	}
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		t.Errorf("no mark after the install: %v", err)
	}
}
