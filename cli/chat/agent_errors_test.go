package chat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// 500 or 429 then 200 is retried; a persistent 500 fails clearly and
// keeps the user message.
func TestAgentProviderErrors(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Status: 500}, openaitest.Reply{Text: "after a 500"})
	if r := fx.MustLoom(t, "", "run", "one"); strings.TrimSpace(r.Stdout) != "after a 500" {
		t.Fatalf("stdout = %q", r.Stdout)
	}
	fx.Srv.Enqueue(openaitest.Reply{Status: 429}, openaitest.Reply{Text: "after a 429"})
	if r := fx.MustLoom(t, "", "run", "two"); strings.TrimSpace(r.Stdout) != "after a 429" {
		t.Fatalf("stdout = %q", r.Stdout)
	}
	if n := len(fx.Srv.Requests()); n != 4 {
		t.Fatalf("provider saw %d requests, want 4 (two retried)", n)
	}
	fx.Srv.Enqueue(openaitest.Reply{Status: 500, Error: "the model is down"}, openaitest.Reply{Status: 500, Error: "the model is down"}, openaitest.Reply{Status: 500, Error: "the model is down"})
	r := fx.Loom(t, "", "run", "three")
	if r.Code != cli.ExitError || !strings.Contains(errorLine(t, r.Stderr), "500") {
		t.Fatalf("persistent 500: exit %d, stderr %q", r.Code, r.Stderr)
	}
	id := clitest.SessionOf(t, r.Stderr)
	show := fx.MustLoom(t, "", "session", "show", id, "--json")
	if !strings.Contains(show.Stdout, `"three"`) {
		t.Fatalf("the user message was not kept: %s", show.Stdout)
	}
}

// With no provider configured (and nothing on the local port), chat and
// run say how to configure one.
func TestAgentNoProvider(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Env = []string{"OLLAMA_HOST=127.0.0.1:1"}
	for _, args := range [][]string{{"run", "hello"}, {}} {
		r := fx.Loom(t, "", args...)
		if r.Code != cli.ExitError {
			t.Fatalf("loom %v: exit %d, stderr %q", args, r.Code, r.Stderr)
		}
		// A short list to copy from, not one long paragraph.
		for _, want := range []string{"\n  export OPENAI_API_KEY=", "\n  export ANTHROPIC_API_KEY=", "\n  ollama pull ", "OPENAI_BASE_URL"} {
			if !strings.Contains(r.Stderr, want) {
				t.Errorf("loom %v does not say %q:\n%s", args, want, r.Stderr)
			}
		}
		for _, l := range clitest.Lines(r.Stderr) {
			if len(l) > 80 && !strings.Contains(l, "config.toml") {
				t.Errorf("loom %v: line of %d characters:\n%s", args, len(l), l)
			}
		}
	}
	if st := fx.OpenStore(t); st != nil {
		if l, _ := st.Sessions(t.Context(), loom.SessionFilter{}); len(l) != 0 {
			t.Fatalf("a session was created without a provider")
		}
	}
}

// loom run - reads the prompt from stdin without the newline that ends
// it; the newlines inside are kept.
func TestRunPromptFromStdin(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	r := fx.MustLoom(t, "first line\nsecond line\n\n", "run", "-", "--json")
	req := fx.LastRequest(t)
	if last := req[len(req)-1]; last.Role != "user" || last.Content != "first line\nsecond line" {
		t.Fatalf("the provider received %q", last.Content)
	}
	s := clitest.ShowSession(t, fx, clitest.SessionOf(t, r.Stderr))
	if s.LastPrompt != "first line\nsecond line" {
		t.Fatalf("stored prompt %q", s.LastPrompt)
	}
}

// A replay log that cannot be written is a warning, once; the turn and
// the session are kept.
func TestReplayLogUnwritableWarns(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	// A file where the user's log directory should be: nothing can be
	// created under it, whoever runs the test.
	logs := filepath.Join(fx.Home, "state", "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logs, "local"), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := fx.MustLoom(t, "", "run", "hello")
	if n := strings.Count(r.Stderr, "loom: warning: "); n != 1 || !strings.Contains(r.Stderr, "the session is stored, but its replay log is not kept") {
		t.Fatalf("%d warnings:\n%s", n, r.Stderr)
	}
	if s := clitest.ShowSession(t, fx, clitest.SessionOf(t, r.Stderr)); s.MessageCount != 2 {
		t.Fatalf("session has %d messages", s.MessageCount)
	}
}
