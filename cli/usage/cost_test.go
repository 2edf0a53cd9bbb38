package usage_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A session on a model the price table does not know (tokens counted,
// cost 0) reads as of unknown cost in session show and loom usage, on a
// terminal and piped, never as free; session show --json and MCP's
// structured content (what Codex's model reads) say cost_usd null.
func TestUnknownCostIsNotFree(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	u := loom.Usage{InputTokens: 54, OutputTokens: 212, CacheReadTokens: 88231, CacheWriteTokens: 17696, APICalls: 4}
	s := &loom.Session{ID: clitest.IDAt(clitest.Base), UserID: "local", Key: "cli:api", Project: fx.Proj, Cwd: fx.Project, Title: "On a model without a price",
		Model: "aide-gpt-5", Provider: "openai"}
	if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "Hello?", clitest.Base),
		&loom.Message{Role: loom.RoleAssistant, Model: "aide-gpt-5", Provider: "openai", Usage: u, CreatedAt: clitest.Base,
			Parts: []loom.Part{{Type: loom.PartText, Text: "Hi."}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	show := fx.MustRun(t, "session", "show", s.ID)
	if !strings.Contains(show, "usage:    54 in · 212 out · 88,231 cache read, 17,696 cache write · — · 4 calls") || strings.Contains(show, "$0") {
		t.Errorf("session show:\n%s", show)
	}

	term := ansi.Strip(fx.RunWith(t, clitest.RunOpts{Tty: true}, "usage").Stdout)
	if !strings.Contains(term, "Total: 54 in · 212 out · 88,231 cache read, 17,696 cache write · — · 4 calls") || strings.Contains(term, "$0") {
		t.Errorf("loom usage on a terminal:\n%s", term)
	}
	for _, line := range clitest.Lines(term) {
		if strings.Contains(line, "aide-gpt-5") && !strings.HasSuffix(strings.TrimSpace(line), "—") {
			t.Errorf("the model's row does not end with an unknown cost: %q", line)
		}
	}
	piped := fx.MustRun(t, "usage")
	for _, line := range clitest.Lines(piped) {
		if !strings.HasSuffix(line, "\t—") {
			t.Errorf("piped usage row without an unknown cost: %q", line)
		}
	}

	var shown struct {
		Session  struct{ Usage map[string]any }
		Messages []struct{ Usage map[string]any }
	}
	if err := json.Unmarshal([]byte(fx.MustRun(t, "session", "show", s.ID, "--json")), &shown); err != nil {
		t.Fatal(err)
	}
	if c, ok := shown.Session.Usage["cost_usd"]; !ok || c != nil || shown.Messages[1].Usage["cost_usd"] != nil || shown.Messages[0].Usage["cost_usd"] != 0.0 {
		t.Errorf("session show --json: session usage %v, messages %v; want cost_usd null where tokens were counted", shown.Session.Usage, shown.Messages)
	}
	c := clitest.MustCall(t, clitest.ConnectStdio(t, fx), "read_session", map[string]any{"ref": s.ID})
	if u := c.Data["session"].(map[string]any)["usage"].(map[string]any); u["cost_usd"] != nil || u["input_tokens"] != 54.0 {
		t.Errorf("read_session's structured content: usage %v", u)
	}

	rep := clitest.DecodeJSON[loom.UsageReport](t, fx.MustRun(t, "usage", "--json"))
	if rep.Total.CostUSD != 0 || rep.Total.InputTokens != 54 {
		t.Errorf("usage --json total: %+v", rep.Total)
	}
}
