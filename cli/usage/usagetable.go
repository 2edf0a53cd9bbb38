package usage

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// writeUsageJSON writes loom usage --json: every list as an array, never
// null, and in a team the usage by member too.
func writeUsageJSON(ios *term.IOStreams, rep *loom.UsageReport, byMember []loom.UsageRow, team bool) error {
	for _, rows := range []*[]loom.UsageRow{&rep.BySession, &rep.ByProject, &rep.BySurface, &rep.ByModel, &byMember} {
		if *rows == nil {
			*rows = []loom.UsageRow{}
		}
	}
	if team {
		return command.WriteJSON(ios.Out, struct {
			*loom.UsageReport
			ByMember []loom.UsageRow `json:"by_member"`
		}{rep, byMember})
	}
	return command.WriteJSON(ios.Out, rep)
}

// writeUsageTotal writes the total line of loom usage: its figures on a
// terminal, wrapped at its width unless --wide; tab-separated columns
// when piped.
func writeUsageTotal(opts *Options, rep *loom.UsageReport) {
	ios := opts.IO
	if ios.IsStdoutTTY() {
		cs := ios.ColorScheme()
		total := human.Usage(rep.Total)
		if opts.report.wide {
			fmt.Fprintf(ios.Out, "%s %s\n", cs.Bold("Total:"), total)
		} else {
			// Wrapped between its figures at the terminal's width.
			lines := term.WrapWords(strings.Split(total, " · "), " · ", ios.TerminalWidth()-len("Total: "))
			fmt.Fprintf(ios.Out, "%s %s\n", cs.Bold("Total:"), strings.Join(lines, "\n       "))
		}
		return
	}
	u := rep.Total
	msgs := 0
	for _, r := range rep.BySession {
		msgs += r.Messages
	}
	fmt.Fprintf(ios.Out, "total\t\t\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", len(rep.BySession), msgs, u.InputTokens, u.OutputTokens,
		u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.APICalls, plainCost(u))
}

// usageColumn is a column of token counts in a table of loom usage.
type usageColumn struct {
	header string
	value  func(loom.Usage) int64
}

// usageColumns are the token columns of a table of rows: all of them
// when piped; on a terminal, which has no room for columns that say
// nothing, those with a figure in a row.
func usageColumns(tty bool, rows []loom.UsageRow) []usageColumn {
	columns := []usageColumn{
		{"INPUT", func(u loom.Usage) int64 { return u.InputTokens }},
		{"OUTPUT", func(u loom.Usage) int64 { return u.OutputTokens }},
		{"REASONING", func(u loom.Usage) int64 { return u.ReasoningTokens }},
		{"CACHE READ", func(u loom.Usage) int64 { return u.CacheReadTokens }},
		{"CACHE WRITE", func(u loom.Usage) int64 { return u.CacheWriteTokens }},
		{"CALLS", func(u loom.Usage) int64 { return u.APICalls }},
	}
	if !tty {
		return columns
	}
	kept := columns[:0:0]
	for _, c := range columns {
		for _, r := range rows {
			if c.value(r.Usage) != 0 {
				kept = append(kept, c)
				break
			}
		}
	}
	return kept
}

// writeUsageSection writes one table of loom usage (by session,
// project, member, surface or model), its first limit rows when limit
// is more than 0; nothing when rows is empty.
func writeUsageSection(ctx context.Context, opts *Options, st loom.Store, name string, rows []loom.UsageRow, limit int) error {
	if len(rows) == 0 {
		return nil
	}
	ios := opts.IO
	tty := ios.IsStdoutTTY()
	shown := rows
	if limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	columns := usageColumns(tty, shown)
	if tty {
		fmt.Fprintln(ios.Out)
	}
	tp := term.NewTable(ios)
	header := []string{name, "SESSIONS", "MESSAGES"}
	for _, c := range columns {
		header = append(header, c.header)
	}
	header = append(header, "COST")
	tp.Header(header...)
	// A narrow terminal keeps the name, input, output and cost.
	tp.Compact(indexes(header, "SESSIONS", "CACHE WRITE", "CACHE READ", "REASONING", "CALLS", "MESSAGES")...)
	tp.SetLayout(layout(opts.report.compact, opts.report.wide))
	tp.Flex(0)
	keys := make([]string, len(shown))
	for i, r := range shown {
		keys[i] = r.Key
	}
	idLen := term.AbbrevLen(keys)
	if len(shown) > 0 && shown[0].Group == "session" {
		idLen = opts.RefLen(ctx, st, keys)
	}
	for _, r := range shown {
		addUsageRow(ios, tp, r, columns, idLen)
	}
	if err := tp.Render(); err != nil {
		return err
	}
	if tty {
		command.WriteMore(ios, len(rows)-len(shown))
		writeHidden(ios, tp)
	}
	return nil
}

// addUsageRow adds r to a table of loom usage: on a terminal its label
// (a session's abbreviated id and name) and human figures; piped, its
// group, key and name and plain figures.
func addUsageRow(ios *term.IOStreams, tp *term.Table, r loom.UsageRow, columns []usageColumn, idLen int) {
	tty := ios.IsStdoutTTY()
	if tty {
		label := r.Name
		if r.Group == "session" {
			label = term.AbbrevID(ios, r.Key, idLen) + " " + r.Name
		}
		tp.AddField(label, nil)
	} else {
		tp.AddField(r.Group, nil)
		tp.AddField(r.Key, nil)
		tp.AddField(r.Name, nil)
	}
	tp.AddField(strconv.Itoa(r.Sessions), nil)
	tp.AddField(strconv.Itoa(r.Messages), nil)
	for _, c := range columns {
		if tty {
			tp.AddField(human.Count(c.value(r.Usage)), nil)
		} else {
			tp.AddField(strconv.FormatInt(c.value(r.Usage), 10), nil)
		}
	}
	if tty {
		tp.AddField(human.UsageCost(r.Usage), ios.ColorScheme().Green)
	} else {
		tp.AddField(plainCost(r.Usage), nil)
	}
	tp.EndRow()
}
