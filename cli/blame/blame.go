// Package blame is loom blame: which agent session wrote each line of a
// file in a git work tree (and which lines humans wrote), the sessions
// behind commits, the share of lines agents wrote in a repository, and
// Agent Trace records of it all.
package blame

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/safefile"
	"github.com/loomhq/loom/observe"
	"github.com/loomhq/loom/secrets"
)

// Options are the options of `loom blame`.
type Options struct {
	IO *term.IOStreams
	// Store opens the store: the edit index is brought up to date in
	// it before it is read.
	Store func(context.Context) (loom.Engine, error)
	// DisplayID is an id as a terminal shows it.
	DisplayID func(ctx context.Context, st loom.Store, id string) string
	Now       func() time.Time
	// Cwd is the working directory, which relative paths are taken
	// from.
	Cwd func() (string, error)
	// BlameCache is the line-age cache's directory ("" for none).
	BlameCache string
	Version    string
	User       string
	JSON       bool

	// File is the file blamed, From and To the lines kept (0: all).
	File     string
	From, To int
	// Rev blames the file at a commit instead of the work tree's.
	Rev string
	// Traces are Agent Trace files read besides the repository's
	// .agent-trace/traces.jsonl (NoTraces: neither).
	Traces   []string
	NoTraces bool
	// MaxSize is the largest file blamed, in bytes (0: any size).
	MaxSize int64
	// Secrets is the secret detector: what loom blame pr prints of the
	// sessions (their titles) is made to be passed on, and goes through
	// it.
	Secrets func() (*secrets.Detector, error)
	// TeamStores opens the stores of the teams on this machine (ref
	// names one; "" every one).
	TeamStores func(ctx context.Context, ref string) ([]command.TeamStore, error)
	// Team is --team (only that team's sessions besides one's own),
	// NoTeam --no-team (one's own alone).
	Team   string
	NoTeam bool
	// Observed is the directory of the records of what agents' shell
	// calls changed (loom blame observe), "" for none.
	Observed string

	// union reads one's own sessions and the teams' (nil when no team's
	// were read), stores the stores it reads, in its order.
	union  *blame.Sources
	stores []loom.Store
	// teams name the team of each store ("" for one's own).
	teams []string
}

// defaultMaxSize is the largest file loom blame takes unless told: a
// file larger is generated or data more often than code, and its blame
// takes long and much memory.
const defaultMaxSize = 10 << 20

