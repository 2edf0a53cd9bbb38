package usage_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/report"
)

// Every usage table fits the terminal: at 80 columns the compact layout
// leaves out the cache and total columns and says so, at 120 the blocks
// fit too, and the models column lists every model by a short name, or
// two and the number of the others, never a cut name. --wide shows every
// column, --compact leaves them out on any terminal. The real Claude
// Code sessions hold a Japanese title, which a cut once made a cell too
// wide for its column (loom usage crashed at 80 columns).
func TestUsageTablesFit(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	for _, src := range [][2]string{
		{"claude-code", filepath.Join(clitest.Samples, "claude-code")},
		{"codex", filepath.Join(clitest.Samples, "codex")},
		{"gemini", filepath.Join(clitest.Samples, "gemini")},
	} {
		dir, err := filepath.Abs(src[1])
		if err != nil {
			t.Fatal(err)
		}
		if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", src[0], dir); r.Code != 0 {
			t.Fatalf("import %s: exit %d: %s", src[0], r.Code, r.Stderr)
		}
	}
	reports := [][]string{
		{"usage"}, {"usage", "--limit", "0"}, {"usage", "daily"}, {"usage", "weekly"},
		{"usage", "monthly"}, {"usage", "daily", "--breakdown", "model"},
	}
	check := func(args []string, width int) string {
		t.Helper()
		if args[len(args)-1] != "prices" {
			args = append(args, "--tz", "UTC")
		}
		r := fx.RunWith(t, clitest.RunOpts{Tty: true, Width: width}, args...)
		if r.Code != 0 {
			t.Fatalf("%v at %d columns: exit %d: %s", args, width, r.Code, r.Stderr)
		}
		plain := ansi.Strip(r.Stdout)
		for _, l := range clitest.Lines(plain) {
			if w := ansi.StringWidth(l); w > width {
				t.Fatalf("%v: a %d-cell line on a %d-column terminal: %q\n%s", args, w, width, l, plain)
			}
		}
		return plain
	}
	for _, width := range []int{80, 120} {
		for _, args := range reports {
			out := check(args, width)
			if width == 80 && !strings.Contains(out, "--wide shows them") {
				t.Fatalf("%v at 80 columns: no line says what was left out:\n%s", args, out)
			}
		}
	}
	check([]string{"usage", "blocks"}, 120)
	// Every other report fits 80 columns too.
	for _, args := range [][]string{{"usage", "blocks"}, {"usage", "session"}, {"usage", "prices"}, {"usage", "weekly", "--breakdown", "agent"},
		{"usage", "daily", "--breakdown", "project"}, {"usage", "monthly", "--breakdown", "model"}} {
		check(args, 80)
	}
	// The insights: a calendar of 80 weeks cut to the last that fit,
	// the titles cut in their column.
	for _, width := range []int{80, 120} {
		out := check([]string{"usage", "insights", "--since", "2025-06-01", "--until", "2026-11-26"}, width)
		for _, want := range []string{"Prompts per day", "the last ", "Mon ", "Sun ", "TOOL", "Bash", "MODEL", "opus-4-6", "Longest sessions", "Costliest sessions"} {
			if !strings.Contains(out, want) {
				t.Fatalf("insights at %d columns lack %q:\n%s", width, want, out)
			}
		}
	}

	monthly := check([]string{"usage", "monthly"}, 80)
	// 2026-02 holds claude-opus-4-6 and claude-sonnet-4-5-20250929:
	// both, by short names, in a column that is not cut.
	for _, want := range []string{"INPUT", "OUTPUT", "COST", "sonnet-4 ", "opus-4-6, sonnet-4-5"} {
		if !strings.Contains(monthly, want) {
			t.Fatalf("monthly at 80 columns lacks %q:\n%s", want, monthly)
		}
	}
	for _, gone := range []string{"TOTAL TOKENS", "claude-", "…"} {
		if strings.Contains(monthly, gone) {
			t.Fatalf("monthly at 80 columns holds %q:\n%s", gone, monthly)
		}
	}

	r := fx.RunWith(t, clitest.RunOpts{Tty: true, Width: 80}, "usage", "monthly", "--wide")
	if !strings.Contains(r.Stdout, "CACHE READ") || strings.Contains(r.Stdout, "--wide shows them") {
		t.Fatalf("--wide at 80 columns:\n%s", r.Stdout)
	}
	r = fx.RunWith(t, clitest.RunOpts{Tty: true, Width: 200}, "usage", "daily", "--compact")
	if strings.Contains(r.Stdout, "CACHE READ") || !strings.Contains(r.Stdout, "COST") {
		t.Fatalf("--compact at 200 columns:\n%s", r.Stdout)
	}
	for _, args := range [][]string{{"usage", "daily", "--compact", "--wide"}, {"usage", "--compact", "--wide"}} {
		if r := fx.Run(t, args...); r.Code != 2 || !strings.Contains(r.Stderr, "cannot be used together") {
			t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
	}
}

// --order desc lists the newest period first, in every output; another
// order is a usage error.
func TestUsageOrder(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	dir, err := filepath.Abs(filepath.Join(clitest.Samples, "claude-code"))
	if err != nil {
		t.Fatal(err)
	}
	if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", "claude-code", dir); r.Code != 0 {
		t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
	}
	periods := func(args ...string) []string {
		t.Helper()
		rep := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, append([]string{"usage", "daily", "--tz", "UTC", "--json"}, args...)...))
		var out []string
		for _, r := range rep.Rows {
			out = append(out, r.Period)
		}
		return out
	}
	asc, desc := periods(), periods("--order", "desc")
	back := slices.Clone(asc)
	slices.Reverse(back)
	if len(asc) < 2 || !slices.IsSorted(asc) || !slices.Equal(desc, back) {
		t.Fatalf("asc %v, desc %v", asc, desc)
	}
	if r := fx.Run(t, "usage", "weekly", "--order", "newest"); r.Code != 2 || !strings.Contains(r.Stderr, "--order") {
		t.Fatalf("--order newest: exit %d: %s", r.Code, r.Stderr)
	}
}
