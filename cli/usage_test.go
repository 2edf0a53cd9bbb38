package cli

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
)

func TestUsage(t *testing.T) {
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
