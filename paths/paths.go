// Package paths decides where loom keeps its files on disk and which project
// a working directory belongs to.
//
// Everything here is computed from an environment lookup function instead of
// the process environment, so that main passes os.Getenv once and tests pass
// their own values without touching global state.
package paths

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/adrg/xdg"

	"github.com/loomhq/loom"
)

// appName is the directory loom owns inside each platform base directory.
const appName = "loom"

// Dirs holds the four base directories loom writes to. They are kept apart
// because they differ in what a user may throw away: Cache at any time,
// State (logs, history, locks) without losing sessions, Data and Config
// never without meaning to.
type Dirs struct {
	Data   string
	State  string
	Config string
	Cache  string
}

// Resolve returns loom's directories. LOOM_HOME, when set, puts all four
// under one root so that a whole installation can be moved, backed up or
// isolated (for tests and CI) by one variable. Otherwise the platform's
// conventions apply. A nil env reads the process environment.
//
// On XDG platforms (Linux and the BSDs) the XDG variables are read through
// env rather than through xdg, which captures the environment once at
// program start and so would ignore the env the caller passed.
func Resolve(env func(string) string) (Dirs, error) {
	return resolve(env, runtime.GOOS)
}

func resolve(env func(string) string, goos string) (Dirs, error) {
	if env == nil {
		env = os.Getenv
	}
	if home := env("LOOM_HOME"); home != "" {
		// An absolute root keeps every path stable when the working
		// directory changes during a run.
		root, err := filepath.Abs(home)
		if err != nil {
			return Dirs{}, fmt.Errorf("resolve LOOM_HOME %q: %w", home, err)
		}
		return Dirs{
			Data:   filepath.Join(root, "data"),
			State:  filepath.Join(root, "state"),
			Config: filepath.Join(root, "config"),
			Cache:  filepath.Join(root, "cache"),
		}, nil
	}

	switch goos {
	case "darwin", "ios", "windows", "plan9":
		return platformDirs()
	default:
		return xdgDirs(env)
	}
}

// platformDirs uses xdg's knowledge of non-XDG platforms (Application
// Support on macOS, AppData on Windows), which loom has no reason to repeat.
func platformDirs() (Dirs, error) {
	if xdg.DataHome == "" || xdg.StateHome == "" || xdg.ConfigHome == "" || xdg.CacheHome == "" {
		return Dirs{}, loom.Errorf(loom.EINVALID, "cannot find the home directory: set LOOM_HOME")
	}
	return Dirs{
		Data:   filepath.Join(xdg.DataHome, appName),
		State:  filepath.Join(xdg.StateHome, appName),
		Config: filepath.Join(xdg.ConfigHome, appName),
		Cache:  filepath.Join(xdg.CacheHome, appName),
	}, nil
}

// xdgDirs follows the XDG Base Directory Specification.
func xdgDirs(env func(string) string) (Dirs, error) {
	home := env("HOME")
	var d Dirs
	for _, b := range []struct {
		dst      *string
		variable string
		fallback []string
	}{
		{&d.Data, "XDG_DATA_HOME", []string{".local", "share"}},
		{&d.State, "XDG_STATE_HOME", []string{".local", "state"}},
		{&d.Config, "XDG_CONFIG_HOME", []string{".config"}},
		{&d.Cache, "XDG_CACHE_HOME", []string{".cache"}},
	} {
		// The specification says relative values are invalid and must
		// be ignored; honouring them would scatter loom's files over
		// whatever directory it happened to be started in.
		base := env(b.variable)
		if !filepath.IsAbs(base) {
			if !filepath.IsAbs(home) {
				return Dirs{}, loom.Errorf(loom.EINVALID,
					"cannot place loom's files: neither %s nor HOME is an absolute path (or set LOOM_HOME)", b.variable)
			}
			base = filepath.Join(append([]string{home}, b.fallback...)...)
		}
		*b.dst = filepath.Join(filepath.Clean(base), appName)
	}
	return d, nil
}

// DB returns the default SQLite store file.
func (d Dirs) DB() string { return filepath.Join(d.Data, "sessions.db") }

// MemoryFile returns the file of what the agent chose to remember. It lives
// with the data, not with sessions, so that deleting sessions never loses it.
func (d Dirs) MemoryFile() string { return filepath.Join(d.Data, "MEMORY.md") }

