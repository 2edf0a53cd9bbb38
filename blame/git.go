package blame

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/gitindex"
)

// Git runs git in one work tree. Every call is a subprocess with the
// caller's context: a repository that takes too long is stopped with
// it.
type Git struct {
	// Bin is the git program ("git" when empty).
	Bin string
	// Dir is the work tree's top-level directory.
	Dir string
	// moves blames with -M (tests of what the line-age cache gives
	// against a whole blame when git follows blocks moved within the
	// file, which loom does not ask of it: see Blame).
	moves bool
	// opened is what Blamer.Open's call to git told of the file it
	// found, for the first blame of it (workTreeAgesAt).
	opened *openedFile
	// shared, when many files are blamed in one call, is what their
	// blames share (many.go).
	shared *shared
	// since, when set, is the commit a pull request's lines are counted
	// from (PullRequest): a blame at a commit asks git of the commits
	// after it alone (git blame since..rev), every older line given to
	// a boundary commit, with no time (no edit is before it, so that it
	// claims none). Its lines are not the pull request's; the others'
	// ages are those a whole blame gives. A third of git's time on a
	// long history.
	since string
	// gitDir is the repository's git directory when Open learnt it
	// (the same call to git as the work tree's), "" otherwise: what
	// needs it asks git no more.
	gitDir string
}

// openedFile is a file Blamer.Open found, with what git said of it in
// the same call as of its work tree: the probe its first blame needs,
// one git process fewer. Taken once, by the first blame that asks for
// it (a Git kept for later blames asks git again).
type openedFile struct {
	rel   string
	p     probed
	taken atomic.Bool
}

// openedProbe is the probe Open made of rel, ok false when there is
// none (another file, or taken).
func (g Git) openedProbe(rel string) (probed, bool) {
	if o := g.opened; o != nil && o.rel == rel && o.taken.CompareAndSwap(false, true) {
		return o.p, true
	}
	return probed{}, false
}

// topAndProbe asks git at once for the work tree that holds dir and
// what probe asks of file base in dir; ok is false when one of them
// cannot be told (no work tree, no HEAD, the file not in it).
func topAndProbe(ctx context.Context, bin, dir, base string) (top string, p probed, ok bool) {
	out, err := Git{Bin: bin, Dir: dir}.run(ctx, "rev-parse", "--show-toplevel", "--is-shallow-repository", "--absolute-git-dir", "HEAD", "HEAD:./"+base)
	if err != nil {
		return "", probed{}, false
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 5 {
		return "", probed{}, false
	}
	return f[0], probed{shallow: f[1] == "true", gitDir: f[2], head: f[3], blob: f[4]}, true
}

// directProbe is topAndProbe of file (absolute, its links resolved)
// read from the repository's files, without a git process (2 ms of a
// first blame's CPU); ok false where git must be asked.
func directProbe(file string) (top string, p probed, ok bool) {
	d, ok := gitindex.ProbeFile(file)
	if !ok {
		return "", probed{}, false
	}
	return d.Top, probed{shallow: d.Shallow, gitDir: d.GitDir, head: d.Head, blob: d.Blob}, true
}

// run runs git with args in g.Dir and returns its standard output; an
// error carries git's own first line of complaint.
func (g Git) run(ctx context.Context, args ...string) ([]byte, error) {
	bin := g.Bin
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = g.Dir
	cmd.Env = append(cmd.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, loom.Errorf(loom.EINVALID, "loom blame needs git, which was not found: %v", ee.Err)
		}
		msg := strings.TrimSpace(errb.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("git %s: %s", args[0], strings.TrimPrefix(msg, "fatal: "))
	}
	return out.Bytes(), nil
}

// Toplevel finds the work tree that holds dir: its top-level directory,
// or EINVALID when dir is in none.
func Toplevel(ctx context.Context, bin, dir string) (string, error) {
	// From the repository's files where they tell it for certain.
	if bin == "" || bin == "git" {
		if abs, err := filepath.Abs(dir); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				if top, _, _, ok := gitindex.Top(real); ok {
					return top, nil
				}
			}
		}
	}
	out, err := Git{Bin: bin, Dir: dir}.run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		if loom.ErrorCode(err) == loom.EINVALID {
			return "", err
		}
		return "", loom.Errorf(loom.EINVALID, "%s is not in a git work tree: loom blame matches a repository's lines", dir)
	}
	return strings.TrimSpace(string(out)), nil
}

