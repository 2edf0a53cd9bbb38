package server

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/internal/safefile"
	"github.com/loomhq/loom/paths"
)

// Who may blame which files: the machine's owner, files under the roots
// of the projects of their sessions (see blamepage.go).

// notOwner refuses blame to a user the machine's files are not.
const notOwner = "blame reads this machine's files: only the user loom serve runs as may ask for it"

// revName is a revision the server passes to git: a name or a hash,
// with ~N, ^N or @{…} after it; never an option, a range or a path.
var revName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./~^@{}-]*$`) })

// blameFor says whether user may blame files here.
func (s *Server) blameFor(user string) bool {
	return s.cfg.Blame != nil && user != "" && user == s.cfg.Blame.Owner
}

// blameFile blames the file at path (absolute) for user, at revision
// rev ("" for the work tree's file), after checking that user may and
// that the file, its symbolic links resolved, lies under the root of a
// project of user's sessions.
func (s *Server) blameFile(ctx context.Context, user, path, rev string) (*blame.Result, error) {
	if !s.blameFor(user) {
		return nil, codedError(eForbidden, notOwner)
	}
	if path == "" {
		return nil, loom.Errorf(loom.EINVALID, "path is required: the absolute path of a file in a project your sessions worked in")
	}
	if !filepath.IsAbs(path) || strings.ContainsRune(path, 0) {
		return nil, loom.Errorf(loom.EINVALID, "path %q is not absolute: give the file's absolute path", path)
	}
	if rev != "" && (!revName().MatchString(rev) || strings.Contains(rev, "..")) {
		return nil, loom.Errorf(loom.EINVALID, "rev %q is not a commit's name or hash", rev)
	}
	var es loom.EditStore = s.st
	real := resolve(filepath.Clean(path))
	// A file missing from a directory that is missing too is in the
	// project of the directory that holds them: it is "no such file",
	// as a missing file at the project's root is.
	roots, err := s.blameRoots(ctx, es, user, nearestDir(filepath.Dir(real)))
	if err != nil {
		return nil, err
	}
	outside := codedError(eForbidden, "%s is not under the root of a project your sessions worked in: the dashboard blames only files there", path)
	b := &blame.Blamer{Store: es, Roots: s.svc.Roots, Versions: s.st, UserID: user, Cache: s.cfg.Blame.Cache}
	if !within(roots, real) {
		// A clone at a path no session recorded is still a repository
		// of the user's sessions when they match it (recorded on another
		// machine, at another path): loom blame takes it, so does the
		// dashboard.
		g, _, err := b.Open(ctx, real)
		if err != nil {
			return nil, outside
		}
		ok, err := b.Recorded(ctx, g)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, outside
		}
		roots = append(roots, g.Dir)
	}
	// Open says when the file is missing or a directory; what it does
	// not check, before the file is read, is checked here.
	if fi, err := os.Stat(real); err == nil && !fi.IsDir() {
		switch {
		case !fi.Mode().IsRegular():
			return nil, loom.Errorf(loom.EINVALID, "%s is not a regular file", path)
		case fi.Size() > maxBlameBytes:
			return nil, loom.Errorf(loom.EINVALID, "%s is %s: the dashboard blames files up to %s (loom blame takes any)", path, safefile.Size(fi.Size()), safefile.Size(maxBlameBytes))
		}
	}
	g, rel, err := b.Open(ctx, real)
	if err != nil {
		return nil, err
	}
	if !within(roots, g.Dir) {
		return nil, outside
	}
	commit := ""
	if rev != "" {
		revs, err := g.Revisions(ctx, rev)
		if err != nil {
			return nil, err
		}
		commit = revs[0]
	}
	if b.Traces, err = blame.RepoTraces(g.Dir); err != nil {
		return nil, err
	}
	res, err := b.Blame(ctx, g, rel, commit)
	if err != nil {
		return nil, err
	}
	res.Revision = rev
	return res, nil
}

// resolve is path with its symbolic links resolved, as far as it
// exists: the part of it that does not is kept as it is.
func resolve(path string) string {
	var rest []string
	for {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(path)
		if parent == path {
			return filepath.Join(append([]string{path}, rest...)...)
		}
		rest = append([]string{filepath.Base(path)}, rest...)
		path = parent
	}
}

// nearestDir is dir, or the nearest of its parents that is a directory
// when it is not one.
func nearestDir(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// blameRoots are the roots, their symbolic links resolved, that user's
// sessions recorded for the project of dir, its symbolic links resolved
// (as loom detects a project: by its repository, without running git).
func (s *Server) blameRoots(ctx context.Context, es loom.EditStore, user, dir string) ([]string, error) {
	p, err := paths.DetectProject(dir)
	if err != nil || p.ID == "" {
		return nil, nil
	}
	roots, err := es.ProjectRoots(ctx, user, p.ID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			continue
		}
		if real, err := filepath.EvalSymlinks(r); err == nil {
			out = append(out, real)
		}
	}
	return out, nil
}

// within says whether path is one of roots or lies under one.
func within(roots []string, path string) bool {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
