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
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/capture"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/hooks"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/human"
)

// Status is what loom capture status reports (--json prints it).
type Status struct {
	// Running says whether a capture runs now, as its heartbeat shows
	// (its process alive, its heartbeat fresh); Why says how that is
	// known.
	Running bool   `json:"running"`
	Why     string `json:"why"`
	PID     int    `json:"pid,omitempty"`
	// StartedAt and HeartbeatAt are the running (or last) capture's.
	StartedAt   *time.Time `json:"started_at"`
	HeartbeatAt *time.Time `json:"heartbeat_at"`
	// Service is the service as its manager sees it; nil when none is
	// installed.
	Service *ServiceState `json:"service"`
	// Agents are the agents found on this machine, each with how far
	// its sessions are captured.
	Agents []AgentStatus `json:"agents"`
}

// ServiceState is the installed service as its manager reports it.
type ServiceState struct {
	Manager string `json:"manager"`
	Path    string `json:"path"`
	// State is the manager's word ("active (running)", "activating
	// (auto-restart)", "running", "not loaded"); empty with Problem
	// when the manager could not be asked.
	State    string `json:"state"`
	Enabled  *bool  `json:"enabled,omitempty"`
	PID      int    `json:"pid,omitempty"`
	Restarts *int   `json:"restarts,omitempty"`
	Problem  string `json:"problem,omitempty"`
}

// AgentStatus is one agent's capture: what is followed, when it was
// last captured and with what lag, and what waits.
type AgentStatus struct {
	Agent string   `json:"agent"`
	Roots []string `json:"roots"`
	// Hooks says whether loom's import hooks are in the agent's
	// settings; nil for an agent without hooks.
	Hooks *bool `json:"hooks"`
	// HooksProblem says why the agent cannot run the loom its hooks
	// name (Hooks is false then): a hook present but broken is no hook.
	HooksProblem string `json:"hooks_problem,omitempty"`
	// Sessions counts the sessions loom keeps of it (its main ones,
	// archived included), from the store: what was captured, also
	// once the agent deleted its files.
	Sessions int `json:"sessions"`
	// Files counts its session files (or databases) on this machine.
	Files int `json:"files"`
	// LastCaptureAt is when a file of it was last imported, as the
	// store recorded it (the file may be gone since), and LagMS how
	// long after the file's change that was (for a file still there).
	LastCaptureAt *time.Time `json:"last_capture_at"`
	LagMS         *int64     `json:"lag_ms"`
	// Pending counts the files changed since their import or never
	// imported; PendingSince is the oldest of their changes.
	Pending      int        `json:"pending"`
	PendingSince *time.Time `json:"pending_since"`
}

// StatusOptions are the options of `loom capture status`.
type StatusOptions struct {
	*Options
}

// newCmdStatus builds loom capture status. runF, when not nil, is
// called with the options instead of collecting and printing the
// status.
func newCmdStatus(inv *command.Invocation, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{Options: NewOptions(inv)}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether capture runs, what it follows and how far behind it is",
		Long: `Say whether the capture runs: as its heartbeat shows (the state file the
capture rewrites every few seconds: its process alive, its heartbeat
fresh), and as the service manager sees the installed service. Then,
for every agent found on this machine or captured before: the sessions
loom keeps of it (also once the agent deleted its files), its session
files still on this machine, whether loom's
import hooks are in its settings, when a file of it was last captured
and how long after it changed (the lag), and how many files changed
since their last import, or were never imported (pending).`,
		Example: `  loom capture status
  loom capture status --json`,
		Args: command.NoArgs,
	}
	cmd.RunE = command.RunE(opts, nil, runF, statusRun)
	return cmd
}

// statusRun collects the status and prints it, as JSON with --json.
func statusRun(ctx context.Context, opts *StatusOptions) error {
	st, err := Collect(ctx, opts.Options)
	if err != nil {
		return err
	}
	if opts.JSON() {
		return command.WriteJSON(opts.IO.Out, st)
	}
	printStatus(opts.Options, st)
	return nil
}

