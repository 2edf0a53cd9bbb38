// Package doctor is loom doctor: whether capture runs, and which sessions
// other agents will delete within days under their own retention
// settings, with whether loom holds each whole (package retention); and
// the one-line warning the chat and the status line show when that
// matters.
package doctor

import (
	"context"
	"fmt"
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
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
	"github.com/loomhq/loom/retention"
)

// Options are the options of loom doctor.
type Options struct {
	IO        *term.IOStreams
	Getenv    func(string) string
	Home      func() string
	Dirs      func() (paths.Dirs, error)
	Now       func() time.Time
	Formats   []importer.Format
	ReadStore func(context.Context) (loom.Engine, error)
	User      string
	JSON      bool
	// Within is how far ahead to look.
	Within time.Duration
	// System is the root of the machine-wide settings files ("/").
	System string
}

// NewOptions are the options of inv's run.
func NewOptions(inv *command.Invocation) *Options {
	return &Options{IO: inv.IO, Getenv: inv.Getenv, Home: inv.Home, Dirs: inv.Dirs, Now: inv.TimeNow,
		Formats: inv.Formats, ReadStore: inv.ReadStore, Within: DefaultWithin, System: "/"}
}

// DefaultWithin is how far ahead loom doctor looks.
const DefaultWithin = 7 * 24 * time.Hour

// Report is what loom doctor reports (--json prints it).
type Report struct {
	Capture CaptureReport `json:"capture"`
	// WithinDays is how far ahead it looked.
	WithinDays float64                 `json:"within_days"`
	Agents     []retention.AgentReport `json:"agents"`
	// AtRisk counts the sessions due within the horizon, Unheld those
	// of them that loom does not hold whole.
	AtRisk int `json:"at_risk"`
	Unheld int `json:"unheld"`
	// RecallHooks counts the recall hooks that answered within their
	// budget and those that ran out of time (and gave the agent nothing).
	RecallHooks recall.HookCounts `json:"recall_hooks"`
	// BrokenHooks are the agents whose settings hold loom's hooks but
	// cannot run the loom they name, with why.
	BrokenHooks []BrokenHook `json:"broken_hooks"`
}

// BrokenHook is an agent whose hooks name a loom that does not run.
type BrokenHook struct {
	Agent   string `json:"agent"`
	File    string `json:"file"`
	Program string `json:"program"`
	Problem string `json:"problem"`
}

// CaptureReport says whether capture runs, as its heartbeat shows.
type CaptureReport struct {
	Running bool   `json:"running"`
	Why     string `json:"why"`
	// Service is the capture service's file when loom capture install
	// wrote one: installed, whether it runs or not.
	Service string `json:"service,omitempty"`
}

// NewCmdDoctor builds loom doctor.
func NewCmdDoctor(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := NewOptions(inv)
	within := "7d"
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Name the sessions other agents will delete soon, and whether loom holds them",
		Long: `Read each agent's retention setting as the agent itself reads it (Claude
Code's cleanupPeriodDays, 30 days by default; Gemini CLI's
general.sessionRetention, 30 days by default), apply the agent's own
rule to its session files on this machine, and name every session it
will delete within --within (7 days), with whether loom holds it whole:
its file as the last import read it (held), changed since (behind), or
never imported (not held). Say whether capture runs (loom capture), which
keeps loom's copy up to date by itself.

A session loom holds whole loses nothing when its agent deletes it
(loom session restore-to puts it back where the agent finds it). For one
it does not, import now: loom session import --from AGENT. See
docs/durability.md.`,
		Example: `  loom doctor
  loom doctor --within 30d
  loom doctor --json | jq '.agents[].at_risk[] | select(.held != "whole")'`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := parseWithin(within)
			if err != nil {
				return err
			}
			opts.Within, opts.User, opts.JSON = d, inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return doctorRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&within, "within", within, "how far ahead to look: `DAYS` such as 7d, or a duration such as 36h")
	return cmd
}

