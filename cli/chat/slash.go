package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// helpIndent is where chatHelp's descriptions start: a description too
// long for the terminal goes on below at that column.
const helpIndent = 17

const chatHelp = `/new             start a new session (this one is kept)
/rename TITLE    rename this session
/fork [TURN]     fork this session at TURN (default: all) and continue in the fork
/rewind [TURN]   go back to the end of TURN; later turns are kept in a fork
/usage           tokens and cost of this session
/profile NAME    switch profile (same session)
/history [N]     show the last N messages (default 10)
/search QUERY    search this project's sessions (-a QUERY: every project's)
/compact         summarise the context now (history is kept)
/help            this list
/exit            leave (Ctrl+D too)

Enter sends; Alt+Enter, or a \ ending the line, starts a new line; a
paste is one message, however many lines it has.`

// slashCommand runs a slash command of chat with its argument (trimmed,
// "" when none), saying what it did on out; it reports true when the
// chat is to end.
type slashCommand func(c *chat, ctx context.Context, arg string, out io.Writer) (bool, error)

// slashCommands are chat's slash commands by name.
var slashCommands = map[string]slashCommand{
	"/exit":    slashExit,
	"/quit":    slashExit,
	"/help":    slashHelp,
	"/new":     (*chat).slashNew,
	"/rename":  (*chat).slashRename,
	"/fork":    (*chat).slashFork,
	"/rewind":  (*chat).slashRewind,
	"/usage":   (*chat).slashUsage,
	"/profile": (*chat).slashProfile,
	"/history": (*chat).slashHistory,
	"/search":  (*chat).slashSearch,
	"/compact": (*chat).slashCompact,
}

func (c *chat) slash(ctx context.Context, line string) (bool, error) {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	run, ok := slashCommands[name]
	if !ok {
		return false, command.UsageErrorf("unknown command %s (try /help)", name)
	}
	// What a slash command says is wrapped at words, so that the
	// terminal never breaks an id or a word in two.
	return run(c, ctx, arg, c.opts.IO.ErrWrapped())
}

func slashExit(*chat, context.Context, string, io.Writer) (bool, error) { return true, nil }

func slashHelp(c *chat, _ context.Context, _ string, out io.Writer) (bool, error) {
	fmt.Fprintln(out, c.opts.IO.WrapErrHanging(chatHelp, helpIndent))
	return false, nil
}

func (c *chat) slashNew(ctx context.Context, _ string, out io.Writer) (bool, error) {
	old := c.conv.Session()
	if err := c.conv.New(ctx); err != nil {
		return false, err
	}
	c.announced = false
	if old.MessageCount > 0 {
		fmt.Fprintf(out, "new session; the previous one is kept: %s\n", old.ID)
	} else {
		fmt.Fprintln(out, "new session")
	}
	return false, nil
}

func (c *chat) slashRename(ctx context.Context, arg string, out io.Writer) (bool, error) {
	if arg == "" {
		return false, command.UsageErrorf("usage: /rename TITLE")
	}
	if err := c.conv.Rename(ctx, arg); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "renamed to %q\n", arg)
	return false, nil
}

func (c *chat) slashFork(ctx context.Context, arg string, out io.Writer) (bool, error) {
	s := c.conv.Session()
	from := s.ID
	if c.conv.Pending() {
		// The fork of the import is made now.
		from = c.conv.ContinuesImported().ID
	}
	turn := 0
	if arg != "" && s.MessageCount > 0 {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return false, command.UsageErrorf("usage: /fork [TURN], TURN a number from 1 to %d", s.TurnCount)
		}
		turn = n
	}
	fk, err := c.conv.Fork(ctx, turn)
	if err != nil {
		return false, err
	}
	c.announced = true
	fmt.Fprintf(out, "forked %s at turn %d: now in %s\n", from, fk.ForkTurn, fk.ID)
	return false, nil
}

func (c *chat) slashRewind(ctx context.Context, arg string, out io.Writer) (bool, error) {
	s := c.conv.Session()
	if err := s.CanRewind(); err != nil {
		return false, command.UsageErrorf("%s", loom.ErrorMessage(err))
	}
	turn, err := c.rewindTurn(ctx, s, arg)
	if err != nil {
		if errors.Is(err, term.ErrPromptAborted) || errors.Is(err, term.ErrNoAnswer) {
			fmt.Fprintln(out, c.opts.IO.ColorScheme().Gray("(no rewind: the session is as it was)"))
			return false, nil
		}
		return false, err
	}
	was := s.TurnCount
	fk, err := c.conv.Rewind(ctx, turn)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "rewound to the end of turn %d; %s kept in %s %q\n", turn, LaterTurns(turn, was), fk.ID, fk.Title)
	return false, nil
}

