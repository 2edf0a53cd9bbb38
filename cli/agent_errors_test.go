package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/openai/openaitest"
)

// 500 or 429 then 200 is retried; a persistent 500 fails clearly and
// keeps the user message.
func TestAgentProviderErrors(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	fx.srv.Enqueue(openaitest.Reply{Status: 500}, openaitest.Reply{Text: "after a 500"})
	if r := fx.mustLoom(t, "", "run", "one"); strings.TrimSpace(r.stdout) != "after a 500" {
		t.Fatalf("stdout = %q", r.stdout)
	}
	fx.srv.Enqueue(openaitest.Reply{Status: 429}, openaitest.Reply{Text: "after a 429"})
	if r := fx.mustLoom(t, "", "run", "two"); strings.TrimSpace(r.stdout) != "after a 429" {
		t.Fatalf("stdout = %q", r.stdout)
	}
	if n := len(fx.srv.Requests()); n != 4 {
		t.Fatalf("provider saw %d requests, want 4 (two retried)", n)
	}
	fx.srv.Enqueue(openaitest.Reply{Status: 500, Error: "the model is down"}, openaitest.Reply{Status: 500, Error: "the model is down"}, openaitest.Reply{Status: 500, Error: "the model is down"})
	r := fx.loom(t, "", "run", "three")
	if r.code != ExitError || !strings.Contains(errorLine(t, r.stderr), "500") {
		t.Fatalf("persistent 500: exit %d, stderr %q", r.code, r.stderr)
	}
	id := sessionOf(t, r.stderr)
	show := fx.mustLoom(t, "", "session", "show", id, "--json")
	if !strings.Contains(show.stdout, `"three"`) {
		t.Fatalf("the user message was not kept: %s", show.stdout)
	}
}

// With no provider configured (and nothing on the local port), chat and
// run say how to configure one.
func TestAgentNoProvider(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	fx.env = []string{"OLLAMA_HOST=127.0.0.1:1"}
	for _, args := range [][]string{{"run", "hello"}, {}} {
		r := fx.loom(t, "", args...)
		if r.code != ExitError {
			t.Fatalf("loom %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		// A short list to copy from, not one long paragraph.
		for _, want := range []string{"\n  export OPENAI_API_KEY=", "\n  export ANTHROPIC_API_KEY=", "\n  ollama pull ", "OPENAI_BASE_URL"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("loom %v does not say %q:\n%s", args, want, r.stderr)
			}
		}
		for _, l := range lines(r.stderr) {
			if len(l) > 80 && !strings.Contains(l, "config.toml") {
				t.Errorf("loom %v: line of %d characters:\n%s", args, len(l), l)
			}
		}
	}
	if st := fx.openStore(t); st != nil {
		if l, _ := st.Sessions(t.Context(), loom.SessionFilter{}); len(l) != 0 {
			t.Fatalf("a session was created without a provider")
		}
	}
}

// loom run - reads the prompt from stdin without the newline that ends
// it; the newlines inside are kept.
func TestRunPromptFromStdin(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	r := fx.mustLoom(t, "first line\nsecond line\n\n", "run", "-", "--json")
	req := fx.lastRequest(t)
	if last := req[len(req)-1]; last.Role != "user" || last.Content != "first line\nsecond line" {
		t.Fatalf("the provider received %q", last.Content)
	}
	s := showSession(t, fx, sessionOf(t, r.stderr))
	if s.LastPrompt != "first line\nsecond line" {
		t.Fatalf("stored prompt %q", s.LastPrompt)
	}
}

// A replay log that cannot be written is a warning, once; the turn and
// the session are kept.
func TestReplayLogUnwritableWarns(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	// A file where the user's log directory should be: nothing can be
	// created under it, whoever runs the test.
	logs := filepath.Join(fx.home, "state", "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logs, "local"), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := fx.mustLoom(t, "", "run", "hello")
	if n := strings.Count(r.stderr, "loom: warning: "); n != 1 || !strings.Contains(r.stderr, "the session is stored, but its replay log is not kept") {
		t.Fatalf("%d warnings:\n%s", n, r.stderr)
	}
	if s := showSession(t, fx, sessionOf(t, r.stderr)); s.MessageCount != 2 {
		t.Fatalf("session has %d messages", s.MessageCount)
	}
}