func parseWithin(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		var n float64
		if _, err := fmt.Sscanf(d, "%g", &n); err == nil && n >= 0 && n <= 3650 {
			return time.Duration(n * float64(24*time.Hour)), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	return 0, command.UsageErrorf("--within %q: want days such as 7d, or a duration such as 36h", s)
}

// Check gathers the report: capture's heartbeat and every agent's
// sessions due within opts.Within.
func Check(ctx context.Context, opts *Options) (*Report, error) {
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return nil, err
	}
	now := opts.Now()
	pl := retention.Place{Getenv: opts.Getenv, Home: opts.Home(), System: opts.System}
	rr, err := retention.Check(ctx, st, opts.User, opts.Formats, pl, now, opts.Within)
	if err != nil {
		return nil, err
	}
	rep := &Report{WithinDays: opts.Within.Hours() / 24, Agents: rr.Agents, AtRisk: rr.AtRisk(), Unheld: len(rr.Unheld())}
	rep.Capture = captureLiveness(opts, now)
	if d, err := opts.Dirs(); err == nil {
		rep.RecallHooks = recall.ReadHookCounts(d.State)
	}
	rep.BrokenHooks = []BrokenHook{}
	if hs, err := hooks.Statuses(ctx, hooks.Places{Getenv: opts.Getenv, Home: opts.Home}); err == nil {
		for _, h := range hs {
			if h.Problem != "" {
				rep.BrokenHooks = append(rep.BrokenHooks, BrokenHook{Agent: h.Agent, File: h.File, Program: h.Program, Problem: h.Problem})
			}
		}
	}
	return rep, nil
}

func captureLiveness(opts *Options, now time.Time) CaptureReport {
	d, err := opts.Dirs()
	if err != nil {
		return CaptureReport{Why: err.Error()}
	}
	s, err := capture.ReadState(capture.StatePath(d.State))
	if err != nil {
		return CaptureReport{Why: err.Error()}
	}
	l := capture.Live(s, now)
	return CaptureReport{Running: l.Running, Why: l.Why, Service: capture.Installed(d.State)}
}

func doctorRun(ctx context.Context, opts *Options) error {
	rep, err := Check(ctx, opts)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, rep)
	}
	printReport(opts, rep)
	return nil
}

func printReport(opts *Options, rep *Report) {
	out := opts.IO.Out
	cs := opts.IO.ColorScheme()
	pl := hooks.Places{Getenv: opts.Getenv, Home: opts.Home}
	if rep.Capture.Running {
		fmt.Fprintf(out, "Capture: %s (%s).\n", cs.Green("running"), rep.Capture.Why)
	} else {
		fmt.Fprintln(out, opts.IO.WrapErr(fmt.Sprintf("Capture: %s (%s); %s", cs.Yellow("not running"), rep.Capture.Why, captureAdvice(rep.Capture, pl))))
	}
	if h := rep.RecallHooks; h.Late > 0 {
		fmt.Fprintln(out, opts.IO.WrapErr(recallAdvice(h, rep.Capture, cs.Yellow)))
	}
	for _, h := range rep.BrokenHooks {
		fmt.Fprintln(out, opts.IO.WrapErr(cs.Yellow(hooks.Label(h.Agent)+"'s hooks do not run")+" ("+hooks.Short(pl, h.File)+"): "+h.Problem))
	}
	within := human.Plural(int(rep.WithinDays+0.5), "day")
	now := opts.Now()
	for _, a := range rep.Agents {
		fmt.Fprintln(out)
		label := hooks.Label(a.Agent)
		fmt.Fprintln(out, opts.IO.WrapErr(cs.Bold(label)+": "+policyWords(a.Policy, pl)))
		if !a.Deletes || a.Problem != "" {
			continue
		}
		if len(a.AtRisk) == 0 {
			fmt.Fprintf(out, "  %s; none will be deleted within %s.\n", human.Plural(a.Sessions, "session"), within)
			continue
		}
		// One line a file: a session Gemini CLI wrote in two files
		// has both named, as each is deleted.
		files := map[string]int{}
		unheld := map[string]bool{}
		for _, s := range a.AtRisk {
			files[s.Key()]++
			if s.Held != importer.HeldWhole {
				unheld[s.Key()] = true
			}
		}
		fmt.Fprintf(out, "  %s; %d will be deleted within %s", human.Plural(a.Sessions, "session"), len(files), within)
		if len(a.AtRisk) != len(files) {
			fmt.Fprintf(out, " (%s)", human.Plural(len(a.AtRisk), "file"))
		}
		if len(unheld) > 0 {
			fmt.Fprintf(out, ", %s", cs.Yellow(fmt.Sprintf("%d not held whole by loom", len(unheld))))
		}
		fmt.Fprintln(out, ":")
		for _, s := range a.AtRisk {
			when := s.DeletesAt.Local().Format("2006-01-02")
			if !s.DeletesAt.After(now) {
				when = "due now   "
			}
			held := map[importer.Held]string{importer.HeldWhole: "held    ", importer.HeldBehind: "behind  ", importer.HeldNone: "not held"}[s.Held]
			if s.Held != importer.HeldWhole {
				held = cs.Yellow(held)
			}
			name := term.SanitizeLine(s.Title)
			if name == "" || files[s.Key()] > 1 {
				name = hooks.Short(pl, s.Path)
			}
			id := s.SourceID
			if len(id) > 8 {
				id = id[:8]
			}
			fmt.Fprintf(out, "    %s  %s  %-8s  %s\n", when, held, id, name)
		}
	}
	fmt.Fprintln(out)
	switch {
	case rep.Unheld > 0:
		fmt.Fprintln(out, opts.IO.WrapErr(cs.Yellow(fmt.Sprintf("%s will be deleted before loom holds %s whole:", human.Plural(rep.Unheld, "session"), them(rep.Unheld)))+
			" import now with loom session import --from AGENT"+keepUp(rep.Capture)))
	case rep.AtRisk > 0:
		fmt.Fprintf(out, "Every session due within %s is held whole by loom.\n", within)
	default:
		fmt.Fprintf(out, "No session is due within %s.\n", within)
	}
}

