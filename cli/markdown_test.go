package cli

import (
	"strings"
	"testing"
)

func TestRenderMarkdown(t *testing.T) {
	src := "# Plan\n\nUse a **fake** clock in `retry.go`, see [docs](https://example.com).\n\n- one\n- two words that wrap around the narrow width here\n\n1. first\n2. second\n\n```go\nfunc f() {}\n```\n\n> quoted\n"
	out, ok := renderMarkdown(src, 40)
	if !ok {
		t.Fatal("not rendered")
	}
	plain := stripANSI(out)
	for _, want := range []string{"# Plan", "Use a fake clock in retry.go, see docs\n(https://example.com).", "• one", "• two words that wrap around the\n  narrow width here", "1. first", "2. second", "  func f() {}", "│ quoted"} {
		if !strings.Contains(plain, want) {
			t.Fatalf("rendered text lacks %q:\n%s", want, plain)
		}
	}
	if !strings.Contains(out, ansiBold+"fake"+ansiReset) || !strings.Contains(out, ansiCyan+"retry.go"+ansiReset) {
		t.Fatalf("styles missing: %q", out)
	}
	for _, line := range strings.Split(plain, "\n") {
		if len([]rune(line)) > 40 && !strings.Contains(line, "https://") {
			t.Fatalf("line wider than 40: %q", line)
		}
	}
}
