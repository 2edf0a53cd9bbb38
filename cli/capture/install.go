package capture

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/capture"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/hooks"
)

// serviceReport is what install or uninstall did with the service.
type serviceReport struct {
	// Manager is "systemd" or "launchd"; Path the unit or plist file.
	Manager string `json:"manager"`
	Path    string `json:"path"`
	// Started (install) or Stopped (uninstall) says the service manager
	// did it; where it could not, Run are the commands that do it and
	// Problem says why it was not done.
	Started bool     `json:"started,omitempty"`
	Stopped bool     `json:"stopped,omitempty"`
	Run     []string `json:"run,omitempty"`
	Problem string   `json:"problem,omitempty"`
	// Linger, on Linux, says whether the user's services start at boot
	// (loginctl enable-linger), before any login.
	Linger *bool `json:"linger,omitempty"`
	// NoManager says that no user service manager runs here (a
	// container, WSL without systemd, a minimal VM, a machine without
	// systemctl): nothing will start the service. StartNow (install) is
	// the shell command that starts loom capture run now, in the
	// background, and Instead the crontab line that starts it at boot,
	// when this machine has cron (crontab on PATH); without cron, the
	// start command belongs in whatever starts the machine or container.
	NoManager bool   `json:"no_manager,omitempty"`
	StartNow  string `json:"start_now,omitempty"`
	Instead   string `json:"instead,omitempty"`
	// ByHand (uninstall) is the pid of a capture run started otherwise
	// than by the service (in a terminal, by cron), and ByHandStopped
	// says it was stopped too.
	ByHand        int  `json:"by_hand,omitempty"`
	ByHandStopped bool `json:"by_hand_stopped,omitempty"`
}

type changeReport struct {
	Service      serviceReport   `json:"service"`
	Hooks        []*hooks.Report `json:"hooks"`
	HookProblems []string        `json:"hook_problems"`
}

// InstallOptions are the options of `loom capture install`.
type InstallOptions struct {
	*Options
	// Start enables and starts the service (no --no-start); Hooks adds
	// the agents' import hooks (no --no-hooks).
	Start, Hooks bool
}

// newCmdInstall builds loom capture install. runF, when not nil, is
// called with the options instead of installing.
func newCmdInstall(inv *command.Invocation, runF func(*InstallOptions) error) *cobra.Command {
	opts := &InstallOptions{Options: NewOptions(inv)}
	var noStart, noHooks bool
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Set up the per-user service that imports every agent's sessions",
		Long: `Write the per-user service that runs loom capture run: a systemd user unit
(~/.config/systemd/user/loom-capture.service) on Linux, enabled and
started with systemctl --user; a launchd agent
(~/Library/LaunchAgents/dev.loom.capture.plist) on macOS, loaded with
launchctl. Where the service manager cannot be reached (systemctl is not
installed, no user session manager runs), the file is written and the
commands that start it are printed. The service keeps loom's store and
the agents' directories as this command sees them (LOOM_HOME, LOOM_DB,
--db, --user and each agent's own variable, such as CLAUDE_CONFIG_DIR).

It also adds loom's import hooks to Claude Code, Gemini CLI and Codex
where they are installed (as loom hooks install does): a turn is then
imported the moment the agent ends it. Installing again replaces the
service with this loom's; hooks already there are kept.`,
		Example: `  loom capture install
  loom capture install --no-hooks
  LOOM_HOME=~/loom-work loom capture install
  loom capture install --no-start --json     # write the unit, start it yourself`,
		Args: command.NoArgs,
	}
	cmd.RunE = command.RunE(opts, func([]string) error {
		opts.Start, opts.Hooks = !noStart, !noHooks
		return nil
	}, runF, installRun)
	cmd.Flags().BoolVar(&noStart, "no-start", false, "write the service's file, but neither enable nor start it")
	cmd.Flags().BoolVar(&noHooks, "no-hooks", false, "leave the agents' hooks as they are")
	return cmd
}

