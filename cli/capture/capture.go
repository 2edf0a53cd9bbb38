// Package capture is loom capture: install, show and remove the per-user
// service that imports every agent's sessions as they are written
// (package capture is what it runs), and run it.
package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/capture"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/hooks"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/safefile"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/secrets"
)

// Options are what every loom capture command works with.
type Options struct {
	IO      *term.IOStreams
	Getenv  func(string) string
	Home    func() string
	Dirs    func() (paths.Dirs, error)
	Now     func() time.Time
	Formats []importer.Format
	// ReadStore opens the store to read; CreateStore opens it to write,
	// creating it when missing.
	ReadStore   func(context.Context) (loom.Engine, error)
	CreateStore func(context.Context) (loom.Engine, error)
	User        func() string
	// DBFlag and UserFlag are the global --db and --user as given, which
	// the service is installed with.
	DBFlag, UserFlag func() string
	JSON             func() bool
	Version          string
	// GOOS is the platform whose service manager install uses.
	GOOS string
	// Program is the loom the service runs: this one.
	Program func() (string, error)
	// Manager runs a service manager's command (systemctl, launchctl)
	// and returns what it printed; LookPath finds one.
	Manager  func(ctx context.Context, name string, args ...string) (string, error)
	LookPath func(string) (string, error)
	// ImportProject and AdoptImported are the import's (see
	// session.ImportOptions).
	ImportProject func(dir string) loom.Project
	AdoptImported func(ctx context.Context, st loom.Engine)
	// DBURL is the store's URL, which a hook asking the warm recall
	// names; Redact makes the detector of what recall hands an agent
	// ([mcp] redact).
	DBURL  func() (string, error)
	Redact func() *secrets.Detector
}

// NewOptions are the options of inv's run.
func NewOptions(inv *command.Invocation) *Options {
	return &Options{
		IO: inv.IO, Getenv: inv.Getenv, Home: inv.Home, Dirs: inv.Dirs, Now: inv.TimeNow,
		Formats: inv.Formats, ReadStore: inv.ReadStore, CreateStore: inv.CreateStore, User: inv.User,
		DBFlag: inv.DBFlag, UserFlag: inv.UserFlag, JSON: inv.JSON, Version: inv.Version,
		GOOS: runtime.GOOS, Program: program, Manager: runManager, LookPath: exec.LookPath,
		ImportProject: inv.ImportProject, AdoptImported: inv.AdoptImported,
		DBURL: inv.DBURL, Redact: command.ConfigLoader(inv.Config).MCPRedact,
	}
}

// NewCmdCapture builds loom capture and its sub-commands.
func NewCmdCapture(inv *command.Invocation) *cobra.Command {
	return command.Group(&cobra.Command{
		Use:   "capture <command>",
		Short: "Import every agent's sessions by itself, as a per-user service",
		Long: `loom capture install sets up a per-user service that follows every agent
loom reads and imports each session as the agent writes it, so that a
session is in loom before its agent deletes it (Claude Code and Gemini
CLI delete sessions after 30 days by default): a systemd user unit on
Linux, a launchd agent on macOS. It also adds loom's import hooks to
Claude Code, Gemini CLI and Codex. The service starts at login (at boot
with loginctl enable-linger), restarts whenever it ends, and what an
import had not written when it was killed is read again when it
restarts. loom capture status says whether it runs and how far behind
each agent it is; loom capture uninstall removes it. See
docs/durability.md.`,
		Example: `  loom capture install
  loom capture status
  loom capture status --json
  loom capture uninstall
  loom capture run            # what the service runs, in this terminal`,
	}, newCmdInstall(inv, nil), newCmdUninstall(inv, nil), newCmdStatus(inv, nil), newCmdRun(inv, nil))
}

// program is this loom's absolute path, links resolved, which the
// service runs.
func program() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding loom's own path: %w", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	return exe, nil
}

