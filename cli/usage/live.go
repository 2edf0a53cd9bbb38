package usage

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/report"
)

// usageLiveRun is `loom usage blocks --live`: the active block drawn
// anew every interval from the store, which other processes (an import
// --watch, loom's own agent) fill meanwhile. On a terminal the block is
// redrawn in place; piped, each redraw is one tab-separated line.
func usageLiveRun(ctx context.Context, opts *Options) error {
	rf := &opts.report
	if opts.JSON || rf.csv {
		return command.UsageErrorf("--live draws on a terminal or prints a line per redraw: use --json or --csv without it")
	}
	if rf.until != "" {
		return command.UsageErrorf("--live follows the active block: --until ends before it")
	}
	if rf.interval < 100*time.Millisecond {
		return command.UsageErrorf("--interval must be at least 100ms")
	}
	refresh(ctx, opts, rf.noImport)
	o, st, err := reportInput(ctx, opts)
	if err != nil {
		return err
	}
	ios := opts.IO
	tty := ios.IsStdoutTTY()
	tick := time.NewTicker(rf.interval)
	defer tick.Stop()
	for frame := 1; ; frame++ {
		o.Now = opts.Now()
		rep, err := report.Build(ctx, st, o)
		if err != nil {
			return agentUsage(err)
		}
		// Blocks from the last one's start on do not depend on the
		// messages before it: later redraws read from there.
		if n := len(rep.Rows); n > 0 && rep.Rows[n-1].Start.After(o.Since) {
			o.Since = rep.Rows[n-1].Start
		}
		if tty {
			fmt.Fprint(ios.Out, "\x1b[H\x1b[2J")
			drawLiveBlock(ios.Out, ios.ColorScheme(), rep, o.Now, rf.interval)
		} else {
			fmt.Fprintln(ios.Out, liveLine(rep, o.Now))
		}
		if rf.frames > 0 && frame >= rf.frames {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// drawLiveBlock writes the active block for people, or says there is
// none and what the last one was.
func drawLiveBlock(w io.Writer, cs *term.ColorScheme, rep *report.Report, now time.Time, every time.Duration) {
	usd := func(c *float64) string {
		if c == nil {
			return human.UnknownCost
		}
		return human.Cost(*c)
	}
	row := rep.Active()
	if row == nil {
		fmt.Fprintln(w, cs.Bold("No active 5-hour block")+cs.Gray("  "+now.Format("15:04:05")))
		if n := len(rep.Rows); n > 0 {
			last := rep.Rows[n-1]
			spent := "cost unknown"
			if last.CostUSD != nil {
				spent = human.Cost(*last.CostUSD)
			}
			fmt.Fprintf(w, "The last block was %s–%s: %s tokens, %s.\n", last.Start.Format("2006-01-02 15:04"), last.End.Format("15:04"),
				human.Count(last.TotalTokens), spent)
		}
		fmt.Fprintln(w, "A block starts with the next message with usage.")
	} else {
		b := row.Block
		fmt.Fprintf(w, "%s %s–%s %s\n\n", cs.Bold("Active 5-hour block"), row.Start.Format("2006-01-02 15:04"), row.End.Format("15:04"),
			cs.Gray(fmt.Sprintf("(%s left)  %s", human.Minutes(b.RemainingMinutes), now.Format("15:04:05"))))
		elapsed := 1 - float64(b.RemainingMinutes)/report.BlockLength.Minutes()
		const width = 30
		done := min(max(int(elapsed*width+0.5), 0), width)
		fmt.Fprintf(w, "  %s %3.0f%% of the block\n\n", strings.Repeat("█", done)+strings.Repeat("░", width-done), elapsed*100)
		fmt.Fprintf(w, "  %-10s %14s tokens  %10s\n", "Used", human.Count(row.TotalTokens), cs.Green(usd(row.CostUSD)))
		fmt.Fprintf(w, "  %-10s %14s tokens/h %9s/h\n", "Burn rate", human.Count(int64(b.TokensPerHour)), usd(b.CostPerHour))
		fmt.Fprintf(w, "  %-10s %14s tokens  %10s\n", "Projected", human.Count(b.ProjectedTokens), usd(b.ProjectedCostUSD))
		fmt.Fprintf(w, "\n  Models: %s\n", strings.Join(row.Models, ", "))
		for _, p := range row.Breakdown {
			fmt.Fprintf(w, "  └ %-24s %14s tokens  %10s\n", p.Name, human.Count(p.TotalTokens), usd(p.CostUSD))
		}
	}
	fmt.Fprintln(w, "\n"+cs.Gray(fmt.Sprintf("Redrawn every %s; Ctrl+C stops.", every)))
}

// liveLine is a redraw for scripts: the time, then "active" and the
// block's start, end, tokens, cost, burn rates and projections, or
// "none".
func liveLine(rep *report.Report, now time.Time) string {
	row := rep.Active()
	if row == nil {
		return now.Format(time.RFC3339) + "\tnone"
	}
	c := func(v *float64) string {
		if v == nil {
			return ""
		}
		return fmt.Sprint(*v)
	}
	b := row.Block
	return strings.Join([]string{now.Format(time.RFC3339), "active", row.Start.Format(time.RFC3339), row.End.Format(time.RFC3339),
		fmt.Sprint(row.TotalTokens), c(row.CostUSD), fmt.Sprint(b.TokensPerHour), c(b.CostPerHour),
		fmt.Sprint(b.ProjectedTokens), c(b.ProjectedCostUSD), fmt.Sprint(b.RemainingMinutes)}, "\t")
}
