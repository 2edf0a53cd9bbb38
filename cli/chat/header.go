package chat

import (
	"context"
	"fmt"
	"strconv"

	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// resumed says which session was resumed and shows its recent history.
func (c *chat) resumed(ctx context.Context) error {
	s := c.conv.Session()
	cs := c.opts.IO.ColorScheme()
	title := "-"
	if s.Title != "" {
		title = strconv.Quote(term.SanitizeLine(s.Title))
	}
	fmt.Fprintln(c.opts.IO.ErrOut, c.opts.IO.WrapErr(fmt.Sprintf("%s %s %s (%s, %s)", cs.Gray("resuming session"), s.ID, cs.Bold(title),
		human.Plural(s.MessageCount, "message"), term.SanitizeLine(s.Model))))
	if c.opts.NoHistory {
		return nil
	}
	limit := 10
	if c.opts.FullHistory {
		limit = 0
	}
	return c.showHistory(ctx, limit)
}

// welcome is the first screen of a new session on a terminal: what
// answers (model and provider), where (the project), and how to go on.
func (c *chat) welcome() {
	s := c.conv.Session()
	cs := c.opts.IO.ColorScheme()
	fmt.Fprintln(c.opts.IO.ErrOut, c.opts.IO.WrapErr(fmt.Sprintf("%s %s %s", cs.Bold("loom"),
		cs.Gray("·"), term.SanitizeLine(s.Model)+cs.Gray(" via "+term.SanitizeLine(s.Provider)+" · project ")+term.SanitizeLine(s.Project.Name)+cs.Gray(" · new session"))))
	fmt.Fprintln(c.opts.IO.ErrOut, cs.Gray(c.opts.IO.WrapErr("Enter sends, "+term.InputHelp+"; /help lists the commands, Ctrl+D leaves.")))
}
