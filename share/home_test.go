package share_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/share"
)

// The home directory of the user running loom is hidden whatever its
// path: /root (whose name is also a word, kept elsewhere), a home
// outside /home and /Users ($HOME moved for a day), not only
// /home/NAME; a path that only starts with the same letters is left
// alone.
func TestHiderHidesTheRealHome(t *testing.T) {
	for _, home := range []string{"/root", filepath.Join(t.TempDir(), "dayhome")} {
		t.Run(home, func(t *testing.T) {
			t.Setenv("HOME", home)
			h := share.NewHider("")
			in := "Imported from " + home + "/.claude/projects/-x/1.jsonl; cd " + home + "; ls " + home + "fs/etc; the root cause"
			got, n := h.Hide(in)
			want := "Imported from ~/.claude/projects/-x/1.jsonl; cd ~; ls " + home + "fs/etc; the root cause"
			if got != want || n != 2 {
				t.Errorf("Hide(%q) = %q, %d; want %q, 2", in, got, n, want)
			}
			if strings.Contains(got, "/.claude") && strings.Contains(got, home+"/") {
				t.Errorf("the home %s survives: %q", home, got)
			}
		})
	}
}
