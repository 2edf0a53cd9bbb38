package export_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/export"
)

func TestWriteMarkdown(t *testing.T) {
	md := write(t, export.Markdown, sample())
	for _, want := range []string{
		"# Fix the flaky test\n",
		"- **id:** `0196a3b2-0000-7000-8000-000000000001`",
		"- **project:** api (`/src/api`)",
		"- **model:** openai:gpt-x",
		"- **messages:** 4 in 2 turns",
		"- **usage:** 1,200 in · 300 out · $0.01 · 1 call",
		"## 1. user · 2025-05-01T10:00:00.000Z",
		"## 2. assistant (gpt-x) · 2025-05-01T10:01:00.000Z",
		"<details><summary>Thinking</summary>\n\nThe retry loop races with the timer.\n\n</details>",
		"**Tool `read_file`** · completed · 120ms · retry\\_test.go",
		"Input:\n\n```json\n{\n  \"path\": \"retry_test.go\"\n}\n```",
		"Output:\n\n```\npackage retry\n```",
		"**File** `retry_test.go` (text/x-go) <file:///src/api/retry_test.go>",
		"**Sub-agent** `explore` → session `0196a3b2-0000-7000-8000-000000000002`",
		"**Error:** rate limited",
		"---\n\n# Sub-agent session: explore retry",
		"- **parent:** `0196a3b2-0000-7000-8000-000000000001`",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}
