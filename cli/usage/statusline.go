package usage

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/report"
)

// statusPayload is what Claude Code passes a status line command on
// stdin; every field is optional, as versions differ.
type statusPayload struct {
	SessionID string `json:"session_id"`
	// TranscriptPath is the session's file, which the status line
	// imports so that its figures are right before any other import.
	TranscriptPath string `json:"transcript_path"`
	Model          struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Cost struct {
		TotalCostUSD *float64 `json:"total_cost_usd"`
	} `json:"cost"`
	ContextWindow *struct {
		Size                int64    `json:"context_window_size"`
		RemainingPercentage *float64 `json:"remaining_percentage"`
		CurrentUsage        *struct {
			InputTokens              int64 `json:"input_tokens"`
			CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		} `json:"current_usage"`
	} `json:"context_window"`
}

// statusWarningBudget is how long the status line waits for the check
// behind its warning (doctor.Warner), once in ten minutes: a status
// line is drawn often and must stay quick.
const statusWarningBudget = 150 * time.Millisecond

// statusAgent is the agent whose status line this is: today and the
// block count its sessions.
const statusAgent = "claude-code"

// statusMaxInput bounds what the status line reads from stdin.
const statusMaxInput = 1 << 20

// newCmdStatusline builds loom usage statusline. runF, when not nil, is
// called with the options instead of running the command (for tests).
func newCmdStatusline(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := newOptions(inv)
	return &cobra.Command{
		Use:   "statusline",
		Short: "Print one status line for Claude Code from its status line JSON on stdin",
		Long: `Print one short line for Claude Code's status line: the model, this
session's cost, Claude Code's cost today (and what other agents, loom's
own chat among them, spent beside it), Claude Code's active 5-hour block
with its time left and burn rate, and the context left when Claude Code
says it. It reads
the JSON Claude Code passes a status line command on stdin, imports the
new lines of the session's file it names (transcript_path), and counts
from the store's roll-up; the session's own figure comes from Claude
Code when loom cannot read the file. In ~/.claude/settings.json:

  "statusLine": {"type": "command", "command": "loom usage statusline"}`,
		Example: `  echo '{"session_id":"…","model":{"display_name":"Opus"}}' |
    loom usage statusline
  loom usage statusline < status.json   # the JSON Claude Code passes`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.User = inv.User()
			if runF != nil {
				return runF(opts)
			}
			return statuslineRun(cmd.Context(), opts)
		},
	}
}