// installRun writes the service's file and the manifest of what it
// added, adds the hooks (opts.Hooks) and starts the service
// (opts.Start); where no service manager runs, it says the crontab line
// that starts capture instead and fails.
func installRun(ctx context.Context, opts *InstallOptions) error {
	rep, err := opts.change()
	if err != nil {
		return err
	}
	svc, err := opts.service()
	if err != nil {
		return err
	}
	mgr := rep.Service.Manager
	var body []byte
	if mgr == "systemd" {
		unit, err := capture.SystemdUnit(svc)
		if err != nil {
			return err
		}
		body = []byte(unit)
	} else {
		body = capture.LaunchdPlist(svc)
		if err := os.MkdirAll(filepath.Dir(svc.Log), 0o700); err != nil {
			return err
		}
	}
	if err := writePrivate(rep.Service.Path, body); err != nil {
		return fmt.Errorf("writing the service: %w", err)
	}
	m, err := opts.readManifest()
	if err != nil {
		return err
	}
	m.Service = rep.Service.Path
	if opts.Hooks {
		reps, problems := hooks.InstallImports(placesOf(opts.Options))
		for _, r := range reps {
			rep.Hooks = append(rep.Hooks, r)
			if len(r.Added) > 0 {
				m.Hooks[r.Agent] = r.Added
			}
		}
		for _, p := range problems {
			rep.HookProblems = append(rep.HookProblems, p.Error())
		}
	}
	if err := opts.writeManifest(m); err != nil {
		return err
	}
	var startErr error
	if mgr == "systemd" {
		rep.Service.Run = []string{"systemctl --user daemon-reload", "systemctl --user enable " + capture.UnitName, "systemctl --user restart " + capture.UnitName}
		linger := lingering(opts.Options)
		rep.Service.Linger = linger
	} else {
		domain := "gui/" + strconv.Itoa(os.Getuid())
		rep.Service.Run = []string{"launchctl bootout " + domain + "/" + capture.Label, "launchctl bootstrap " + domain + " " + shellQuote(rep.Service.Path)}
	}
	switch {
	case opts.Start:
		startErr = opts.manage(ctx, &rep.Service, true)
	default:
		opts.managerMissing(&rep.Service)
	}
	if rep.Service.NoManager {
		rep.Service.StartNow = startLine(svc, opts.LookPath)
		keep := "with no cron here either, run it from what starts this machine or container to keep it running"
		if _, err := opts.LookPath("crontab"); err == nil {
			rep.Service.Instead = cronLine(svc)
			keep = "add the @reboot line printed to your crontab (crontab -e) to keep it running"
		}
		startErr = fmt.Errorf("no user service manager runs here (%s): start capture now with the command printed; %s (docs/durability.md)", rep.Service.Problem, keep)
	}
	if opts.JSON() {
		if err := command.WriteJSON(opts.IO.Out, rep); err != nil {
			return err
		}
	} else {
		printChange(opts.Options, rep, true, opts.Start)
	}
	return startErr
}

// change starts the report of what install or uninstall does with the
// service, through this platform's service manager; where loom knows
// none, the error says what to run instead.
func (opts *Options) change() (*changeReport, error) {
	mgr := platform(opts.GOOS)
	if mgr == "" {
		return nil, unsupported(opts.GOOS)
	}
	return &changeReport{Service: serviceReport{Manager: mgr, Path: opts.servicePath()}, Hooks: []*hooks.Report{}, HookProblems: []string{}}, nil
}

// managerMissing says whether r's service manager is not installed here
// (no systemctl or launchctl on PATH): then no user service manager runs,
// and r says so, with nothing to run.
func (opts *Options) managerMissing(r *serviceReport) bool {
	name := "systemctl"
	if r.Manager == "launchd" {
		name = "launchctl"
	}
	if _, err := opts.LookPath(name); err == nil {
		return false
	}
	r.NoManager, r.Problem, r.Run = true, name+" is not installed", nil
	return true
}