func runManager(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// platform is the service manager install uses on goos: "systemd",
// "launchd", or "" where loom installs none.
func platform(goos string) string {
	switch goos {
	case "linux":
		return "systemd"
	case "darwin":
		return "launchd"
	}
	return ""
}

// unsupported is the error of install and uninstall where loom knows no
// service manager: what to run instead.
func unsupported(goos string) error {
	how := "start `loom capture run` when you log in"
	if goos == "windows" {
		how = "run `schtasks /Create /SC ONLOGON /TN loom-capture /TR \"loom capture run\"` to start it when you log in"
	}
	return fmt.Errorf("loom capture installs a systemd user unit (Linux) or a launchd agent (macOS), not a service of %s: %s (docs/durability.md)", goos, how)
}

// servicePath is where the service's file goes on goos.
func (o *Options) servicePath() string {
	if platform(o.GOOS) == "launchd" {
		return capture.PlistPath(o.Home())
	}
	return capture.UnitPath(o.Getenv, o.Home())
}

// statePath is the capture's state file.
func (o *Options) statePath() (string, error) {
	d, err := o.Dirs()
	if err != nil {
		return "", err
	}
	return capture.StatePath(d.State), nil
}

// manifest is what install added, so that uninstall takes out that and
// no more: the hooks loom capture added (not those the user had).
type manifest struct {
	Service string              `json:"service"`
	Hooks   map[string][]string `json:"hooks"`
}

func (o *Options) manifestPath() (string, error) {
	d, err := o.Dirs()
	if err != nil {
		return "", err
	}
	return capture.InstalledPath(d.State), nil
}

func (o *Options) readManifest() (*manifest, error) {
	p, err := o.manifestPath()
	if err != nil {
		return nil, err
	}
	m := &manifest{Hooks: map[string][]string{}}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if m.Hooks == nil {
		m.Hooks = map[string][]string{}
	}
	return m, nil
}

func (o *Options) writeManifest(m *manifest) error {
	p, err := o.manifestPath()
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return safefile.WriteFile(p, append(b, '\n'), 0o600)
}

// service is what the service runs: this loom's capture run, in an
// environment that holds what it reads besides the home directory:
// loom's own variables and those by which the agents it follows move
// their directories (found by asking each reader where it looks), when
// they are set, and the global --db and --user given to install.
func (o *Options) service() (capture.Service, error) {
	prog, err := o.Program()
	if err != nil {
		return capture.Service{}, err
	}
	names := map[string]bool{"LOOM_HOME": true, "LOOM_DB": true, "LOOM_USER": true,
		"XDG_DATA_HOME": true, "XDG_STATE_HOME": true, "XDG_CONFIG_HOME": true, "XDG_CACHE_HOME": true}
	home := o.Home()
	for _, fm := range o.Formats {
		fm.Roots(func(k string) string { names[k] = true; return o.Getenv(k) }, home)
	}
	env := map[string]string{}
	for n := range names {
		if v := o.Getenv(n); v != "" {
			env[n] = v
		}
	}
	if db := o.DBFlag(); db != "" {
		if !strings.Contains(db, "://") {
			// A path, as the service will not run in this directory.
			p := strings.TrimPrefix(db, "sqlite:")
			if abs, err := filepath.Abs(p); err == nil {
				db = abs
			}
		}
		env["LOOM_DB"] = db
	}
	if u := o.UserFlag(); u != "" {
		env["LOOM_USER"] = u
	}
	// The home loom was installed from: a service manager sets HOME from
	// the password file, which may name another directory (a container's
	// user, a HOME moved by hand), and the service would then follow the
	// agents' directories there.
	if home != "" {
		env["HOME"] = home
	}
	s := capture.Service{Program: prog, Args: []string{"capture", "run"}}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		s.Env = append(s.Env, k+"="+env[k])
	}
	if d, err := o.Dirs(); err == nil {
		s.Log = filepath.Join(d.State, "capture", "capture.log")
	}
	return s, nil
}

// writePrivate writes b as path, whole, readable by the user alone (it
// may name a database URL with its password).
func writePrivate(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return safefile.WriteFile(path, b, 0o600)
}

func placesOf(o *Options) hooks.Places { return hooks.Places{Getenv: o.Getenv, Home: o.Home} }
