package term

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestRenderMarkdown(t *testing.T) {
	src := "# Plan\n\nUse a **fake** clock in `retry.go`, see [docs](https://example.com).\n\n- one\n- two words that wrap around the narrow width here\n\n1. first\n2. second\n\n```go\nfunc f() {}\n```\n\n> quoted\n"
	out := RenderMarkdown(src, 40)
	plain := ansi.Strip(out)
	for _, want := range []string{"# Plan", "Use a fake clock in retry.go, see docs\n(https://example.com).", "• one", "• two words that wrap around the\n  narrow width here", "1. first", "2. second", "  func f() {}", "│ quoted"} {
		if !strings.Contains(plain, want) {
			t.Fatalf("rendered text lacks %q:\n%s", want, plain)
		}
	}
	if !strings.Contains(out, "\x1b[1mfake\x1b[m") || !strings.Contains(out, "\x1b[36mretry.go\x1b[m") {
		t.Fatalf("styles missing: %q", out)
	}
	for _, line := range strings.Split(plain, "\n") {
		if len([]rune(line)) > 40 && !strings.Contains(line, "https://") {
			t.Fatalf("line wider than 40: %q", line)
		}
	}
}

func TestRenderMarkdownTable(t *testing.T) {
	src := "| name | size | note |\n|:--|--:|:-:|\n| a | 1 | x |\n| 日本語 | 200 | a very long note that cannot fit in a narrow terminal at all |\n"
	plain := ansi.Strip(RenderMarkdown(src, 40))
	want := []string{
		"name   │ size │          note\n",
		"───────┼──────┼",
		"a      │    1 │",
		"日本語 │  200 │ a very long",
	}
	for _, w := range want {
		if !strings.Contains(plain, w) {
			t.Fatalf("table lacks %q:\n%s", w, plain)
		}
	}
	for _, line := range strings.Split(strings.TrimRight(plain, "\n"), "\n") {
		if ansi.StringWidth(line) > 38 {
			t.Fatalf("line wider than the terminal: %q (%d cells)", line, ansi.StringWidth(line))
		}
	}
	if !strings.Contains(plain, "…") {
		t.Fatalf("a cut cell has no ellipsis:\n%s", plain)
	}
}
