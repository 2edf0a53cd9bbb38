package command_test

import (
	"slices"
	"testing"

	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/teamrun"
)

// TeamValues joins "--team NAME" into "--team=NAME" only where NAME is
// one of this machine's teams, and never after "--".
func TestTeamValues(t *testing.T) {
	home := t.TempDir()
	ios, _, _, _ := term.Test()
	inv := invocation(t, ios, map[string]string{"LOOM_HOME": home})
	l, err := inv.Teams()
	if err != nil {
		t.Fatal(err)
	}
	const id = "0123456789abcdef0123456789abcdef"
	if err := l.Save(&teamrun.State{ID: id, Name: "core"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want []string }{
		{[]string{"search", "--team", "core", "wombat"}, []string{"search", "--team=core", "wombat"}},
		{[]string{"search", "--team", "CORE", "wombat"}, []string{"search", "--team=CORE", "wombat"}},
		{[]string{"search", "--team", id[:8], "wombat"}, []string{"search", "--team=" + id[:8], "wombat"}},
		{[]string{"search", "--team", "wombat"}, []string{"search", "--team", "wombat"}},
		{[]string{"search", "wombat", "--team"}, []string{"search", "wombat", "--team"}},
		{[]string{"search", "--team", "--json", "core"}, []string{"search", "--team", "--json", "core"}},
		{[]string{"search", "--team", "--", "core"}, []string{"search", "--team", "--", "core"}},
		{[]string{"search", "--", "--team", "core"}, []string{"search", "--", "--team", "core"}},
		{[]string{"usage", "--team", "core", "daily"}, []string{"usage", "--team=core", "daily"}},
	} {
		if got := inv.TeamValues(c.in); !slices.Equal(got, c.want) {
			t.Errorf("TeamValues(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