// rewindTurn is the turn /rewind goes back to: arg's, or on a terminal
// the one chosen from a list (an error of term.ErrPromptAborted or
// term.ErrNoAnswer when none is).
func (c *chat) rewindTurn(ctx context.Context, s *loom.Session, arg string) (int, error) {
	switch {
	case arg != "":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return 0, command.UsageErrorf("usage: /rewind [TURN], TURN a number from 1 to %d", s.TurnCount-1)
		}
		if err := s.CheckRewindTurn(n); err != nil {
			return 0, command.UsageErrorf("%s", loom.ErrorMessage(err))
		}
		return n, nil
	case c.opts.IO.CanPrompt():
		turns := s
		if c.conv.Pending() {
			// The turns are the import's until its fork is made.
			turns = c.conv.ContinuesImported()
		}
		n, err := ChooseTurn(ctx, c.opts.IO, c.st, turns, "Keep turns up to which turn?", s.TurnCount-1, false)
		if err != nil {
			return 0, err
		}
		return n, nil
	default:
		return 0, command.UsageErrorf("usage: /rewind TURN, TURN a number from 1 to %d", s.TurnCount-1)
	}
}

func (c *chat) slashUsage(_ context.Context, _ string, out io.Writer) (bool, error) {
	fmt.Fprintf(out, "%s  %s\n", c.opts.IO.ColorScheme().Bold("usage"), human.Usage(c.conv.Session().Usage))
	return false, nil
}

func (c *chat) slashProfile(ctx context.Context, arg string, out io.Writer) (bool, error) {
	if arg == "" {
		fmt.Fprintf(out, "profile: %s\n", command.OrDash(c.conv.Session().Profile))
		return false, nil
	}
	if err := c.conv.SetProfile(ctx, arg); err != nil {
		return false, err
	}
	s := c.conv.Session()
	fmt.Fprintf(out, "profile %s (model %s); same session\n", s.Profile, s.Model)
	return false, nil
}

func (c *chat) slashHistory(ctx context.Context, arg string, out io.Writer) (bool, error) {
	n := 10
	if arg != "" {
		v, err := strconv.Atoi(arg)
		if err != nil || v < 0 {
			return false, command.UsageErrorf("usage: /history [N]")
		}
		n = v
	}
	if c.conv.Session().MessageCount == 0 {
		fmt.Fprintln(out, "no messages yet")
		return false, nil
	}
	return false, c.showHistory(ctx, n)
}

func (c *chat) slashSearch(ctx context.Context, arg string, out io.Writer) (bool, error) {
	first, rest, _ := strings.Cut(arg, " ")
	all := first == "-a" || first == "--all-projects"
	if all {
		arg = strings.TrimSpace(rest)
	}
	if arg == "" {
		return false, command.UsageErrorf("usage: /search [-a] QUERY")
	}
	q := loom.SearchQuery{Text: arg, UserID: c.opts.User, Limit: 10}
	// This project's sessions unless -a, or where there is no
	// project (a working directory that is gone).
	var project *loom.Project
	if !all {
		if p, err := c.opts.Project(); err == nil {
			project = &p
			q.ProjectID = p.ID
		}
	}
	command.MarkForTerminal(c.opts.IO, &q)
	hits, err := c.st.Search(ctx, q)
	if err != nil {
		return false, err
	}
	if len(hits) == 0 {
		elsewhere, err := command.MatchesElsewhere(ctx, c.st, q)
		if err != nil {
			return false, err
		}
		if elsewhere {
			fmt.Fprintf(out, "No messages match %q in project %s (%s); /search -a %s searches every project.\n",
				arg, term.SanitizeLine(project.Name), term.SanitizeLine(project.Root), term.SanitizeLine(arg))
		} else {
			fmt.Fprintf(out, "No messages match %q.\n", arg)
		}
		return false, nil
	}
	if loom.Partial(hits) {
		fmt.Fprintln(out, command.PartialNote)
	}
	return false, command.WriteHits(c.opts.IO, hits, c.opts.Now(), c.opts.RefLen(ctx, c.st, command.HitSessions(hits)))
}

func (c *chat) slashCompact(ctx context.Context, _ string, _ io.Writer) (bool, error) {
	p := newTurnPrinter(c.opts.IO, false)
	p.begin()
	_, err := c.conv.Compact(ctx, p.event)
	p.end()
	return false, err
}