// UserFile returns the file describing the user, kept beside MemoryFile for
// the same reason.
func (d Dirs) UserFile() string { return filepath.Join(d.Data, "USER.md") }

// LogsDir returns the root of the per-session JSONL logs. They are state,
// not data: the store is the record, the logs are a readable trail.
func (d Dirs) LogsDir() string { return filepath.Join(d.State, "logs") }

// SessionLog returns the JSONL log of one session. Both names are sanitized
// because they come from users and remote surfaces, and must not be able to
// climb out of LogsDir or collide with a path separator.
func (d Dirs) SessionLog(user, sessionID string) string {
	return filepath.Join(d.LogsDir(), Sanitize(user), Sanitize(sessionID)+".jsonl")
}

// BlameCacheDir is where loom blame keeps the ages git blame gave the
// lines of the files it blamed (package blame's line-age cache).
func (d Dirs) BlameCacheDir() string { return filepath.Join(d.Cache, "blame") }

// HistoryFile returns the interactive prompt's line history.
func (d Dirs) HistoryFile() string { return filepath.Join(d.State, "history") }

// LocksDir returns where session write locks are kept. Locks are state:
// losing them costs nothing once their processes have exited.
func (d Dirs) LocksDir() string { return filepath.Join(d.State, "locks") }

// ServeTokenFile returns where loom serve keeps the access token it
// printed for user, to print it again at the next start. It is state: a
// lost file costs one new token. The user is sanitized as in SessionLog.
func (d Dirs) ServeTokenFile(user string) string {
	return filepath.Join(d.State, "serve-token-"+Sanitize(user))
}

// HubKeyFile is the key that seals the checkpoints of teams' chains loom
// serve keeps in a hub's store (docs/team.md), kept outside the store.
func (d Dirs) HubKeyFile() string { return filepath.Join(d.State, "hub-checkpoint.key") }

// ConfigFile returns the user's configuration file.
func (d Dirs) ConfigFile() string { return filepath.Join(d.Config, "config.toml") }

// SyncKeyFile is where this machine keeps the user's sync key, readable
// by the user only (see docs/sync.md).
func (d Dirs) SyncKeyFile() string { return filepath.Join(d.Config, "sync.key") }

// ProfilesDir returns the directory of named profiles (system prompt plus
// optional model), kept in Config because users write them by hand.
func (d Dirs) ProfilesDir() string { return filepath.Join(d.Config, "profiles") }

// Sanitize reduces name to a safe path segment of ASCII letters, digits, '_'
// and '-'. Any other character (including '.', '/', '\\' and every non-ASCII
// rune) becomes '_', so a name can neither escape its parent directory nor
// mean different files on case-folding or normalising file systems in ways
// the rest of loom cannot predict. The result is never empty, because an
// empty segment would silently name the parent directory.
func Sanitize(name string) string {
	out := make([]byte, 0, len(name))
	// Ranging over a string yields one rune per valid UTF-8 sequence and
	// one utf8.RuneError per invalid byte, so each gets one '_'.
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			out = append(out, byte(r))
		default:
			out = append(out, '_')
		}
	}
	if len(out) == 0 {
		return "_"
	}
	return string(out)
}

// DBURL returns the store location to open. The command-line flag wins over
// LOOM_DB so that one invocation can point elsewhere without editing the
// environment; without either, the default SQLite file under d is used. A
// nil env reads the process environment.
func DBURL(flag string, env func(string) string, d Dirs) string {
	if flag != "" {
		return flag
	}
	if env == nil {
		env = os.Getenv
	}
	if v := env("LOOM_DB"); v != "" {
		return v
	}
	return d.DB()
}