// manage runs the service manager's commands of r (r.Run), for install
// (start) or uninstall. A manager that is not installed, or runs no
// user manager, is no error here: r says so (NoManager), and install
// says what starts capture instead. One that fails is.
func (opts *Options) manage(ctx context.Context, r *serviceReport, start bool) error {
	if opts.managerMissing(r) {
		return nil
	}
	for i, line := range r.Run {
		args := splitCommand(line)
		out, err := opts.Manager(ctx, args[0], args[1:]...)
		if err != nil && strings.Contains(line, " bootout ") {
			continue // launchd: the agent was not loaded
		}
		if err != nil && r.Manager == "systemd" && noUserManager(out) {
			r.NoManager = true
			r.Problem = args[0] + ": " + firstLine(out, err)
			r.Run = r.Run[i:]
			return nil
		}
		if err != nil {
			r.Problem = strings.TrimSpace(line + ": " + firstLine(out, err))
			r.Run = r.Run[i:]
			return fmt.Errorf("the service manager failed: %s (run %s once it works; docs/durability.md)", r.Problem, strings.Join(r.Run, ", then "))
		}
	}
	r.Run = nil
	if start {
		r.Started = true
	} else {
		r.Stopped = true
	}
	return nil
}

func printChange(opts *Options, rep *changeReport, install, start bool) {
	out := opts.IO.Out
	cs := opts.IO.ColorScheme()
	pl := placesOf(opts)
	s := rep.Service
	what := map[string]string{"systemd": "systemd user unit", "launchd": "launchd agent"}[s.Manager]
	switch {
	case install:
		fmt.Fprintf(out, "Wrote the %s %s\n", what, hooks.Short(pl, s.Path))
	default:
		fmt.Fprintf(out, "Removed the %s %s\n", what, hooks.Short(pl, s.Path))
	}
	switch {
	case s.Started:
		fmt.Fprintln(out, "Started it: loom capture status shows what it follows.")
	case s.Stopped:
		fmt.Fprintln(out, "Stopped it.")
	case s.NoManager && install:
		fmt.Fprintf(out, "No user service manager runs here (%s). Start capture now with:\n", s.Problem)
		fmt.Fprintf(out, "  %s\n", cs.Bold(s.StartNow))
		if s.Instead != "" {
			fmt.Fprintln(out, "and keep it running across restarts with this line in your crontab (crontab -e):")
			fmt.Fprintf(out, "  %s\n", s.Instead)
		} else {
			fmt.Fprintln(out, "This machine has no cron either: to keep capture running across restarts, run that command from what starts the machine or container (its entrypoint, or your shell's profile).")
		}
	case s.NoManager:
		fmt.Fprintf(out, "No user service manager runs here (%s): it ran no service to stop.\n", s.Problem)
	case len(s.Run) > 0:
		if s.Problem != "" {
			fmt.Fprintf(out, "%s: ", s.Problem)
		}
		verb := "start"
		if !install {
			verb = "stop"
		}
		if install && !start {
			verb = "start"
		}
		fmt.Fprintf(out, "%s it with:\n", verb)
		for _, l := range s.Run {
			fmt.Fprintf(out, "  %s\n", cs.Bold(l))
		}
	}
	switch {
	case s.ByHandStopped:
		fmt.Fprintf(out, "Stopped the capture started otherwise (pid %d); if cron or your shell's profile starts it, take that line out too.\n", s.ByHand)
	case s.ByHand != 0:
		fmt.Fprintf(out, "A capture started otherwise still runs (pid %d): stop it with kill %d.\n", s.ByHand, s.ByHand)
	}
	if s.Linger != nil && !*s.Linger && install && !s.NoManager {
		fmt.Fprintln(out, opts.IO.WrapErr("It starts when you log in; to start it at boot, before any login (a server, a reboot while away), run: loginctl enable-linger $USER"))
	}
	for _, r := range rep.Hooks {
		fmt.Fprintf(out, "%s hooks (%s): %s\n", hooks.Label(r.Agent), hooks.Short(pl, r.File), hookWords(r, install))
	}
	for _, p := range rep.HookProblems {
		fmt.Fprintf(opts.IO.ErrOut, "loom: %s\n", p)
	}
}

