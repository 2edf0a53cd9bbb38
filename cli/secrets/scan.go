package secrets

import (
	"context"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/human"
	sec "github.com/loomhq/loom/secrets"
)

// SessionFindings is what a scan found in one session (the JSON shape of
// `loom secrets scan --json`).
type SessionFindings struct {
	SessionID string         `json:"session_id"`
	Title     string         `json:"title"`
	Count     int            `json:"count"`
	Rules     map[string]int `json:"rules"`
	Places    []sec.Place    `json:"places"`
	// Echoes counts, of a redaction's Count, the repeats of secrets
	// found elsewhere, where no rule sees them (sec.Echoes); their
	// places are marked echo.
	Echoes int `json:"echoes,omitempty"`
}

// ScanReport is the JSON shape of `loom secrets scan --json`.
type ScanReport struct {
	Secrets  int                `json:"secrets"`
	Sessions []*SessionFindings `json:"sessions"`
	// Scanned counts the sessions looked at and the messages read (the
	// others were scanned before and have not changed since).
	ScannedSessions int `json:"scanned_sessions"`
	ScannedMessages int `json:"scanned_messages"`
}

// newCmdScan builds `loom secrets scan`. runF, when not nil, is called
// with the options instead of running the command (for tests).
func newCmdScan(inv *command.Invocation, runF func(*ScanOptions) error) *cobra.Command {
	opts := &ScanOptions{Common: commonOf(inv)}
	cmd := &cobra.Command{
		Use:   "scan [SESSION]",
		Short: "Report the secrets stored sessions hold, never their values",
		Long: `Report, per session and rule, the secrets stored sessions hold: how many,
and where (message id and seq, part index, field), with at most the first
and last four characters of each. Without SESSION, every session of the
user is scanned.

A scan remembers how far it read each session (in loom's state
directory), and the next one reads only what was written since; --full
reads everything again. Changing the rules or the allow-list in
config.toml starts over by itself.`,
		Example: `  loom secrets scan
  loom secrets scan 0196a3b2
  loom secrets scan --json | jq '.sessions[] | {session_id, rules}'
  loom secrets scan --full`,
		Args: command.ArgsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Ref = args[0]
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return scanRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Full, "full", false, "read every message again, not only those written since the last scan")
	return cmd
}

func scanRun(ctx context.Context, opts *ScanOptions) error {
	rep, err := scan(ctx, opts)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, rep)
	}
	writeScan(opts.IO.Out, rep)
	return nil
}

func scan(ctx context.Context, opts *ScanOptions) (*ScanReport, error) {
	d, err := opts.Detector()
	if err != nil {
		return nil, err
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return nil, err
	}
	sessions, err := sessionScope(ctx, &opts.Common, st, opts.Ref)
	if err != nil {
		return nil, err
	}
	memo, err := openMemo(&opts.Common, d)
	if err != nil {
		return nil, err
	}
	rep := &ScanReport{Sessions: []*SessionFindings{}}
	// Sessions are scanned by as many workers as there are cores (the
	// store reads in parallel), and reported in their order.
	type scanned struct {
		places []sec.Place
		read   int
		err    error
	}
	results := make([]scanned, len(sessions))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(sessions))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &results[i]
				if r.err = ctx.Err(); r.err == nil {
					r.places, r.read, r.err = memo.scan(ctx, st, d, sessions[i], opts.Full)
				}
			}
		}()
	}
	for i := range sessions {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, s := range sessions {
		places, read, err := results[i].places, results[i].read, results[i].err
		if err != nil {
			return nil, err
		}
		rep.ScannedSessions++
		rep.ScannedMessages += read
		if len(places) == 0 {
			continue
		}
		title, _ := d.Redact(s.Title)
		sf := &SessionFindings{SessionID: s.ID, Title: title, Count: len(places), Rules: map[string]int{}, Places: places}
		for _, p := range places {
			sf.Rules[p.RuleID]++
		}
		rep.Sessions = append(rep.Sessions, sf)
		rep.Secrets += len(places)
	}
	if err := memo.save(); err != nil {
		return nil, err
	}
	return rep, nil
}

func ruleCounts(rules map[string]int) string {
	ids := slices.Sorted(maps.Keys(rules))
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s %d", id, rules[id])
	}
	return strings.Join(parts, ", ")
}

func writeScan(w io.Writer, rep *ScanReport) {
	for _, s := range rep.Sessions {
		fmt.Fprintf(w, "%s %s: %s (%s)\n", s.SessionID, command.JSONString(human.OneLine(s.Title)), human.Plural(s.Count, "secret"), ruleCounts(s.Rules))
		for _, p := range s.Places {
			fmt.Fprintf(w, "  seq %-4d part %d %-8s %-22s %-10s id %s\n", p.Seq, p.Part, p.Field, p.RuleID, p.Hint, p.ID)
		}
	}
	if rep.Secrets == 0 {
		fmt.Fprintf(w, "no secrets found in %s (%s read)\n", human.Plural(rep.ScannedSessions, "session"), human.Plural(rep.ScannedMessages, "message"))
		return
	}
	fmt.Fprintf(w, "%s in %s of %s (%s read)\n", human.Plural(rep.Secrets, "secret"),
		human.Plural(len(rep.Sessions), "session"), human.Plural(rep.ScannedSessions, "session"), human.Plural(rep.ScannedMessages, "message"))
	fmt.Fprintln(w, "loom secrets redact replaces them; loom secrets allow ID keeps a value that is none")
}