// DetectProject returns the project that dir belongs to: the nearest
// enclosing git work tree, or dir itself outside any. An empty dir means the
// working directory.
//
// A work tree whose repository has a remote is identified by the remote:
// its id is ProjectID of the normalised URL (see NormalizeRemote) and its
// name the repository's (the last element of that URL), so that clones of
// one repository, wherever they are and whatever their directories are
// called, on this machine or another, are one project with one cli:NAME
// key. Its root is still this work tree's. A worktree (git worktree add)
// of a repository without a remote is identified by the path of the
// repository's main work tree, so that the worktrees of one repository
// are one project too, each rooted at itself. Another work tree without
// a remote, or one whose config cannot be read or parsed, is identified
// by its root path as before (see ProjectID, UsesPath): git reports a
// broken config itself, and the command line moves sessions recorded
// under a root's path id to its project once it has another
// (docs/configuration.md).
//
// The path is made absolute and its symlinks resolved first, because the ID
// is a hash of the root path and the same directory reached by two routes
// must not split its sessions in two. Git is not run: loom must work where
// git is not installed, and a project's identity must not depend on
// whether it is. Finding the top level only needs the .git entry, which is
// a directory in a normal clone and a file in worktrees and submodules, and
// the remote is in the repository's config file.
func DetectProject(dir string) (loom.Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return loom.Project{}, fmt.Errorf("detect project in %q: %w", dir, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return loom.Project{}, fmt.Errorf("detect project in %q: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return loom.Project{}, fmt.Errorf("detect project in %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return loom.Project{}, loom.Errorf(loom.EINVALID, "detect project: %s is not a directory", abs)
	}

	root, found, err := gitRoot(abs)
	if err != nil {
		return loom.Project{}, fmt.Errorf("detect project in %q: %w", dir, err)
	}
	if !found {
		return pathProject(abs), nil
	}
	if remote, err := remoteOf(root); err == nil && remote != "" {
		return loom.Project{ID: ProjectID(remote), Name: RepoName(remote), Root: root}, nil
	}
	if main := mainWorktree(root); main != "" && main != root {
		// A worktree of a repository without a remote is the
		// repository's project, rooted at itself, as one with a
		// remote is: what was said in one worktree bears on the others.
		p := pathProject(main)
		p.Root = root
		return p, nil
	}
	return pathProject(root), nil
}

// mainWorktree returns the top of the main work tree of the repository
// whose worktree (git worktree add) is at root: its git directory names
// the repository's in its commondir file, whose parent is that work tree
// (the repository's own directory, for a bare one). It is "" when root
// is no such worktree.
func mainWorktree(root string) string {
	dir := gitDir(root)
	if dir == "" {
		return ""
	}
	common := commonDir(dir)
	if common == dir {
		return ""
	}
	common = filepath.Clean(common)
	if real, err := filepath.EvalSymlinks(common); err == nil {
		common = real
	}
	if filepath.Base(common) == ".git" {
		return filepath.Dir(common)
	}
	return common
}

// ProjectOf returns the project of dir as DetectProject finds it when
// dir is on this machine, else dir itself as the project's root: the
// rule for a directory another tool or machine recorded (an imported
// session's working directory, a project an MCP client names by path).
func ProjectOf(dir string) loom.Project {
	if p, err := DetectProject(dir); err == nil {
		return p
	}
	return pathProject(filepath.Clean(dir))
}

// pathProject is the project identified by its root path.
func pathProject(root string) loom.Project {
	return loom.Project{ID: ProjectID(root), Name: filepath.Base(root), Root: root}
}

// UsesPath reports whether p is identified by its root path, not by a
// remote: its id is the ProjectID of its root.
func UsesPath(p loom.Project) bool { return p.ID == ProjectID(p.Root) }

// gitRoot returns the nearest directory from dir up that holds a .git
// entry: the top of the git work tree dir is in, if any.
func gitRoot(dir string) (root string, found bool, err error) {
	for cur := dir; ; {
		if found, err := hasGitEntry(cur); err != nil || found {
			return cur, found, err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", false, nil
		}
		cur = parent
	}
}

// hasGitEntry reports whether dir holds a .git directory or file. Errors
// other than absence are returned rather than skipped, because skipping one
// would quietly pick a different root and so a different project ID.
func hasGitEntry(dir string) (bool, error) {
	fi, err := os.Stat(filepath.Join(dir, ".git"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	}
	return fi.IsDir() || fi.Mode().IsRegular(), nil
}

// ProjectID returns the identifier of a project: the first 16 hex digits
// of the SHA-256 of its root path, or of its normalised remote URL for a
// work tree with a remote (see DetectProject). It depends on that string
// alone so that any process, on any engine, computes the same ID without
// a registry.
func ProjectID(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:])[:16]
}

// TeamsDir holds the member's team key pair and, per team, its keys,
// state and store (package teamrun).
func (d Dirs) TeamsDir() string { return filepath.Join(d.Data, "teams") }