// Collect gathers the status: the heartbeat, the service manager's word
// and each agent's capture.
func Collect(ctx context.Context, opts *Options) (*Status, error) {
	now := opts.Now()
	path, err := opts.statePath()
	if err != nil {
		return nil, err
	}
	state, err := capture.ReadState(path)
	if err != nil {
		return nil, err
	}
	live := capture.Live(state, now)
	out := &Status{Running: live.Running, Why: live.Why, Agents: []AgentStatus{}}
	if state != nil {
		out.StartedAt, out.HeartbeatAt = &state.StartedAt, &state.Heartbeat
		if live.Running {
			out.PID = state.PID
		}
	}
	out.Service = opts.serviceState(ctx)
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return nil, err
	}
	hookOf := map[string]*hooks.Report{}
	if reps, err := hooks.Statuses(ctx, placesOf(opts)); err == nil {
		for _, r := range reps {
			hookOf[r.Agent] = r
		}
	}
	shared := importer.SharedRoots(opts.Formats, opts.Getenv, opts.Home())
	for _, fm := range opts.Formats {
		roots := fm.Roots(opts.Getenv, opts.Home())
		if len(roots) == 0 {
			continue
		}
		a, err := agentStatus(ctx, st, opts.User(), importer.Target{Format: fm, Roots: roots})
		if err != nil {
			return nil, err
		}
		if a.Sessions == 0 && a.LastCaptureAt == nil && (!anyExists(roots) || a.Files == 0 && allShared(roots, shared)) {
			// Neither on this machine nor captured (a directory it
			// shares with another agent, holding none of its files,
			// says only that the other one is here).
			continue
		}
		if r, ok := hookOf[a.Agent]; ok {
			on := r.Import && r.Problem == ""
			a.Hooks = &on
			if r.Import {
				a.HooksProblem = r.Problem
			}
		}
		out.Agents = append(out.Agents, *a)
	}
	return out, nil
}

// allShared says whether every root is another agent's directory too.
func allShared(roots []string, shared map[string]bool) bool {
	for _, r := range roots {
		if !shared[filepath.Clean(r)] {
			return false
		}
	}
	return true
}

func anyExists(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// agentStatus compares an agent's files with what the store recorded
// of them.
func agentStatus(ctx context.Context, st loom.Store, user string, t importer.Target) (*AgentStatus, error) {
	cov, err := importer.Cover(ctx, st, user, t)
	if err != nil {
		return nil, err
	}
	tool := t.Format.Tool()
	a := &AgentStatus{Agent: tool, Roots: t.Roots, Files: len(cov)}
	if err := capturedOf(ctx, st, user, a); err != nil {
		return nil, err
	}
	var last *importer.Coverage
	for i := range cov {
		c := &cov[i]
		if c.Held != importer.HeldWhole {
			a.Pending++
			if a.PendingSince == nil || c.ModTime.Before(*a.PendingSince) {
				at := c.ModTime
				a.PendingSince = &at
			}
		}
		if !c.ImportedAt.IsZero() && (last == nil || c.ImportedAt.After(last.ImportedAt)) {
			last = c
		}
	}
	if last != nil && (a.LastCaptureAt == nil || !last.ImportedAt.Before(*a.LastCaptureAt)) {
		at := last.ImportedAt
		a.LastCaptureAt = &at
		if last.Held == importer.HeldWhole {
			lag := max(0, last.ImportedAt.Sub(last.ModTime)).Milliseconds()
			a.LagMS = &lag
		}
	}
	return a, nil
}

// capturedOf sets a's sessions and last capture from the store: the
// sessions loom keeps of a's agent, and the newest record of a file it
// read, whether the agent still has its files or deleted them.
func capturedOf(ctx context.Context, st loom.Store, user string, a *AgentStatus) error {
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Surface: a.Agent, Kind: loom.KindMain, Archived: loom.WithArchived})
	if err != nil {
		return err
	}
	a.Sessions = len(ss)
	recs, err := st.ImportedFiles(ctx, user, a.Agent)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if !r.ImportedAt.IsZero() && (a.LastCaptureAt == nil || r.ImportedAt.After(*a.LastCaptureAt)) {
			at := r.ImportedAt
			a.LastCaptureAt = &at
		}
	}
	return nil
}

