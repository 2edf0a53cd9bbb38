package paths

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxGitConfig bounds the config file read: a repository's own config is
// a few hundred bytes, and a huge one is not worth reading on every
// command.
const maxGitConfig = 1 << 20

// remoteOf returns the normalised URL of the remote of the git work tree
// at root (see NormalizeRemote): the remote "origin", else the first
// remote the config file lists with a url; "" when it has none. The
// repository's own config file is read (for a worktree, the one of the
// repository it belongs to; for a submodule, the one in the
// superproject's .git/modules), with its url.<base>.insteadOf rewrites.
// Not read: the user's and the system's config files (~/.gitconfig,
// /etc/gitconfig), files named by [include] and [includeIf], and a
// worktree's own config.worktree. The rewrites people keep there mostly
// turn one form of a host's URL into another (https into ssh), which
// normalising makes the same anyway.
func remoteOf(root string) (string, error) {
	dir := gitDir(root)
	if dir == "" {
		return "", nil
	}
	name := filepath.Join(commonDir(dir), "config")
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGitConfig+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxGitConfig {
		return "", fmt.Errorf("%s is larger than %d bytes", name, maxGitConfig)
	}
	vars, err := parseGitConfig(b)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return NormalizeRemote(remoteURL(vars), root), nil
}

// commonDir returns the directory that holds the config of git directory
// dir: a worktree's git directory names it in its commondir file, other
// git directories hold their own.
func commonDir(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "commondir"))
	if err != nil {
		return dir
	}
	common := strings.TrimSpace(string(b))
	if common == "" {
		return dir
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	return common
}

// remoteURL picks the URL of origin, else of the first remote with one,
// from a config's variables, and applies the longest url.<base>.insteadOf
// prefix that matches it, as git does.
func remoteURL(vars []configVar) string {
	var url string
	for _, v := range vars {
		if v.section != "remote" || v.key != "url" || v.value == "" {
			continue
		}
		if v.subsection == "origin" {
			url = v.value
			break
		}
		if url == "" {
			url = v.value
		}
	}
	if url == "" {
		return ""
	}
	var base, prefix string
	for _, v := range vars {
		if v.section == "url" && v.key == "insteadof" && v.value != "" &&
			strings.HasPrefix(url, v.value) && len(v.value) > len(prefix) {
			base, prefix = v.subsection, v.value
		}
	}
	return base + url[len(prefix):]
}

// NormalizeRemote returns what identifies the repository a git remote
// URL names, the same for every way of writing it: host and path,
// without scheme, user, port, query, trailing slashes or ".git", the
// host in lower case and the path as written. git@github.com:a/b.git,
// ssh://git@github.com:22/a/b, https://github.com/a/b and
// https://user@GitHub.com/a/b.git/ are all github.com/a/b. A remote that
// is a directory (a path, relative to the work tree root, or a file://
// URL) is its absolute path, cleaned, without ".git". It is "" when url
// names no repository.
func NormalizeRemote(url, root string) string {
	url = strings.TrimSpace(url)
	var host, p string
	if scheme, rest, ok := strings.Cut(url, "://"); ok && isScheme(scheme) {
		if strings.EqualFold(scheme, "file") {
			// file:///srv/a.git, or file://localhost/srv/a.git.
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				return localRemote(rest[i:], root)
			}
			return ""
		}
		rest, _, _ = strings.Cut(rest, "#")
		rest, _, _ = strings.Cut(rest, "?")
		host, p, _ = strings.Cut(rest, "/")
	} else if h, rest, ok := scpLike(url); ok {
		host, p = h, rest
	} else {
		return localRemote(url, root)
	}
	host = hostOf(host)
	p = strings.TrimRight(p, "/")
	p = strings.TrimRight(strings.TrimSuffix(p, ".git"), "/")
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	if host == "" || p == "" {
		return ""
	}
	return host + "/" + p
}

// RepoName is the name of the repository a normalised remote names: the
// last element of its path.
func RepoName(remote string) string { return path.Base(remote) }

// isScheme reports whether s is a URL scheme: a letter, then letters,
// digits, '+', '-' or '.'.
func isScheme(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// scpLike splits git's scp-like syntax, [user@]host:path, where a colon
// comes before any slash; [user@host:port]:path brackets a port. A
// single letter before the colon is a Windows drive, not a host.
func scpLike(url string) (host, rest string, ok bool) {
	if strings.HasPrefix(url, "[") {
		if end := strings.Index(url, "]:"); end > 0 {
			return url[:end+1], url[end+2:], true
		}
	}
	colon := strings.IndexByte(url, ':')
	slash := strings.IndexByte(url, '/')
	if colon <= 0 || slash >= 0 && slash < colon || colon == 1 && isLetter(url[0]) {
		return "", "", false
	}
	return url[:colon], url[colon+1:], true
}

// hostOf is the host of an authority ([user[:password]@]host[:port]),
// in lower case; an IPv6 address keeps its brackets.
func hostOf(a string) string {
	if i := strings.LastIndexByte(a, '@'); i >= 0 {
		a = a[i+1:]
	}
	if strings.HasPrefix(a, "[") {
		if end := strings.IndexByte(a, ']'); end > 0 {
			if inner := a[1:end]; strings.Count(inner, ":") >= 2 {
				return "[" + strings.ToLower(inner) + "]"
			}
			// [host:port], as scp-like URLs bracket a port.
			a = a[1:end]
		}
	}
	if i := strings.IndexByte(a, ':'); i >= 0 {
		a = a[:i]
	}
	return strings.ToLower(strings.TrimSuffix(a, "]"))
}

// localRemote normalises a remote that is a directory.
func localRemote(p, root string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(strings.TrimSuffix(filepath.Clean(p), ".git"))
	if p == "." || p == filepath.VolumeName(p)+string(filepath.Separator) {
		return ""
	}
	return filepath.ToSlash(p)
}
