package usage_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/report"
)

// loom usage session has one row per session, the latest used first
// (--order asc the other way), each with its title and models; its
// table fits 80 columns; --json names each session.
func TestUsageSession(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	dir := filepath.Join(fx.Home, ".claude", "projects")
	clitest.CopyTree(t, filepath.Join(clitest.Samples, "claude-code"), dir)
	fx.MustExec(t, "session", "import", "--from", "claude-code")
	// A Codex session of a model without a price, named under the
	// tables.
	codex, err := filepath.Abs(filepath.Join(clitest.Samples, "codex", "vibecodingtracker-codex.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", "codex", codex); r.Code != 0 {
		t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
	}

	rep := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, "usage", "session", "--tz", "UTC", "--json", "--no-import"))
	daily := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, "usage", "daily", "--tz", "UTC", "--json", "--no-import"))
	if rep.By != report.Session || len(rep.Rows) < 10 || rep.Total.Cost() != daily.Total.Cost() || rep.Total.TotalTokens != daily.Total.TotalTokens {
		t.Fatalf("%d sessions, total %+v; daily total %+v", len(rep.Rows), rep.Total, daily.Total)
	}
	seen := map[string]bool{}
	for i, r := range rep.Rows {
		if seen[r.Period] || len(r.Period) != 36 || r.Title == "" || len(r.Models) == 0 {
			t.Fatalf("row %d: %+v", i, r)
		}
		seen[r.Period] = true
		if i > 0 && r.End.After(rep.Rows[i-1].End) {
			t.Fatalf("row %d used %v, after the row before (%v): want the latest first", i, r.End, rep.Rows[i-1].End)
		}
	}
	asc := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, "usage", "session", "--tz", "UTC", "--json", "--no-import", "--order", "asc"))
	if asc.Rows[0].Period != rep.Rows[len(rep.Rows)-1].Period {
		t.Fatalf("--order asc starts with %s, want %s", asc.Rows[0].Period, rep.Rows[len(rep.Rows)-1].Period)
	}

	for _, width := range []int{80, 120} {
		for _, by := range []string{"daily", "monthly"} {
			r := fx.RunWith(t, clitest.RunOpts{Tty: true, Width: width}, "usage", by, "--tz", "UTC", "--no-import")
			plain := ansi.Strip(r.Stdout)
			for _, l := range strings.Split(strings.TrimRight(plain, "\n"), "\n") {
				if n := ansi.StringWidth(l); n > width {
					t.Fatalf("usage %s: a line of %d columns at %d:\n%s", by, n, width, plain)
				}
			}
			if !strings.Contains(plain, "unpriced: aide-gpt-5") {
				t.Fatalf("usage %s names no unpriced model:\n%s", by, plain)
			}
		}
		r := fx.RunWith(t, clitest.RunOpts{Tty: true, Width: width}, "usage", "session", "--tz", "UTC", "--no-import", "--locale", "de-DE")
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		plain := ansi.Strip(r.Stdout)
		for _, l := range strings.Split(strings.TrimRight(plain, "\n"), "\n") {
			if n := ansi.StringWidth(l); n > width {
				t.Fatalf("a line of %d columns at %d:\n%s", n, width, plain)
			}
		}
		// The newest session first, its last use as de-DE writes dates.
		lines := strings.Split(plain, "\n")
		if !strings.HasPrefix(lines[0], "SESSION") || !strings.Contains(lines[1], "11.02.2026") || !strings.Contains(plain, "19.09.2025") {
			t.Fatalf("at %d columns:\n%s", width, r.Stdout)
		}
	}
	if r := fx.Run(t, "usage", "session", "--locale", "xx-YY", "--no-import"); r.Code != 2 || !strings.Contains(r.Stderr, "--locale") {
		t.Fatalf("an unknown locale: exit %d: %s", r.Code, r.Stderr)
	}
}

// --start-of-week cuts weeks from another day than Monday, naming each
// by its first day; an unknown day is a usage error.
func TestUsageStartOfWeek(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	p := filepath.Join(t.TempDir(), "5b1f3c2e-8d4a-4f6b-9c7e-2a1d0e9f8b7c.jsonl")
	// Thursday 2025-05-01 and, moved, Sunday 2025-05-04.
	lines := strings.Replace(oneHourLines, "2025-05-01T10:01:09", "2025-05-04T10:01:09", 1)
	if err := os.WriteFile(p, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", "claude-code", p); r.Code != 0 {
		t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
	}
	periods := func(args ...string) []string {
		t.Helper()
		rep := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, append([]string{"usage", "weekly", "--tz", "UTC", "--json", "--no-import"}, args...)...))
		var out []string
		for _, r := range rep.Rows {
			out = append(out, r.Period+" "+r.Start.Weekday().String())
		}
		return out
	}
	if got := strings.Join(periods(), ", "); got != "2025-W18 Monday" {
		t.Fatalf("ISO weeks: %s", got)
	}
	if got := strings.Join(periods("--start-of-week", "sunday"), ", "); got != "2025-04-27 Sunday, 2025-05-04 Sunday" {
		t.Fatalf("weeks from Sunday: %s", got)
	}
	if got := strings.Join(periods("--start-of-week", "fri"), ", "); got != "2025-04-25 Friday, 2025-05-02 Friday" {
		t.Fatalf("weeks from Friday: %s", got)
	}
	if r := fx.Run(t, "usage", "weekly", "--start-of-week", "someday", "--no-import"); r.Code != 2 || !strings.Contains(r.Stderr, "--start-of-week") {
		t.Fatalf("an unknown day: exit %d: %s", r.Code, r.Stderr)
	}
}

// A Claude Code sub-agent that worked in a subfolder of its parent's
// directory is its parent's work: same project, in every report.
func TestUsageSubagentInSubfolder(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	const id = "258c7280-ae70-4798-800f-63464d01a85d"
	src := filepath.Join(clitest.Samples, "claude-code", "spotter")
	dst := filepath.Join(fx.Home, ".claude", "projects", "-home-USER-projects-spotter-worktrees-spotter-gqc")
	clitest.CopyTree(t, filepath.Join(src, id), filepath.Join(dst, id))
	b, err := os.ReadFile(filepath.Join(src, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, id+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dst, id, "subagents", "agent-a881341.jsonl")
	b, err = os.ReadFile(sub)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.ReplaceAll(string(b), `"cwd":"/home/USER/projects/spotter-worktrees/spotter-gqc"`, `"cwd":"/home/USER/projects/spotter-worktrees/spotter-gqc/internal/hooks"`)
	if moved == string(b) {
		t.Fatal("the sub-agent's file names no cwd to move")
	}
	if err := os.WriteFile(sub, []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.MustExec(t, "session", "import", "--from", "claude-code")

	u := clitest.DecodeJSON[loom.UsageReport](t, fx.MustRun(t, "usage", "--json", "--no-import"))
	if len(u.ByProject) != 1 || u.ByProject[0].Name != "spotter-gqc" || u.ByProject[0].Sessions < 2 {
		t.Fatalf("projects %+v", u.ByProject)
	}
	rep := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, "usage", "daily", "--breakdown", "project", "--json", "--no-import"))
	for _, r := range rep.Rows {
		for _, p := range r.Breakdown {
			if p.Name != "spotter-gqc" {
				t.Fatalf("%s: project %q", r.Period, p.Name)
			}
		}
	}
}