// NewCmdBlame builds loom blame and its subcommands. runF, when not
// nil, is called with the options instead of running the command (for
// tests).
func NewCmdBlame(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := newOptions(inv)
	cmd := &cobra.Command{
		Use:   "blame FILE[:LINES]",
		Short: "Show which agent session wrote each line of a file",
		Long: `Attribute each line of a file in a git work tree to the agent session
that wrote it — session, turn, agent and model — or say that a human
wrote it, that a human changed a line an agent wrote (mixed), or that
its origin is unknown. It works backwards, for the whole history, from
the file edits of every session loom holds (imported or its own),
matched to the file's lines through git blame: lines keep their
session through commits, renames, moves between files, re-indentation
and later edits around them.

LINES is one line (FILE:12), which also prints the conversation around
the edit that wrote it — the prompt that asked for it, the agent's
reasoning where it was kept, the edit and what came after — or a range
(FILE:10-40). --rev blames the file as a commit has it.

Agent Trace records that other tools wrote in the repository
(.agent-trace/traces.jsonl) or that --trace names are read too: their
attribution stands for lines no session of loom's accounts for.
Nothing is written into the repository; see loom blame trace export.

On a team member's machine the teams' shared sessions (loom team sync)
are read too, each agent line naming the member whose session wrote it:
--team NAME reads that team's alone, --no-team none.

The subcommands are commits (the sessions behind a commit or a range),
summary (the share of lines agents wrote, by directory, agent and
model), pr (who wrote a pull request's added lines), notes (git notes
of the Git AI standard) and trace (Agent Trace records). A file named
like one of them is given as ./NAME.`,
		Example: `  loom blame server/handler.go
  loom blame server/handler.go:120-160
  loom blame server/handler.go:142
  loom blame --json api.go | jq -r '.lines[].session_id // empty' | sort -u
  loom blame --rev v1.2.0 README.md
  loom blame --team core server/handler.go`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.parseTarget(args[0]); err != nil {
				return err
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return blameRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Rev, "rev", "", "blame the file as this commit has it")
	cmd.Flags().StringArrayVar(&opts.Traces, "trace", nil, "read Agent Trace records from this file too (repeatable)")
	cmd.Flags().BoolVar(&opts.NoTraces, "no-trace", false, "read no Agent Trace records")
	cmd.Flags().Int64Var(&opts.MaxSize, "max-size", defaultMaxSize, "blame files up to this many bytes (0: any size)")
	addTeamFlags(cmd, opts)
	cmd.AddCommand(newCmdCommits(inv, nil), newCmdSummary(inv, nil), newCmdPR(inv, nil), newCmdNotes(inv, nil), newCmdTrace(inv), newCmdObserve(inv))
	return cmd
}

func newOptions(inv *command.Invocation) *Options {
	return &Options{
		IO:         inv.IO,
		Store:      inv.Store,
		DisplayID:  inv.Scope().DisplayID,
		Now:        inv.TimeNow,
		Cwd:        inv.Cwd,
		BlameCache: inv.BlameCache(),
		Version:    inv.Version,
		Secrets:    command.ConfigLoader(inv.Config).Detector,
		TeamStores: inv.TeamStores,
		Observed:   observedDir(inv),
	}
}

// observedDir is where loom blame observe keeps its records.
func observedDir(inv *command.Invocation) string {
	d, err := inv.Dirs()
	if err != nil {
		return ""
	}
	return observe.Dir(d.Data)
}

// addTeamFlags gives cmd --team and --no-team.
func addTeamFlags(cmd *cobra.Command, o *Options) {
	command.TeamFlag(cmd, &o.Team, "credit lines to your sessions and those team `NAME` shares only, alone the only team's (default: every team's on this machine)")
	cmd.Flags().BoolVar(&o.NoTeam, "no-team", false, "credit lines to your own sessions alone, none of a team's")
	cmd.MarkFlagsMutuallyExclusive("team", "no-team")
}

// parseTarget reads FILE[:LINES]: a file that exists with the colon in
// its name is that file.
func (o *Options) parseTarget(arg string) error {
	o.File = arg
	i := strings.LastIndexByte(arg, ':')
	if i <= 0 {
		return nil
	}
	if _, err := os.Stat(arg); err == nil {
		return nil
	}
	lines, ok := blame.ParseLines(arg[i+1:])
	if !ok || lines.From == 0 {
		return command.UsageErrorf("%q: LINES is a line (FILE:12) or a range (FILE:10-40)", arg)
	}
	o.File, o.From, o.To = arg[:i], lines.From, lines.To
	return nil
}

// blamer is a Blamer over the store opts opens, with the Agent Trace
// records to read.
func (o *Options) blamer(ctx context.Context) (*blame.Blamer, loom.Store, error) {
	st, err := o.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	var es loom.EditStore = st
	var versions loom.EditVersioner = st
	roots := st.Optional().Roots
	if !o.NoTeam && o.TeamStores != nil {
		teams, err := o.TeamStores(ctx, o.Team)
		if err != nil {
			return nil, nil, err
		}
		if len(teams) > 0 {
			// One's own sessions are named as the team names one.
			u := &blame.Sources{List: []blame.Source{{Store: es, Roots: roots}}, Me: teams[0].Team.Me}
			o.stores, o.teams = []loom.Store{st}, []string{""}
			for _, t := range teams {
				u.List = append(u.List, blame.Source{Team: t.Team.Name, Store: t.Store, Roots: t.Store.Optional().Roots})
				o.stores, o.teams = append(o.stores, t.Store), append(o.teams, t.Team.Name)
			}
			o.union, es, roots, versions = u, u, u, nil
		}
	}
	sessions := sessionsOf(func(ctx context.Context, id string) (*loom.Session, error) { return o.storeOf(st, id).Session(ctx, id) })
	if o.Observed != "" {
		// What the hooks saw shell calls change: the records of the work
		// trees each query reaches, read when it asks.
		if log := observe.Open(o.Observed); !log.Empty() {
			es = &observe.Edits{EditStore: es, Log: log, Session: observe.ByKey(st, o.User)}
			if versions != nil {
				versions = observe.Versioned{EditVersioner: versions, Log: log}
			}
		}
	}
	return &blame.Blamer{Store: es, Team: o.union, Roots: roots, Versions: versions, Sessions: sessions, UserID: o.User, Now: o.Now, Cache: o.BlameCache}, st, nil
}

// sessionsOf reads a session from whichever store holds it (one's own,
// or a team's).
type sessionsOf func(ctx context.Context, id string) (*loom.Session, error)

func (f sessionsOf) Session(ctx context.Context, id string) (*loom.Session, error) { return f(ctx, id) }

// teamOf names the team whose store holds session id ("" for one's own).
func teamOf(o *Options, id string) string {
	if o.union == nil {
		return ""
	}
	if i := o.union.Holds(id); i >= 0 && i < len(o.teams) {
		return o.teams[i]
	}
	return ""
}

// storeOf is the store that holds session id: a team's for a teammate's
// session, else st (one's own).
func (o *Options) storeOf(st loom.Store, id string) loom.Store {
	if o.union == nil {
		return st
	}
	if i := o.union.Holds(id); i >= 0 && i < len(o.stores) {
		return o.stores[i]
	}
	return st
}

// readTraces reads the repository's Agent Trace records and those of
// files.
func readTraces(top string, files []string, none bool) ([]blame.Record, error) {
	if none {
		return nil, nil
	}
	recs, err := blame.RepoTraces(top)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		rs, err := blame.ReadTraceFile(f)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
	}
	return recs, nil
}

