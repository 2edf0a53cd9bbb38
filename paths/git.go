package paths

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// GitBranch returns the branch checked out in the git work tree that
// holds dir: "HEAD" when it is detached, "" outside a work tree or when
// it cannot be read. Like DetectProject it reads files and never runs
// git: .git is a directory in a clone and a file naming the real one in
// worktrees and submodules.
func GitBranch(dir string) string {
	if dir == "" {
		return ""
	}
	for cur := filepath.Clean(dir); ; {
		dotgit := filepath.Join(cur, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			gitDir := dotgit
			if !fi.IsDir() {
				b, err := os.ReadFile(dotgit)
				if err != nil {
					return ""
				}
				ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if !ok {
					return ""
				}
				gitDir = strings.TrimSpace(ref)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(cur, gitDir)
				}
			}
			return headBranch(filepath.Join(gitDir, "HEAD"))
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return ""
		}
		cur = parent
	}
}

// headBranch reads a HEAD file: "ref: refs/heads/NAME" is on branch
// NAME, a bare commit id is detached.
func headBranch(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return ""
	}
	b = bytes.TrimSpace(b)
	if ref, ok := bytes.CutPrefix(b, []byte("ref:")); ok {
		name := strings.TrimSpace(string(ref))
		if branch, ok := strings.CutPrefix(name, "refs/heads/"); ok {
			return branch
		}
		return name
	}
	if len(b) >= 40 {
		return "HEAD"
	}
	return ""
}
