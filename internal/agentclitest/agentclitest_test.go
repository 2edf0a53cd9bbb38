package agentclitest

import (
	"strings"
	"testing"
	"time"
)

// TestInstall installs each agent (so that a CI run fills the cache
// before the tests that use them), several at a time, and runs its
// --version, which must name the version installed.
func TestInstall(t *testing.T) {
	for _, p := range []Package{ClaudeCode, Codex, Gemini, Continue, Pi, Node22, Qwen, Copilot, Opencode, Kilo, Droid, Cline} {
		t.Run(p.Bin, func(t *testing.T) {
			t.Parallel()
			bin := Install(t, p)
			home := t.TempDir()
			env := Env(home)
			if p == Qwen {
				env = WithNode(t, env)
			}
			out := Run(t, time.Minute, home, env, bin, "--version")
			if !strings.Contains(out, p.Version) {
				t.Errorf("%s --version says %q, want %s", p.Bin, out, p.Version)
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
