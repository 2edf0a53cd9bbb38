package importer

import (
	"net/url"
	"path/filepath"
	"strings"
)

// FileURIPath is the path a file:// URI names, as tools that run in an
// editor record a workspace (file:///home/me/proj,
// file:///c%3A/Users/me/proj on Windows); anything else is returned as
// it is, a path already.
func FileURIPath(w string) string {
	if !strings.HasPrefix(w, "file://") {
		return w
	}
	u, err := url.Parse(w)
	if err != nil {
		return w
	}
	p := u.Path
	if len(p) > 2 && p[0] == '/' && p[2] == ':' {
		// file:///c:/Users/… on Windows.
		p = p[1:]
	}
	return filepath.FromSlash(p)
}