// Shallow reports whether the repository is a shallow clone.
func (g Git) Shallow(ctx context.Context) bool {
	args := []string{"rev-parse", "--is-shallow-repository"}
	var out []byte
	var err error
	if g.shared != nil {
		out, err = g.shared.log(ctx, g, args) // asked once
	} else {
		out, err = g.run(ctx, args...)
	}
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// Tracked reports whether git knows path (relative to the top level) at
// HEAD or in its index.
func (g Git) Tracked(ctx context.Context, rel string) bool {
	_, err := g.run(ctx, "ls-files", "--error-unmatch", "--", rel)
	return err == nil
}

// Head is the commit HEAD names, "" in a repository without one.
func (g Git) Head(ctx context.Context) string {
	out, err := g.run(ctx, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Show returns a file's content at a revision.
func (g Git) Show(ctx context.Context, rev, rel string) ([]byte, error) {
	if g.shared != nil {
		return g.shared.show(ctx, g, rev, rel)
	}
	return g.run(ctx, "show", rev+":"+rel)
}

// uncommitted is the id git blame gives lines not committed yet.
const uncommitted = "0000000000000000000000000000000000000000"

// notYet is the time of a line not committed: after every edit, whatever
// the clocks of the machines that made them.
var notYet = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// blamed is one line as git blame tells it.
type blamed struct {
	Commit   string
	Path     string // the file in the commit that brought the line in
	OrigLine int
	Text     string
	// Time is the commit's committer time (notYet for a line not
	// committed); Boundary marks the oldest commit a shallow clone or a
	// range has, which is given every line older than it.
	Time     time.Time
	Boundary bool
}

// Blame runs git blame on rel at rev (the work tree's file when rev is
// empty), following the file's renames as git blame does, and nothing
// more: git's time is the floor of loom blame's. It does not ask git to
// follow blocks moved within the file (-M, which more than doubles
// git's time on a long history) nor to look through changes of
// whitespace (-w, a fifth more): a moved or re-indented line is dated
// to the commit that moved it, after the edit that wrote it, whose
// content (spaces evened out) still finds it. Lines moved from other
// files are found by their content and the commit that moved them
// (candidates, history.came), not by -C.
func (g Git) Blame(ctx context.Context, rev, rel string) ([]blamed, error) {
	if rev != "" {
		if lines, ok := g.shared.blamed(rev, rel); ok {
			return lines, nil
		}
		return g.blameAt(ctx, rev, rel)
	}
	return g.blame(ctx, "--", rel)
}

// blameAt is git blame of rel at commit rev: of the commits since g.since
// alone when it is set.
func (g Git) blameAt(ctx context.Context, rev, rel string) ([]blamed, error) {
	if g.since == "" {
		return g.blame(ctx, rev, "--", rel)
	}
	lines, err := g.blame(ctx, g.since+".."+rev, "--", rel)
	for i := range lines {
		if lines[i].Boundary {
			lines[i].Time = time.Time{}
		}
	}
	return lines, err
}

// ageFlags name how the ages of a blame were found, as the cache keeps
// them: git's flags, and the commit a pull request's blame stops at.
func (g Git) ageFlags() string {
	f := strings.Join(g.blameFlags(), " ")
	if g.since != "" {
		f += " since " + g.since
	}
	return f
}

// blameFlags are the options git blame runs with, besides --porcelain.
func (g Git) blameFlags() []string {
	if g.moves {
		return []string{"-w", "-M"}
	}
	return nil
}

// blame runs git blame --porcelain with blameFlags and args.
func (g Git) blame(ctx context.Context, args ...string) ([]blamed, error) {
	out, err := g.run(ctx, slices.Concat([]string{"blame", "--porcelain"}, g.blameFlags(), args)...)
	if err != nil {
		return nil, err
	}
	return parsePorcelain(out)
}

// commitInfo is what porcelain output says of a commit once.
type commitInfo struct {
	time     time.Time
	boundary bool
	path     string
}

// parsePorcelain reads git blame --porcelain: a header per group of
// lines ("<sha> <orig> <final> [<count>]"), the commit's details the
// first time it is seen, "filename", and each line after a tab.
func parsePorcelain(out []byte) ([]blamed, error) {
	commits := map[string]*commitInfo{}
	var lines []blamed
	var cur blamed
	var info *commitInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	expectHeader := true
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "\t") {
			cur.Text = l[1:]
			cur.Time, cur.Boundary = info.time, info.boundary
			if cur.Path == "" {
				cur.Path = info.path
			}
			lines = append(lines, cur)
			expectHeader = true
			continue
		}
		if expectHeader {
			f := strings.Fields(l)
			if len(f) < 3 || len(f[0]) != 40 {
				return nil, fmt.Errorf("git blame: unexpected line %q", l)
			}
			orig, _ := strconv.Atoi(f[1])
			cur = blamed{Commit: f[0], OrigLine: orig}
			info = commits[f[0]]
			if info == nil {
				info = &commitInfo{}
				if f[0] == uncommitted {
					info.time = notYet
				}
				commits[f[0]] = info
			}
			expectHeader = false
			continue
		}
		key, val, _ := strings.Cut(l, " ")
		switch key {
		case "committer-time":
			if sec, err := strconv.ParseInt(val, 10, 64); err == nil && cur.Commit != uncommitted {
				info.time = time.Unix(sec, 0).UTC()
			}
		case "boundary":
			info.boundary = true
		case "filename":
			cur.Path = val
			info.path = val
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("git blame: %w", err)
	}
	return lines, nil
}

// trackedFiles are the files git tracks at HEAD and in the index: the
// index file read directly (a git process fewer in a first blame), git
// ls-files where it is one only git reads.
func (g Git) trackedFiles(ctx context.Context) map[string]bool {
	ps, ok := g.indexPaths()
	if !ok {
		out, err := g.run(ctx, "ls-files", "-z")
		if err != nil {
			return map[string]bool{}
		}
		ps = zPaths(out)
	}
	// Sized at once: grown as it filled, the map of a repository's
	// thousands of files was rebuilt a dozen times.
	fs := make(map[string]bool, len(ps))
	for _, f := range ps {
		fs[f] = true
	}
	return fs
}

// indexPaths are the paths git's index holds, read from its file: in
// the git directory Open learnt (unless GIT_INDEX_FILE names another),
// or the one the work tree's .git names. ok is false where git must be
// asked.
func (g Git) indexPaths() ([]string, bool) {
	var index string
	switch {
	case g.gitDir != "" && os.Getenv("GIT_INDEX_FILE") == "":
		index = filepath.Join(g.gitDir, "index")
	default:
		var ok bool
		if index, ok = gitindex.Locate(g.Dir); !ok {
			return nil, false
		}
	}
	ps, err := gitindex.Paths(index)
	return ps, err == nil
}

// zPaths are the paths of git's output with -z, each ended by a NUL.
func zPaths(out []byte) []string {
	var fs []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			fs = append(fs, f)
		}
	}
	return fs
}
