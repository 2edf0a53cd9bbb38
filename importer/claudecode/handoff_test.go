package claudecode

import (
	"strings"
	"testing"
)

// TestProjectSlug: the directory names Claude Code 2.1.330 gives working
// directories (the expected values are its own function's, run in
// Node): every UTF-16 code unit but an ASCII letter or digit is '-', and
// a name over 200 characters is cut and followed by a hash.
func TestProjectSlug(t *testing.T) {
	long := "/home/me/src/" + strings.Repeat("very-long-directory-name/", 10) + "api"
	for _, c := range []struct{ dir, want string }{
		{"/tmp/demo/src/api", "-tmp-demo-src-api"},
		{"/home/me/my_project.v2", "-home-me-my-project-v2"},
		{"/tmp/émoji😀/x", "-tmp--moji---x"},
		{long, "-home-me-src-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-di-df747t"},
	} {
		if got := ProjectSlug(c.dir); got != c.want {
			t.Errorf("ProjectSlug(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
}
