package export_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/export"
)

// An exported session whose model has no price (tokens counted, no
// cost) says its cost is unknown, in Markdown and in HTML, never $0.
func TestExportUnknownCost(t *testing.T) {
	data := sample()
	u := loom.Usage{InputTokens: 1200, OutputTokens: 300, APICalls: 1}
	data[0].Session.Usage = u
	data[0].Messages[1].Usage = u
	data[0].Messages[1].Parts[len(data[0].Messages[1].Parts)-1].Usage = &u

	md := write(t, export.Markdown, data)
	if !strings.Contains(md, "- **usage:** 1,200 in · 300 out · — · 1 call") || strings.Contains(md, "$0") {
		t.Errorf("markdown usage:\n%s", md)
	}
	page := write(t, export.HTML, data)
	for _, want := range []string{"Usage of them all: 1,200 in · 300 out · — · 1 call", `<dt>Cost</dt><dd>—</dd>`, `1,200 in · 300 out · —</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("html lacks %s", want)
		}
	}
	// The sub-agent's session, which made no model call, did cost $0.
	main := page[strings.Index(page, `id="session-`+data[0].Session.ID+`"`):strings.Index(page, `id="session-`+data[1].Session.ID+`"`)]
	if strings.Contains(main, "$0") {
		t.Errorf("html calls an unknown cost $0:\n%s", main)
	}
}