// gcForOneFile has the garbage collector of a process that blames one
// file (or sums a directory's) run a quarter as often, unless the user set GOGC or GOMEMLIMIT:
// the process lives a fraction of a second, and most of what it
// allocates is the answer it prints, so collecting at every doubling
// of a small heap was a fifth of a repeated blame's CPU time
// (docs/performance.md). A soft limit of 512 MB keeps a large file's
// blame from growing to four times its live heap.
func gcForOneFile() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(512 << 20)
}

func blameRun(ctx context.Context, o *Options) error {
	gcForOneFile()
	// The store is opened while git finds the file (a process of git's
	// each): neither waits for the other.
	type blamer struct {
		b   *blame.Blamer
		st  loom.Store
		err error
	}
	opened := make(chan blamer, 1)
	go func() {
		b, st, err := o.blamer(ctx)
		opened <- blamer{b, st, err}
	}()
	file := o.File
	var g blame.Git
	var rel string
	cwd, err := o.Cwd()
	if err == nil || filepath.IsAbs(file) {
		if !filepath.IsAbs(file) {
			file = filepath.Join(cwd, file)
		}
		g, rel, err = (&blame.Blamer{}).Open(ctx, file)
	}
	bo := <-opened
	if bo.err != nil {
		return bo.err
	}
	if err != nil {
		return err
	}
	b, st := bo.b, bo.st
	if fi, err := os.Stat(file); err == nil && o.MaxSize > 0 && o.Rev == "" && fi.Size() > o.MaxSize {
		return loom.Errorf(loom.EINVALID, "%s is %s: loom blame takes files up to %s (--max-size 0 blames it whatever its size)",
			o.File, safefile.Size(fi.Size()), safefile.Size(o.MaxSize))
	}
	if b.Traces, err = readTraces(g.Dir, o.Traces, o.NoTraces); err != nil {
		return err
	}
	res, err := b.Blame(ctx, g, rel, o.Rev)
	if err != nil {
		return err
	}
	if err := res.Keep(blame.LineRange{From: o.From, To: o.To}); err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintln(o.IO.ErrOut, term.SanitizeLine(n))
	}
	if o.From > 0 && o.From == o.To {
		return lineRun(ctx, o, st, res)
	}
	if o.JSON {
		return writeResultJSON(o.IO.Out, res)
	}
	printLines(ctx, o, st, res.Lines)
	return nil
}

// printLines prints lines as git blame does: who wrote it (session,
// agent, turn and model, or human or unknown), then the line.
func printLines(ctx context.Context, o *Options, st loom.Store, lines []Line) {
	if len(lines) == 0 {
		return
	}
	cs := o.IO.ColorScheme()
	width := len(strconv.Itoa(lines[len(lines)-1].N))
	ids := map[string]string{}
	whos := make([]string, len(lines))
	pad := 0
	for i, l := range lines {
		who := l.Kind
		if l.SessionID != "" {
			id, ok := ids[l.SessionID]
			if !ok {
				id = o.DisplayID(ctx, o.storeOf(st, l.SessionID), l.SessionID)
				if l.Member != "" {
					id += " @" + l.Member
				}
				ids[l.SessionID] = id
			}
			who = term.SanitizeLine(fmt.Sprintf("%s %s t%d %s", id, l.Agent, l.Turn, l.Model))
			switch {
			case l.Kind == Mixed:
				who += " (mixed)"
			case l.Evidence == blame.EvidenceProgram:
				// A program the agent ran named the file: less sure.
				who += " (program?)"
			case l.Evidence == blame.EvidenceShell:
				who += " (sed)"
			}
		}
		whos[i] = who
		pad = max(pad, len([]rune(who)))
	}
	// One write for many lines: a file of thousands of lines is as many
	// system calls otherwise.
	out := bufio.NewWriterSize(o.IO.Out, 64<<10)
	defer out.Flush()
	for i, l := range lines {
		who := whos[i] + strings.Repeat(" ", pad-len([]rune(whos[i])))
		if l.SessionID != "" {
			who = cs.Cyan(who)
		} else {
			who = cs.Gray(who)
		}
		fmt.Fprintf(out, "%s %*d) %s\n", who, width, l.N, showLine(l.Text))
	}
}

// showLine is a line of a file as a terminal shows it: tabs as four
// spaces, so that indentation shows, and nothing a terminal would take
// for a command.
func showLine(s string) string {
	return term.SanitizeLine(strings.ReplaceAll(s, "\t", "    "))
}

// Line and the kinds, as package blame has them.
type Line = blame.Line

const Mixed = blame.Mixed
