package server_test

import (
	"io"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// A session whose model has no price (tokens counted, no cost) shows its
// cost as unknown on the dashboard, never as $0: in the sessions table,
// its usage panel, its messages and their steps. A priced session keeps
// its cost.
func TestDashboardUnknownCost(t *testing.T) {
	e := newEnv(t)
	u := loom.Usage{InputTokens: 54, OutputTokens: 212, CacheReadTokens: 88231, APICalls: 1}
	unpriced := e.seed(&loom.Session{UserID: "alice", Key: "http:unpriced", Title: "On a model without a price", Model: "llama3.2", Provider: "openai"},
		userMsg("Hello?"),
		&loom.Message{Role: loom.RoleAssistant, Model: "llama3.2", Provider: "openai", Usage: u,
			// Two model calls, so that each step has its line.
			Parts: []loom.Part{{Type: loom.PartStepStart}, {Type: loom.PartText, Text: "Hi."}, {Type: loom.PartStepFinish, Usage: &u},
				{Type: loom.PartStepStart}, {Type: loom.PartStepFinish, Usage: &u}}})
	e.seed(&loom.Session{UserID: "alice", Key: "http:priced", Title: "On a priced model", Model: "gpt-4o-mini", Provider: "openai"},
		userMsg("Hello?"),
		&loom.Message{Role: loom.RoleAssistant, Model: "gpt-4o-mini", Provider: "openai", Usage: loom.Usage{InputTokens: 1000, OutputTokens: 100, CostUSD: 0.0021, APICalls: 1},
			Parts: []loom.Part{{Type: loom.PartText, Text: "Hi."}}})

	get := func(path string) string {
		t.Helper()
		resp := e.send("GET", path, "", nil, cookieOf(e.alice))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}

	list := get("/")
	row := list[strings.Index(list, "On a model without a price"):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, `<td class="num col-cost">—</td>`) || strings.Contains(row, "$0") {
		t.Errorf("the sessions table shows the unpriced session's cost as:\n%s", row)
	}
	if !strings.Contains(list, `<td class="num col-cost">$0.0021</td>`) {
		t.Errorf("the sessions table lost the priced session's cost")
	}

	page := get("/s/" + unpriced.ID)
	for _, want := range []string{`<dt>Cost</dt><dd>—</dd>`, `54 in · 212 out · —</span>`, `88,231 cached · —</div>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the session page lacks %s", want)
		}
	}
	if strings.Contains(page, "$0") {
		t.Errorf("the session page calls an unknown cost $0")
	}
}
