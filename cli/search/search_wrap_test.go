package search_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// At 80 columns a search hit's snippet longer than the line wraps at
// words under its own start (a hanging indent), never back to the first
// column, and no line is wider than the terminal.
func TestSearchSnippetWrapsUnderItself(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "noted"})
	prompt := "why is the flaky retry budget " + strings.Repeat("keeping the fake clock honest while the tests wait ", 4) + "so long"
	fx.MustLoom(t, "", "run", prompt)
	p := fx.StartPTYSize(t, 80, 24, "search", "flaky retry budget")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("search: exit %d:\n%s", code, p.Output())
	}
	screen := strings.Split(p.Screen(), "\n")
	at := -1
	for i, l := range screen {
		if strings.Contains(l, "#1 user") {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no hit of the prompt:\n%s", p.Screen())
	}
	var snippet []string
	for _, l := range screen[at+1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		snippet = append(snippet, l)
	}
	if len(snippet) < 2 {
		t.Fatalf("the snippet did not wrap at 80 columns:\n%s", p.Screen())
	}
	for _, l := range snippet {
		if !strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "     ") {
			t.Fatalf("a snippet line is not under the snippet's start:\n%s", p.Screen())
		}
	}
	if joined := strings.Join(strings.Fields(strings.Join(snippet, " ")), " "); !strings.Contains(joined, "keeping the fake clock honest while the tests wait keeping") {
		t.Fatalf("the wrapped snippet lost or split words:\n%s", p.Screen())
	}
}
