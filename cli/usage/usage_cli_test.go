package usage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	rep := clitest.DecodeJSON[loom.UsageReport](t, fx.MustRun(t, "usage", "--json"))
	if rep.Total.InputTokens != 1200+100 || rep.Total.APICalls != 2 { // the fork's copied history is not counted again
		t.Fatalf("total = %+v", rep.Total)
	}
	if len(rep.ByModel) != 2 || len(rep.ByProject) < 2 {
		t.Fatalf("by model %d, by project %d", len(rep.ByModel), len(rep.ByProject))
	}
	one := clitest.DecodeJSON[loom.UsageReport](t, fx.MustRun(t, "usage", "explore retry", "--json"))
	if len(one.BySession) != 1 || one.Total.InputTokens != 100 {
		t.Fatalf("usage of one session = %+v", one)
	}
	out := fx.MustRun(t, "usage")
	if !strings.HasPrefix(out, "total\t") || !strings.Contains(out, "model\topenai:gpt-x\tgpt-x\t") {
		t.Fatalf("piped usage:\n%s", out)
	}
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "usage", "--limit", "1")
	plain := ansi.Strip(r.Stdout)
	for _, want := range []string{"Total: 1,300 in", "SESSION", "PROJECT", "MODEL", "gpt-x-mini", "more (--limit 0 lists all)"} {
		if !strings.Contains(plain, want) {
			t.Fatalf("terminal usage lacks %q:\n%s", want, plain)
		}
	}
}

// Counts on a terminal read as counts: 1,300 calls, never 1300 calls.
func TestUsageCountsHaveThousandsSeparators(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	s := &loom.Session{UserID: "local", Key: "cli:busy", Project: fx.Proj, Title: "Busy"}
	a := clitest.TextMsg(loom.RoleAssistant, "done", clitest.Base.Add(time.Minute))
	a.Usage = loom.Usage{InputTokens: 2_000_000, OutputTokens: 4000, APICalls: 1300, CostUSD: 1}
	if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "go", clitest.Base), a); err != nil {
		t.Fatal(err)
	}
	st.Close()
	plain := ansi.Strip(fx.RunWith(t, clitest.RunOpts{Tty: true}, "usage").Stdout)
	if !strings.Contains(plain, "1,300 calls") || strings.Contains(plain, "1300") {
		t.Fatalf("terminal usage writes calls without separators:\n%s", plain)
	}
}

// A date that is not one is refused with an example date near now, not
// one from a past year.
func TestSinceErrorExampleIsRecent(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	r := fx.Exec(t, "", "session", "import", "--from", "codex", fx.Project, "--since", "last tuesday")
	want := time.Now().AddDate(0, 0, -7).Format("2006-01-02")
	if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, `"last tuesday" is not a date (`+want+`)`) {
		t.Fatalf("exit %d, stderr %q; want the example date %s", r.Code, r.Stderr, want)
	}
}
