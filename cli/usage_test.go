package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	rep := decodeJSON[loom.UsageReport](t, fx.mustRun(t, "usage", "--json"))
	if rep.Total.InputTokens != 1200+100 || rep.Total.APICalls != 2 { // the fork's copied history is not counted again
		t.Fatalf("total = %+v", rep.Total)
	}
	if len(rep.ByModel) != 2 || len(rep.ByProject) < 2 {
		t.Fatalf("by model %d, by project %d", len(rep.ByModel), len(rep.ByProject))
	}
	one := decodeJSON[loom.UsageReport](t, fx.mustRun(t, "usage", "explore retry", "--json"))
	if len(one.BySession) != 1 || one.Total.InputTokens != 100 {
		t.Fatalf("usage of one session = %+v", one)
	}
	out := fx.mustRun(t, "usage")
	if !strings.HasPrefix(out, "total\t") || !strings.Contains(out, "model\topenai:gpt-x\tgpt-x\t") {
		t.Fatalf("piped usage:\n%s", out)
	}
	r := fx.runWith(t, runOpts{tty: true}, "usage", "--limit", "1")
	plain := ansi.Strip(r.stdout)
	for _, want := range []string{"Total: 1,300 in", "SESSION", "PROJECT", "MODEL", "gpt-x-mini", "more (--limit 0 lists all)"} {
		if !strings.Contains(plain, want) {
			t.Fatalf("terminal usage lacks %q:\n%s", want, plain)
		}
	}
}

// Counts on a terminal read as counts: 1,300 calls, never 1300 calls.
func TestUsageCountsHaveThousandsSeparators(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	st := fx.openStore(t)
	s := &loom.Session{UserID: "local", Key: "cli:busy", Project: fx.proj, Title: "Busy"}
	a := textMsg(loom.RoleAssistant, "done", base.Add(time.Minute))
	a.Usage = loom.Usage{InputTokens: 2_000_000, OutputTokens: 4000, APICalls: 1300, CostUSD: 1}
	if err := st.Append(context.Background(), s, textMsg(loom.RoleUser, "go", base), a); err != nil {
		t.Fatal(err)
	}
	st.Close()
	plain := ansi.Strip(fx.runWith(t, runOpts{tty: true}, "usage").stdout)
	if !strings.Contains(plain, "1,300 calls") || strings.Contains(plain, "1300") {
		t.Fatalf("terminal usage writes calls without separators:\n%s", plain)
	}
}

// A date that is not one is refused with an example date near now, not
// one from a past year.
func TestSinceErrorExampleIsRecent(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	r := fx.exec(t, "", "session", "import", "--from", "codex", fx.project, "--since", "last tuesday")
	want := time.Now().AddDate(0, 0, -7).Format("2006-01-02")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `"last tuesday" is not a date (`+want+`)`) {
		t.Fatalf("exit %d, stderr %q; want the example date %s", r.code, r.stderr, want)
	}
}
