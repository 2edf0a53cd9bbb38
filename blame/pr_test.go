package blame

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestPullRequest: a branch where two agents and a human add lines
// (and a human changes one agent's line) gives exact counts by kind,
// agent and model, the sessions behind them and the files; lines the
// base already had are not the pull request's.
func TestPullRequest(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# shop\n\nA small shop.\n")
	r.write("cart.go", "package shop\n\n// Cart holds the items.\ntype Cart struct {\n\tItems []Item\n}\n")
	r.commit("base")
	r.git("checkout", "-q", "-b", "feature")
	// Agent one (Claude Code) writes a file of 6 lines.
	r.agentWrite("s1", "total.go", "package shop\n\n// Total sums the prices.\nfunc Total(c Cart) int {\n\treturn sumPrices(c.Items)\n}\n")
	r.commit("total")
	// Agent two (Codex) adds 4 lines to cart.go.
	r.agentEdit("s2", "codex", "cart.go", "\tItems []Item\n}\n", "\tItems []Item\n}\n\n// Empty says whether the cart is empty.\nfunc (c Cart) Empty() bool { return len(c.Items) == 0 }\n")
	r.commit("empty")
	r.tick(time.Hour)
	// A human changes one of agent one's lines and adds 2 lines.
	r.write("total.go", strings.Replace(r.read("total.go"), "return sumPrices(c.Items)", "return sumPrices(c.Items) + shippingCost", 1))
	r.write("README.md", r.read("README.md")+"\nTotals include shipping.\n")
	r.commit("shipping")

	b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local"}
	pr, err := b.PullRequest(context.Background(), Git{Dir: r.dir}, "main..feature")
	if err != nil {
		t.Fatal(err)
	}
	// total.go: 6 lines (5 agent, 1 mixed); cart.go: 3 added lines of
	// agent two (the blank line, the comment, the function) — the
	// edit's repeated context is the base's; README.md: 2 human lines.
	want := Tally{Total: 11, Agent: 8, Mixed: 1, Human: 2}
	if pr.Lines != want || pr.Commits != 3 {
		t.Errorf("lines %+v over %d commits, want %+v over 3", pr.Lines, pr.Commits, want)
	}
	if got := pr.ByAgent["claude-code"]; got.Agent != 5 || got.Mixed != 1 {
		t.Errorf("claude-code: %+v", got)
	}
	if got := pr.ByAgent["codex"]; got.Agent != 3 || got.Mixed != 0 {
		t.Errorf("codex: %+v", got)
	}
	if got := pr.ByModel["m-s1"]; got.Agent != 5 {
		t.Errorf("model m-s1: %+v", got)
	}
	if len(pr.Sessions) != 2 || pr.Sessions[0].SessionID != r.ses["s1"].ID || pr.Sessions[0].Lines != 5 || pr.Sessions[0].Mixed != 1 ||
		pr.Sessions[1].SessionID != r.ses["s2"].ID || pr.Sessions[1].Lines != 3 {
		t.Errorf("sessions %+v", pr.Sessions)
	}
	files := map[string]Tally{}
	for _, f := range pr.Files {
		files[f.Path] = f.Lines
	}
	if files["README.md"] != (Tally{Total: 2, Human: 2}) || files["cart.go"].Agent != 3 || files["total.go"].Total != 6 {
		t.Errorf("files %+v", pr.Files)
	}
	if s := pr.Share(pr.Lines); s < 8.5/11-0.001 || s > 8.5/11+0.001 {
		t.Errorf("share %.3f, want 8.5/11", s)
	}
	if _, err := b.PullRequest(context.Background(), Git{Dir: r.dir}, ""); err == nil || !strings.Contains(err.Error(), "no upstream") {
		t.Errorf("a branch without upstream: %v", err)
	}
}
