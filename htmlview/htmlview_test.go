package htmlview_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/htmlview"
)

// A message is data: the HTML it holds is shown as text wherever it
// stands in the Markdown, and links lead nowhere dangerous.
func TestMarkdownShowsHTMLAsText(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"inline script", "Why? <script>alert(1)</script> done", []string{"Why? &lt;script&gt;alert(1)&lt;/script&gt; done"}},
		{"inline img", "see <img src=x onerror=alert(1)>", []string{"see &lt;img src=x onerror=alert(1)&gt;"}},
		{"block script", "<script>\nalert(1)\n</script>", []string{`<p class="raw-html">&lt;script&gt;` + "\nalert(1)\n" + `&lt;/script&gt;</p>`}},
		{"block img", "<img src=x onerror=alert(1)>\n\nafter", []string{`<p class="raw-html">&lt;img src=x onerror=alert(1)&gt;</p>`, "<p>after</p>"}},
		{"comment", "<!-- hidden -->", []string{"&lt;!-- hidden --&gt;"}},
		{"code keeps its text", "`<b>` and\n\n```\n<i>x</i>\n```", []string{"<code>&lt;b&gt;</code>", "<code>&lt;i&gt;x&lt;/i&gt;\n</code>"}},
		{"javascript link", "[a trap](javascript:alert(1))", []string{`<a href="">a trap</a>`}},
		{"markdown still renders", "**bold** and [docs](https://example.com)", []string{"<strong>bold</strong>", `<a href="https://example.com">docs</a>`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(htmlview.Markdown(tc.text))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("Markdown(%q) = %q, want it to contain %q", tc.text, got, w)
				}
			}
			for _, bad := range []string{"<script", "<img", "<!--", "javascript:"} {
				if strings.Contains(got, bad) {
					t.Errorf("Markdown(%q) = %q holds %q", tc.text, got, bad)
				}
			}
		})
	}
}

// The shared templates draw a message with its parts, and their links go
// where the page's functions say.
func TestTemplates(t *testing.T) {
	m := &loom.Message{SessionID: "s1", Seq: 3, Role: loom.RoleAssistant, Parts: []loom.Part{
		{Type: loom.PartReasoning, Text: "thinking"},
		{Type: loom.PartTool, Name: "read_file", Status: loom.ToolError, Error: "<b>no</b>"},
		{Type: loom.PartAgent, Name: "explore", SessionID: "0196a3b2-0000-7000-8000-000000000002"},
	}}
	var b bytes.Buffer
	if err := htmlview.Templates().ExecuteTemplate(&b, "message", m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="m-3"`, `<details class="part reasoning">`, `badge status err">error`, "&lt;b&gt;no&lt;/b&gt;", `<a href="/s/0196a3b2-0000-7000-8000-000000000002">session 0196a3b2</a>`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("message lacks %q:\n%s", want, b.String())
		}
	}

	b.Reset()
	tpl := htmlview.Templates().Funcs(map[string]any{
		"sessionHref": func(string) string { return "" },
		"msgAnchor":   func(m *loom.Message) string { return m.SessionID + "-m" },
	})
	if err := tpl.ExecuteTemplate(&b, "message", m); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, `id="s1-m"`) || strings.Contains(s, "/s/") || !strings.Contains(s, "session <code>0196a3b2</code>") {
		t.Errorf("replaced link functions were not used:\n%s", s)
	}
}

// A tool call's start of result is its first lines, each cut, with the
// count of the others; its error when it has no output; nothing when it
// has neither. Its input is the line a terminal shows, unless the title
// says the same.
func TestToolPeekAndInput(t *testing.T) {
	long := strings.Repeat("x", 300)
	p := loom.Part{Type: loom.PartTool, Name: "Bash", Input: []byte(`{"command":"go test ./...","description":"Run the tests"}`),
		Output: []byte(`"\nok  \tloom\t0.1s\n` + long + `\nthree\nfour\nfive\nsix\n"`)}
	if got := htmlview.ToolInput(p); got != "$ go test ./..." {
		t.Errorf("input %q", got)
	}
	pk := htmlview.ToolPeek(p)
	if pk == nil || pk.More != 2 || pk.Err || !strings.HasPrefix(pk.Text, "ok  \tloom\t0.1s\n"+strings.Repeat("x", htmlview.PeekRunes-1)+"…\nthree\nfour") {
		t.Errorf("peek %+v", pk)
	}
	p = loom.Part{Type: loom.PartTool, Name: "Read", Title: "main.go", Input: []byte(`{"path":"main.go"}`), Status: loom.ToolError, Error: "no such file"}
	if got := htmlview.ToolInput(p); got != "" {
		t.Errorf("input %q said again after the title", got)
	}
	if pk := htmlview.ToolPeek(p); pk == nil || pk.Text != "no such file" || !pk.Err {
		t.Errorf("peek of an error %+v", pk)
	}
	if pk := htmlview.ToolPeek(loom.Part{Type: loom.PartTool, Output: []byte(`null`)}); pk != nil {
		t.Errorf("peek of nothing %+v", pk)
	}
}

// What an agent was told (a system message) is drawn folded: a summary
// line of its start, the text inside a closed <details>, so that the
// page of a one-prompt session is the prompt and the reply.
func TestInstructionsFolded(t *testing.T) {
	text := "You are a coding agent.\n" + strings.Repeat("A rule of the system prompt, one of many.\n", 300)
	m := &loom.Message{SessionID: "s1", Seq: 1, Role: loom.RoleSystem, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	var b bytes.Buffer
	if err := htmlview.Templates().ExecuteTemplate(&b, "message", m); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	open, body, ok := strings.Cut(page, `<details class="part instructions">`)
	if !ok || strings.Contains(open, "A rule of") || !strings.Contains(body, "<summary>You are a coding agent. A rule of the system prompt") {
		t.Fatalf("a system message is not folded:\n%.1500s", page)
	}
	summary, _, _ := strings.Cut(body, "</summary>")
	if n := len([]rune(summary)); n > 120 {
		t.Errorf("the summary line is %d characters: %q", n, summary)
	}
	if strings.Count(body, "A rule of the system prompt") < 300 {
		t.Errorf("the folded text is not all there")
	}
}