// captureAdvice is what to do when capture does not run: install its
// service, or, once installed, find out why it does not run.
func captureAdvice(c CaptureReport, pl hooks.Places) string {
	if c.Service == "" {
		return "loom capture install keeps loom's copy up to date by itself."
	}
	return "its service is installed (" + hooks.Short(pl, c.Service) + ") but does not run: loom capture status says why, and docs/durability.md what to do where no service manager runs."
}

// recallAdvice says how many recall hooks ran out of time, and what
// gives them more: a warm recall (the capture service answers the hooks)
// and a longer budget.
func recallAdvice(h recall.HookCounts, c CaptureReport, warn func(string) string) string {
	line := "Recall hooks: " + warn(fmt.Sprintf("%d of %d ran out of time", h.Late, h.Late+h.Answered)) + " and gave the agent nothing; "
	if !c.Running {
		line += "the capture service answers them from a warm store (loom capture install), and "
	}
	return line + "a longer budget gives them time: [recall] hook_time in config.toml or LOOM_RECALL_HOOK_TIME (see docs/search.md)."
}

// keepUp ends the advice for sessions not held whole: how loom keeps up
// from then on.
func keepUp(c CaptureReport) string {
	switch {
	case c.Running:
		return "."
	case c.Service != "":
		return ", and start the capture service (loom capture status says why it does not run)."
	}
	return ", and run loom capture install to keep up by itself."
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// policyWords says an agent's retention in a sentence.
func policyWords(p retention.Policy, pl hooks.Places) string {
	from := " (default)"
	if p.File != "" {
		from = " (" + p.Setting + " in " + hooks.Short(pl, p.File) + ")"
	}
	switch {
	case p.Problem != "":
		where := ""
		if p.File != "" {
			where = hooks.Short(pl, p.File) + ": "
		}
		return where + p.Problem + "."
	case !p.Deletes:
		return p.When + "."
	}
	var rule []string
	if p.MaxAge > 0 {
		rule = append(rule, fmt.Sprintf("keeps a session %s after %s", retention.DayWords(p.MaxDays), p.Since))
	}
	if p.MaxCount > 0 {
		rule = append(rule, fmt.Sprintf("keeps the %d newest of each project", p.MaxCount))
	}
	return strings.Join(rule, " and ") + from + ", and deletes what is due " + p.When + "."
}