func statuslineRun(ctx context.Context, opts *Options) error {
	p, err := readStatusPayload(ctx, opts)
	if err != nil {
		return err
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	prices, err := opts.PriceTable()
	if err != nil {
		return err
	}
	var fields []string
	if m := cmp.Or(p.Model.DisplayName, p.Model.ID); m != "" {
		fields = append(fields, m)
	}
	if c, ok := sessionCost(ctx, st, opts.User, p, prices); ok {
		fields = append(fields, "session "+human.Cost(c))
	}
	spent, err := statusSpent(ctx, opts, st, prices)
	if err != nil {
		return err
	}
	fields = append(fields, spent...)
	if left, ok := contextLeft(p); ok {
		fields = append(fields, fmt.Sprintf("%d%% context left", left))
	}
	if opts.Warning != nil {
		if w := opts.Warning(ctx); w != "" {
			fields = append(fields, w)
		}
	}
	_, err = fmt.Fprintln(opts.IO.Out, strings.Join(fields, " · "))
	return err
}

// readStatusPayload reads the JSON Claude Code passes on stdin (none is
// an empty payload) and imports the new lines of its session's file.
func readStatusPayload(ctx context.Context, opts *Options) (statusPayload, error) {
	var p statusPayload
	b, err := io.ReadAll(io.LimitReader(opts.IO.In, statusMaxInput))
	if err != nil {
		return p, fmt.Errorf("reading the status line JSON: %w", err)
	}
	if len(strings.TrimSpace(string(b))) > 0 {
		if err := json.Unmarshal(b, &p); err != nil {
			return p, command.UsageErrorf("stdin is not Claude Code's status line JSON: %v", err)
		}
	}
	if p.TranscriptPath != "" && opts.ImportFile != nil {
		// The session's new lines, so that it and today count them on
		// a store nothing else imports into. A failure leaves the line
		// to what the store holds: a status line never fails for it.
		if _, err := opts.ImportFile(ctx, "claude-code", p.TranscriptPath); err != nil {
			slog.Debug("statusline: import the session's file", "path", p.TranscriptPath, "err", err)
		}
	}
	return p, nil
}

// statusSpent are the status line's fields of what was spent: today's
// cost, and the active 5-hour block's with its time left and burn rate
// when one is active.
func statusSpent(ctx context.Context, opts *Options, st loom.Store, prices *pricing.Table) ([]string, error) {
	now := opts.Now()
	y, mo, d := now.Date()
	midnight := time.Date(y, mo, d, 0, 0, 0, 0, time.Local)
	// From the hour: a bound on a quarter hour is read from the
	// roll-up, any other from the messages, hundreds of times slower.
	blockSince := now.Add(-2 * report.BlockLength).Truncate(time.Hour)
	// Today's and the blocks' slices in one read.
	since := midnight
	if blockSince.Before(since) {
		since = blockSince
	}
	read, err := st.UsageSlices(ctx, loom.UsageSliceFilter{UserID: opts.User, Since: since, LongContext: pricing.LongContextTokens})
	if err != nil {
		return nil, err
	}
	// Today and the block are Claude Code's, as the status line is; what
	// other agents (loom's own chat among them) spent today is said
	// beside it, never counted in without a word.
	var own slicesFrom
	for _, x := range read {
		if x.Surface == statusAgent {
			own = append(own, x)
		}
	}
	dayOf := func(sl slicesFrom) (float64, error) {
		r, err := report.Build(ctx, sl, report.Options{UserID: opts.User, By: report.Day, Since: midnight,
			Location: time.Local, Prices: prices, Now: now})
		if err != nil {
			return 0, err
		}
		return r.Total.Cost(), nil
	}
	today, err := dayOf(own)
	if err != nil {
		return nil, err
	}
	all, err := dayOf(slicesFrom(read))
	if err != nil {
		return nil, err
	}
	field := "today " + human.Cost(today)
	if other := loom.RoundCost(all - today); other >= 0.01 {
		field += " (+" + human.Cost(other) + " other agents)"
	}
	fields := []string{field}
	blocks, err := report.Build(ctx, own, report.Options{UserID: opts.User, By: report.Block, Since: blockSince,
		Location: time.Local, Prices: prices, Now: now})
	if err != nil {
		return nil, err
	}
	if a := blocks.Active(); a != nil {
		left := human.Span(float64(a.Block.RemainingMinutes * 60))
		block := fmt.Sprintf("block %s, %s left", human.Cost(a.Cost()), left)
		if a.Block.CostPerHour != nil {
			block += fmt.Sprintf(", %s/h", human.Cost(*a.Block.CostPerHour))
		}
		fields = append(fields, block)
	}
	return fields, nil
}

// slicesFrom answers a report from slices read before: those that
// start in the filter's bounds (quarter hours, as the reads' were).
type slicesFrom []loom.UsageSlice

// Usage implements report.Slicer: it names no session, and the status
// line makes no report by session, which alone asks.
func (s slicesFrom) Usage(context.Context, loom.UsageFilter) (*loom.UsageReport, error) {
	return nil, errors.New("usage slices read before name no session")
}

// UsageSlices implements report.Slicer.
func (s slicesFrom) UsageSlices(_ context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	var out []loom.UsageSlice
	for _, x := range s {
		if (f.Since.IsZero() || !x.Start.Before(f.Since)) && (f.Until.IsZero() || x.Start.Before(f.Until)) {
			out = append(out, x)
		}
	}
	return out, nil
}

// sessionCost is the cost of the session the payload names: what loom
// imported of it, priced as every report prices, else what Claude Code
// says.
func sessionCost(ctx context.Context, st loom.Store, user string, p statusPayload, prices *pricing.Table) (float64, bool) {
	if p.SessionID != "" && loom.ValidKey("claude-code:"+p.SessionID) == nil {
		ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Key: "claude-code:" + p.SessionID, Limit: 1})
		if err == nil && len(ss) == 1 {
			slices, err := st.UsageSlices(ctx, loom.UsageSliceFilter{UserID: user, SessionID: ss[0].ID, BySession: true,
				LongContext: pricing.LongContextTokens})
			cost, priced := 0.0, false
			for _, s := range slices {
				c, ok := prices.Cost(s.Provider, s.Model, s.Usage, s.LongContext)
				if !ok && s.Usage.CostUSD != 0 {
					c, ok = s.Usage.CostUSD, true
				}
				cost, priced = cost+c, priced || ok
			}
			if err == nil && priced {
				return cost, true
			}
		}
	}
	if c := p.Cost.TotalCostUSD; c != nil {
		return *c, true
	}
	return 0, false
}

// contextLeft is the share of the context window left, in percent, when
// the payload says it (newer Claude Code versions).
func contextLeft(p statusPayload) (int, bool) {
	cw := p.ContextWindow
	switch {
	case cw == nil:
		return 0, false
	case cw.RemainingPercentage != nil:
		return int(*cw.RemainingPercentage + 0.5), true
	case cw.Size > 0 && cw.CurrentUsage != nil:
		u := cw.CurrentUsage
		used := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		return max(0, int(100-100*float64(used)/float64(cw.Size)+0.5)), true
	}
	return 0, false
}
