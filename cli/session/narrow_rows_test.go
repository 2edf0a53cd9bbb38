package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// On a 100-column terminal, cells cut to fit keep what tells rows apart:
// a session and one whose title ends " (rewound)" stay two titles in
// session list, and two models that differ at their end stay two models
// in usage.
func TestCutCellsKeepRowsApartAt100Columns(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	title := "hello there, please answer the question about the retry budget of the flaky payment tests"
	for i, s := range []struct{ title, model string }{
		{title, "claude-sonnet-4-5-20250929-with-a-long-context-window-a"},
		{title + " (rewound)", "claude-sonnet-4-5-20250929-with-a-long-context-window-b"},
	} {
		when := at.Add(time.Duration(i) * time.Minute)
		reply := clitest.TextMsg(loom.RoleAssistant, "an answer", when.Add(time.Second))
		reply.Model, reply.Provider = s.model, "anthropic"
		reply.Usage = loom.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 0.5}
		if err := st.Append(context.Background(), &loom.Session{ID: clitest.IDAt(when), UserID: "local", Key: "cli:cut" + s.model[len(s.model)-1:], Project: fx.Proj, Title: s.title},
			clitest.TextMsg(loom.RoleUser, "a question", when), reply); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"session", "list"}, []string{"(rewound)"}},
		{[]string{"usage"}, []string{"window-a", "window-b"}},
	} {
		p := fx.StartPTYSize(t, 100, 40, c.args...)
		if code := p.Wait(t); code != 0 {
			t.Fatalf("loom %s: exit %d:\n%s", strings.Join(c.args, " "), code, p.Output())
		}
		for _, w := range c.want {
			if !strings.Contains(p.Screen(), w) {
				t.Errorf("loom %s at 100 columns cut away %q, which tells its rows apart:\n%s", strings.Join(c.args, " "), w, p.Screen())
			}
		}
	}
}
