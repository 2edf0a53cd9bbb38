package session

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// defaultShowLimit is how many messages `show` prints without --limit or
// --full-history: the same as chat shows on resume.
const defaultShowLimit = 10

// ShowOptions are the options of `loom session show`.
type ShowOptions struct {
	IO *term.IOStreams
	// ReadSession opens the store to read the session ref names, and
	// finds it.
	ReadSession func(ctx context.Context, ref string) (loom.Engine, *loom.Session, error)
	Now         func() time.Time
	JSON        bool

	Ref          string
	Limit        int
	FullHistory  bool
	ShowThinking bool
	// Full shows tool calls' whole input and output, not their first lines.
	Full bool
	// Turn shows one turn's messages and the lines its edits wrote that
	// still live.
	Turn int
	// User is whose edits are looked at.
	User string
	// BlameCache is the line-age cache's directory ("" for none).
	BlameCache string
}

func newCmdSessionShow(inv *command.Invocation, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{
		IO:          inv.IO,
		ReadSession: inv.ReadSession,
		Now:         inv.TimeNow,
		BlameCache:  inv.BlameCache(),
	}
	cmd := &cobra.Command{
		Use:   "show REF",
		Short: "Show a session's metadata and messages",
		Long: `Show a session's metadata and its last 10 messages (--limit N for the
newest N, --full-history for all of them, compaction summaries and what
they replaced included). Tool calls are shown as one line each with their
status and duration, what they were given on one line (the command of
a shell call, the path of a read) and the first 5 lines of their output;
--full shows their whole input and output. Reasoning is hidden unless
--show-thinking.

--turn N shows that turn's messages, and then the lines of files its
edits wrote that still live (see loom blame), file by file.

REF is a full id, a unique id prefix of at least 4 characters, a key, or a
title (case-insensitive).`,
		Example: `  loom session show 0196a3b2
  loom session show "flaky test" --full-history --show-thinking
  loom session show cli:api --limit 3
  loom session show 0196a3b2 --full
  loom session show 0196a3b2 --turn 3
  loom session show 0196a3b2 --json | jq '.messages | length'`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if opts.Limit < 0 {
				return command.UsageErrorf("--limit must be 1 or more")
			}
			if cmd.Flags().Changed("limit") && opts.FullHistory {
				return command.UsageErrorf("--limit and --full-history cannot be used together")
			}
			if !cmd.Flags().Changed("limit") {
				opts.Limit = defaultShowLimit
			}
			if opts.FullHistory || opts.Turn > 0 {
				opts.Limit = 0
			}
			if opts.Turn < 0 {
				return command.UsageErrorf("--turn must be 1 or more")
			}
			opts.JSON, opts.User = inv.JSON(), inv.User()
			if runF != nil {
				return runF(opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "limit", "L", defaultShowLimit, "show the newest N messages")
	cmd.Flags().BoolVar(&opts.FullHistory, "full-history", false, "show every message")
	cmd.Flags().BoolVar(&opts.ShowThinking, "show-thinking", false, "show reasoning")
	cmd.Flags().BoolVar(&opts.Full, "full", false, "show tool calls' whole input and output, and the agent's instructions unfolded")
	cmd.Flags().IntVarP(&opts.Turn, "turn", "t", 0, "show one turn, and the lines its edits wrote that still live")
	inv.AddTeamFlag(cmd)
	return cmd
}

func showRun(ctx context.Context, opts *ShowOptions) error {
	st, s, err := opts.ReadSession(ctx, opts.Ref)
	if err != nil {
		return err
	}
	// The session is read again with its messages in one snapshot, so
	// its counts agree with them while another process writes it.
	data, err := st.ReadSessions(ctx, []string{s.ID}, loom.MessageQuery{Limit: opts.Limit, Turn: opts.Turn})
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return loom.NotFound(s.ID)
	}
	s, msgs := data[0].Session, data[0].Messages
	if opts.Turn > 0 && opts.Turn > s.TurnCount {
		return loom.Errorf(loom.EINVALID, "session %s has %d turns: there is no turn %d", s.ID, s.TurnCount, opts.Turn)
	}
	var live []blame.FileLines
	if opts.Turn > 0 {
		b := &blame.Blamer{Store: st, Roots: st.Optional().Roots, Versions: st, UserID: opts.User, Now: opts.Now, Cache: opts.BlameCache}
		if live, err = b.TurnLines(ctx, s.ID, opts.Turn); err != nil {
			return err
		}
	}
	ios := opts.IO
	if opts.JSON {
		if msgs == nil {
			msgs = []*loom.Message{}
		}
		var b bytes.Buffer
		var v any = struct {
			Session  *loom.Session   `json:"session"`
			Messages []*loom.Message `json:"messages"`
		}{s, msgs}
		if opts.Turn > 0 {
			if live == nil {
				live = []blame.FileLines{}
			}
			v = struct {
				Session  *loom.Session     `json:"session"`
				Messages []*loom.Message   `json:"messages"`
				Lines    []blame.FileLines `json:"lines"`
			}{s, msgs, live}
		}
		if err := command.WriteJSON(&b, v); err != nil {
			return err
		}
		// A cost the price table does not know is null, never 0.
		_, err := ios.Out.Write(human.NullUnknownCosts(b.Bytes()))
		return err
	}
	now := opts.Now()
	WriteHeader(ios, ios.Out, s)
	if n := len(msgs); n < s.MessageCount {
		fmt.Fprintln(ios.Out, ios.ColorScheme().Gray(fmt.Sprintf("(the last %d of %d messages; --full-history shows all)", n, s.MessageCount)))
	}
	fmt.Fprintln(ios.Out)
	r := command.NewMessageRenderer(ios, now, opts.ShowThinking)
	r.Tools, r.FoldSystem = command.ToolsBrief, true
	if opts.Full {
		r.Tools, r.FoldSystem = command.ToolsFull, false
	}
	for i, m := range msgs {
		if err := r.Render(ios.Out, m); err != nil {
			return err
		}
		// A user message followed by another got no reply: its turn was
		// interrupted (Ctrl+C, Esc, a crash), as the dashboard says too.
		if m.Role == loom.RoleUser && i+1 < len(msgs) && msgs[i+1].Role == loom.RoleUser {
			fmt.Fprintln(ios.Out, ios.ColorScheme().Yellow("  (no reply: the turn was interrupted)"))
		}
	}
	if opts.Turn > 0 {
		writeLiveLines(ios, live)
	}
	return nil
}

// writeLiveLines says which lines a turn's edits wrote still live.
func writeLiveLines(ios *term.IOStreams, live []blame.FileLines) {
	cs := ios.ColorScheme()
	fmt.Fprintln(ios.Out)
	if len(live) == 0 {
		fmt.Fprintln(ios.Out, cs.Gray("No line this turn wrote lives in a file of a git work tree now."))
		return
	}
	fmt.Fprintln(ios.Out, cs.Bold("Lines this turn wrote that still live:"))
	for _, f := range live {
		line := fmt.Sprintf("  %s: %s (%d lines)", f.Path, strings.Join(blame.Ranges(f.Lines), ", "), len(f.Lines))
		if len(f.Mixed) > 0 {
			line += fmt.Sprintf("; changed since: %s", strings.Join(blame.Ranges(f.Mixed), ", "))
		}
		fmt.Fprintln(ios.Out, term.SanitizeLine(line))
	}
	fmt.Fprintln(ios.Out, cs.Gray("  loom blame FILE:LINE shows the conversation around a line"))
}

// WriteHeader writes a session's metadata as aligned name: value
// lines, each value escaped for the terminal (term.SanitizeLine).
func WriteHeader(ios *term.IOStreams, w io.Writer, s *loom.Session) {
	cs := ios.ColorScheme()
	title := s.Title
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintln(w, cs.Bold(term.SanitizeLine(title)))
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(w, "%s %s\n", cs.Gray(fmt.Sprintf("%-9s", name+":")), term.SanitizeLine(value))
		}
	}
	field("id", s.ID)
	field("key", loom.ShownKey(s.Key, s.Member))
	if s.Project.Root != "" {
		field("project", s.Project.Name+" ("+s.Project.Root+")")
	}
	switch s.Kind {
	case loom.KindFork:
		field("forked", fmt.Sprintf("from %s at turn %d", s.ParentID, s.ForkTurn))
	case loom.KindSubagent:
		field("parent", s.ParentID+" (sub-agent session)")
	}
	model := s.Model
	if s.Provider != "" && model != "" {
		model = s.Provider + ":" + model
	}
	field("model", model)
	field("profile", s.Profile)
	field("branch", s.GitBranch)
	if src := s.Source; src != nil {
		field("imported", strings.TrimSpace(src.Tool+" "+src.Version)+" from "+src.Path)
	}
	field("created", loom.FormatTime(s.CreatedAt))
	field("updated", loom.FormatTime(s.UpdatedAt))
	field("messages", fmt.Sprintf("%d in %s", s.MessageCount, human.Plural(s.TurnCount, "turn")))
	if !s.Usage.IsZero() {
		field("usage", human.Usage(s.Usage))
	}
	if s.Lock != nil {
		field("in use", fmt.Sprintf("by process %d on %s since %s", s.Lock.PID, s.Lock.Host, loom.FormatTime(s.Lock.Since)))
	}
	if s.DeletedAt != nil {
		field("deleted", loom.FormatTime(*s.DeletedAt))
	}
	if s.ArchivedAt != nil {
		field("archived", loom.FormatTime(*s.ArchivedAt)+" (loom session unarchive brings it back)")
	}
	if d := strings.TrimSpace(s.Description); d != "" {
		field("about", d)
	}
}