// stopByHand stops a capture that still runs once the service is
// stopped: one started in a terminal, by cron or a shell's profile
// (where no service manager runs, the capture there is), as its state
// file shows (its pid on this host, a fresh heartbeat). Uninstall
// means capture stops; r says whether it did.
func stopByHand(ctx context.Context, opts *Options, r *serviceReport) {
	path, err := opts.statePath()
	if err != nil {
		return
	}
	running := func() *capture.State {
		s, err := capture.ReadState(path)
		if err != nil || s == nil || s.PID == os.Getpid() || !capture.Live(s, opts.Now()).Running {
			return nil
		}
		return s
	}
	s := running()
	if s == nil {
		return
	}
	r.ByHand = s.PID
	p, err := os.FindProcess(s.PID)
	if err != nil || p.Signal(syscall.SIGTERM) != nil {
		return
	}
	// It writes "stopped" in its state file as it ends.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if s := running(); s == nil || s.PID != r.ByHand {
			r.ByHandStopped = true
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hookWords(r *hooks.Report, install bool) string {
	switch {
	case len(r.Added) > 0:
		return "added " + strings.Join(r.Added, ", ")
	case len(r.Removed) > 0:
		return "removed " + strings.Join(r.Removed, ", ")
	case install:
		return "already there"
	}
	return "none there"
}

// UninstallOptions are the options of `loom capture uninstall`.
type UninstallOptions struct {
	*Options
	// Hooks takes out the import hooks install added (no --keep-hooks).
	Hooks bool
}

// newCmdUninstall builds loom capture uninstall. runF, when not nil, is
// called with the options instead of uninstalling.
func newCmdUninstall(inv *command.Invocation, runF func(*UninstallOptions) error) *cobra.Command {
	opts := &UninstallOptions{Options: NewOptions(inv)}
	var keepHooks bool
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Stop and remove the capture service",
		Long: `Stop the capture service, take it out of the service manager and remove
its file, and take out the import hooks loom capture install added (not
those that were there before it; --keep-hooks keeps them all). What was
captured stays in the store.`,
		Example: `  loom capture uninstall
  loom capture uninstall --keep-hooks`,
		Args: command.NoArgs,
	}
	cmd.Flags().BoolVar(&keepHooks, "keep-hooks", false, "leave the agents' hooks as they are")
	cmd.RunE = command.RunE(opts, func([]string) error {
		opts.Hooks = !keepHooks
		return nil
	}, runF, uninstallRun)
	return cmd
}

// uninstallRun stops the service and removes its file, stops a capture
// started otherwise, and takes out the hooks install added
// (opts.Hooks).
func uninstallRun(ctx context.Context, opts *UninstallOptions) error {
	rep, err := opts.change()
	if err != nil {
		return err
	}
	mgr := rep.Service.Manager
	if _, err := os.Stat(rep.Service.Path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no capture service is installed (no %s)", rep.Service.Path)
	}
	if mgr == "systemd" {
		rep.Service.Run = []string{"systemctl --user disable --now " + capture.UnitName}
	} else {
		rep.Service.Run = []string{"launchctl bootout gui/" + strconv.Itoa(os.Getuid()) + "/" + capture.Label}
	}
	// Stopped before its file goes: systemd needs the unit to stop it.
	// A manager that cannot be reached (no user session manager runs)
	// runs no service of the user's: the file goes all the same, and
	// the report says what failed.
	_ = opts.manage(ctx, &rep.Service, false)
	if err := os.Remove(rep.Service.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if mgr == "systemd" && rep.Service.Stopped {
		opts.Manager(ctx, "systemctl", "--user", "daemon-reload")
	}
	// A manager that failed otherwise may still run the service, whose
	// capture is then no capture started otherwise.
	if s := rep.Service; s.Stopped || s.NoManager {
		stopByHand(ctx, opts.Options, &rep.Service)
	}
	m, err := opts.readManifest()
	if err != nil {
		return err
	}
	if opts.Hooks && len(m.Hooks) > 0 {
		var names []string
		for a := range m.Hooks {
			names = append(names, a)
		}
		reps, problems := hooks.UninstallImports(placesOf(opts.Options), names)
		rep.Hooks = append(rep.Hooks, reps...)
		for _, p := range problems {
			rep.HookProblems = append(rep.HookProblems, p.Error())
		}
		m.Hooks = map[string][]string{}
	}
	m.Service = ""
	if err := opts.writeManifest(m); err != nil {
		return err
	}
	if opts.JSON() {
		return command.WriteJSON(opts.IO.Out, rep)
	}
	printChange(opts.Options, rep, false, false)
	return nil
}
