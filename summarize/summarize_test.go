package summarize

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
)

// A model's answer becomes at most three lines of plain text, without
// list marks or blank lines, each at most MaxLineRunes.
func TestClean(t *testing.T) {
	long := strings.Repeat("é", 200)
	got := Clean("## Summary\n\n- first\tpoint\r\n* second\n\n" + long + "\nfourth")
	lines := strings.Split(got, "\n")
	if len(lines) != 3 || lines[0] != "Summary" || lines[1] != "first point" || lines[2] != "second" {
		t.Fatalf("Clean = %q", got)
	}
	got = Clean(long)
	if n := utf8.RuneCountInString(got); n != MaxLineRunes || !strings.HasSuffix(got, "…") {
		t.Fatalf("a long line: %d runes, %q", n, got)
	}
	if Clean(" \n\n- \n") != "" {
		t.Fatal("an answer of marks alone is a summary")
	}
}

// [summaries] exclude names a project, or holds its root or working
// directory: /src/api holds /src/api/pkg, not /src/api2; ~ is the home.
func TestExclude(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	z := &Summarizer{Quiet: time.Minute, Home: "/home/me", Now: func() time.Time { return now },
		Exclude: []string{"Secret", "/src/api", "~/clients/"}}
	at := now.Add(-time.Hour)
	for _, c := range []struct {
		s    loom.Session
		want string
	}{
		{loom.Session{Project: loom.Project{Name: "secret"}}, SkipExcluded},
		{loom.Session{Project: loom.Project{Name: "web", Root: "/src/api"}}, SkipExcluded},
		{loom.Session{Cwd: "/src/api/pkg"}, SkipExcluded},
		{loom.Session{Cwd: "/home/me/clients/acme"}, SkipExcluded},
		{loom.Session{Project: loom.Project{Name: "api2", Root: "/src/api2"}}, ""},
		{loom.Session{Cwd: "/home/me/clientsx"}, ""},
	} {
		c.s.UpdatedAt = at
		if got := z.Check(&c.s); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s.Project, got, c.want)
		}
	}
	if got := z.Check(&loom.Session{UpdatedAt: now}); got != SkipNotQuiet {
		t.Errorf("a session active now: %q", got)
	}
}
