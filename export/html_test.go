package export_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/export"
)

func TestWriteHTML(t *testing.T) {
	data := sample()
	hostile := text("m5", 5, loom.RoleUser, "look: <script>alert(1)</script> and <img src=x onerror=alert(2)>\n\n<img src=y onerror=alert(3)>", at(7))
	hostile.SessionID = data[0].Session.ID
	data[0].Messages = append(data[0].Messages, hostile)
	data[0].Session.Title = `Fix the "flaky" <test>`
	page := write(t, export.HTML, data)

	if !strings.HasPrefix(page, "<!doctype html>") || !strings.Contains(page, "<style>") || !strings.Contains(page, "--accent:") {
		t.Fatalf("not a page with its stylesheet inline:\n%.300s", page)
	}
	for _, want := range []string{
		"<title>Fix the &#34;flaky&#34; &lt;test&gt; · loom</title>",
		`content="default-src 'none'; style-src 'unsafe-inline'`,
		`<section class="export-session" id="session-0196a3b2-0000-7000-8000-000000000001">`,
		`<section class="export-session" id="session-0196a3b2-0000-7000-8000-000000000002">`,
		`<details class="part reasoning">`, "The retry loop races with the timer.",
		`<span class="tool-name">read_file</span>`, `badge status ok">completed</span>`, `<span class="duration">120 ms</span>`,
		// The sub-agent part and the sub-agent's head lead inside the file.
		`<a href="#session-0196a3b2-0000-7000-8000-000000000002">session 0196a3b2</a>`,
		`Sub-agent of`, `<a href="#session-0196a3b2-0000-7000-8000-000000000001">Fix the &#34;flaky&#34; &lt;test&gt;</a>`,
		`<h2>Sessions in this file</h2>`, "Usage of them all: 1,200 in · 300 out · $0.01 · 1 call",
		`<dt>Input</dt><dd>1,200</dd>`, `<dt>Cost</dt><dd>$0.01</dd>`,
		`id="m-2"`, `id="0196a3b2-0000-7000-8000-000000000002-m-1"`,
		"rate limited",
		"look: &lt;script&gt;alert(1)&lt;/script&gt; and &lt;img src=x onerror=alert(2)&gt;",
		`<p class="raw-html">&lt;img src=y onerror=alert(3)&gt;</p>`,
		"Exported from loom: 2 sessions, 6 messages.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("html lacks %s", want)
		}
	}
	// Nothing runs and nothing is fetched.
	for _, bad := range []string{"<script", "<img", "<link", "<iframe", "url(", "@import", `href="/`, "in use"} {
		if strings.Contains(page, bad) {
			t.Errorf("html holds %q", bad)
		}
	}
	if m := regexp.MustCompile(`<[^>]*\s(src|srcset|poster|data)=`).FindString(page); m != "" {
		t.Errorf("html loads something: %s", m)
	}

	// One session alone: no contents, titled by the session.
	one := write(t, export.HTML, data[1:])
	if strings.Contains(one, "Sessions in this file") || !strings.Contains(one, "<title>explore retry · loom</title>") {
		t.Errorf("one-session page:\n%.600s", one)
	}
	// Its parent is not in the file: named, not linked.
	if !strings.Contains(one, "Sub-agent of\n    session <code>0196a3b2</code>") {
		t.Errorf("parent outside the file:\n%s", one)
	}
}