// serviceState asks the service manager about the installed service;
// nil when none is installed.
func (opts *Options) serviceState(ctx context.Context) *ServiceState {
	mgr := platform(opts.GOOS)
	if mgr == "" {
		return nil
	}
	s := &ServiceState{Manager: mgr, Path: opts.servicePath()}
	if _, err := os.Stat(s.Path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	name := map[string]string{"systemd": "systemctl", "launchd": "launchctl"}[mgr]
	if _, err := opts.LookPath(name); err != nil {
		s.Problem = name + " is not on PATH"
		return s
	}
	if mgr == "systemd" {
		out, err := opts.Manager(ctx, "systemctl", "--user", "show", capture.UnitName, "--property=ActiveState,SubState,UnitFileState,MainPID,NRestarts")
		if err != nil {
			s.Problem = "systemctl --user show: " + firstLine(out, err)
			return s
		}
		props := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
				props[k] = v
			}
		}
		s.State = props["ActiveState"]
		if sub := props["SubState"]; sub != "" {
			s.State += " (" + sub + ")"
		}
		if u := props["UnitFileState"]; u != "" {
			on := u == "enabled"
			s.Enabled = &on
		}
		s.PID, _ = strconv.Atoi(props["MainPID"])
		if n, err := strconv.Atoi(props["NRestarts"]); err == nil {
			s.Restarts = &n
		}
		return s
	}
	out, err := opts.Manager(ctx, "launchctl", "print", "gui/"+strconv.Itoa(os.Getuid())+"/"+capture.Label)
	if err != nil {
		s.State = "not loaded"
		return s
	}
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), " = ")
		switch {
		case !ok:
		case k == "state":
			s.State = v
		case k == "pid":
			s.PID, _ = strconv.Atoi(v)
		case k == "runs":
			if n, err := strconv.Atoi(v); err == nil {
				n = max(0, n-1)
				s.Restarts = &n
			}
		}
	}
	return s
}

func printStatus(opts *Options, st *Status) {
	out := opts.IO.Out
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	pl := placesOf(opts)
	if st.Running {
		fmt.Fprintf(out, "Capture: %s (%s", cs.Green("running"), st.Why)
		if st.StartedAt != nil {
			fmt.Fprintf(out, ", since %s", st.StartedAt.Local().Format("2006-01-02 15:04"))
		}
		fmt.Fprintln(out, ")")
	} else {
		fmt.Fprintf(out, "Capture: %s (%s)\n", cs.Yellow("not running"), st.Why)
	}
	switch s := st.Service; {
	case s == nil:
		fmt.Fprintln(out, "Service: not installed (loom capture install sets it up)")
	case s.Problem != "":
		fmt.Fprintf(out, "Service: %s, state unknown: %s\n", hooks.Short(pl, s.Path), s.Problem)
	default:
		fmt.Fprintf(out, "Service: %s: %s", hooks.Short(pl, s.Path), s.State)
		if s.Enabled != nil && !*s.Enabled {
			fmt.Fprint(out, ", not enabled")
		}
		if s.Restarts != nil && *s.Restarts > 0 {
			fmt.Fprintf(out, ", restarted %s", human.Plural(*s.Restarts, "time"))
		}
		fmt.Fprintln(out)
	}
	if len(st.Agents) == 0 {
		fmt.Fprintln(out, "No agent loom reads is on this machine (loom session import --from list says where it looks).")
		return
	}
	fmt.Fprintln(out)
	t := term.NewTable(opts.IO)
	t.Header("AGENT", "SESSIONS", "FILES", "LAST CAPTURE", "LAG", "PENDING", "HOOKS")
	for _, a := range st.Agents {
		t.AddField(a.Agent, nil)
		t.AddField(human.Count(int64(a.Sessions)), nil)
		t.AddField(human.Count(int64(a.Files)), nil)
		if a.LastCaptureAt != nil {
			t.AddField(human.ShortAgo(now, *a.LastCaptureAt), nil)
		} else {
			t.AddField("never", nil)
		}
		if a.LagMS != nil {
			t.AddField(lagText(time.Duration(*a.LagMS)*time.Millisecond), nil)
		} else {
			t.AddField("-", nil)
		}
		switch {
		case a.Pending == 0:
			t.AddField("0", nil)
		default:
			t.AddField(fmt.Sprintf("%s (oldest %s)", human.Count(int64(a.Pending)), human.ShortAgo(now, *a.PendingSince)), cs.Yellow)
		}
		switch {
		case a.Hooks == nil:
			t.AddField("-", nil)
		case *a.Hooks:
			t.AddField("yes", nil)
		case a.HooksProblem != "":
			t.AddField("broken", cs.Yellow)
		default:
			t.AddField("no", nil)
		}
		t.EndRow()
	}
	t.Render()
	for _, a := range st.Agents {
		if a.HooksProblem != "" {
			fmt.Fprintln(out, opts.IO.WrapErr(cs.Yellow(hooks.Label(a.Agent)+"'s hooks do not run")+": "+a.HooksProblem))
		}
	}
}

// lagText writes a lag compactly: to the tenth of a second under a
// minute, else in its largest whole unit.
func lagText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return human.Duration(d)
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}
