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
	root, found, err := gitRoot(filepath.Clean(dir))
	if err != nil || !found {
		return ""
	}
	return headBranch(gitDir(root))
}

// gitDir returns the git directory of the work tree at root: its .git,
// or the directory a .git file names (worktrees, submodules); "" when
// that file cannot be read.
func gitDir(root string) string {
	dotgit := filepath.Join(root, ".git")
	if fi, err := os.Stat(dotgit); err != nil || fi.IsDir() {
		return dotgit
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	dir := strings.TrimSpace(ref)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return dir
}

// headBranch reads the HEAD of git directory dir: "ref: refs/heads/NAME"
// is on branch NAME, a bare commit id is detached.
func headBranch(dir string) string {
	if dir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, "HEAD"))
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
