package paths

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGitBranch(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A clone on a branch with a slash, read from a subdirectory.
	clone := filepath.Join(root, "clone")
	write(filepath.Join(clone, ".git", "HEAD"), "ref: refs/heads/feature/retry\n")
	os.MkdirAll(filepath.Join(clone, "src", "pkg"), 0o755)
	// A worktree: .git is a file naming its git directory, relative.
	wt := filepath.Join(root, "wt")
	write(filepath.Join(clone, ".git", "worktrees", "wt", "HEAD"), "ref: refs/heads/hotfix\n")
	write(filepath.Join(wt, ".git"), "gitdir: ../clone/.git/worktrees/wt\n")
	// Detached.
	det := filepath.Join(root, "detached")
	write(filepath.Join(det, ".git", "HEAD"), "0123456789abcdef0123456789abcdef01234567\n")
	// Not a work tree.
	plain := filepath.Join(root, "plain")
	os.MkdirAll(plain, 0o755)

	for dir, want := range map[string]string{
		filepath.Join(clone, "src", "pkg"): "feature/retry",
		wt:                                 "hotfix",
		det:                                "HEAD",
		plain:                              "",
		"":                                 "",
		filepath.Join(root, "missing"):     "",
	} {
		if got := GitBranch(dir); got != want {
			t.Errorf("GitBranch(%s) = %q, want %q", dir, got, want)
		}
	}
}
