package team

import (
	"context"
	"fmt"

	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/human"
)

// BudgetOptions are loom team budget's.
type BudgetOptions struct {
	*Options
	Records, RecordBytes, Entries, EntryBytes string
}

func newCmdBudget(inv *command.Invocation, runF func(*BudgetOptions) error) *cobra.Command {
	opts := &BudgetOptions{Options: newOptions(inv)}
	cmd := newCmd(inv, &cobra.Command{
		Use:   "budget [--team NAME] [--records N] [--record-bytes SIZE] [--entries N] [--entry-bytes SIZE]",
		Short: "Print or set what the hub takes of each member: records and chain entries, by count and bytes",
		Long: `Budget prints the team's budget per member: how many records (and
bytes of them) and how many chain entries (and bytes of them) one member,
with every machine of theirs, may put on the hub, where every teammate
downloads them. The hub refuses a push or an entry past it: 429 past a
count, 413 past bytes. With a flag, the team's admin sets that budget
(a signed entry of the team's chain: every member and the hub read it);
0 sets it back to its default. A SIZE is bytes, or with a unit: 512MB,
2GiB. The admin's own entries and the joins are not counted.`,
		Example: `  loom team budget
  loom team budget --records 200000 --record-bytes 4GiB
  loom team budget --team core --entries 2000 --json`,
		Args: command.ArgsBetween(0, 0),
	}, opts, nil, runF, budgetRun)
	teamFlag(cmd, opts.Options)
	cmd.Flags().StringVar(&opts.Records, "records", "", "set the records one member may have on the hub to `N`")
	cmd.Flags().StringVar(&opts.RecordBytes, "record-bytes", "", "set the bytes of one member's records to `SIZE`")
	cmd.Flags().StringVar(&opts.Entries, "entries", "", "set the chain entries one member may sign to `N`")
	cmd.Flags().StringVar(&opts.EntryBytes, "entry-bytes", "", "set the bytes of one member's chain entries to `SIZE`")
	return cmd
}

// budgetRun prints the team's budgets, or sets them (the admin).
func budgetRun(ctx context.Context, opts *BudgetOptions) error {
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	v, err := r.Verify(ctx, s)
	if err != nil {
		return err
	}
	b, set := v.Budget, false
	for _, f := range []struct {
		val   string
		name  string
		bytes bool
		to    *int64
	}{{opts.Records, "records", false, &b.Records}, {opts.RecordBytes, "record-bytes", true, &b.RecordBytes}, {opts.Entries, "entries", false, &b.Entries}, {opts.EntryBytes, "entry-bytes", true, &b.EntryBytes}} {
		if f.val == "" {
			continue
		}
		n, err := parseBudget(f.val, f.bytes)
		if err != nil {
			return command.UsageErrorf("--%s %s: %v", f.name, f.val, err)
		}
		*f.to, set = n, true
	}
	if set {
		if v, err = r.SetBudget(ctx, s, b); err != nil {
			return fmt.Errorf("team %s: set its budget: %w", s.Name, err)
		}
	}
	now := v.Budgets()
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"team": v.Name, "records": now.Records, "record_bytes": now.RecordBytes, "entries": now.Entries, "entry_bytes": now.EntryBytes})
	}
	fmt.Fprintf(opts.IO.Out, "team %s: each member may have %s records (%s) on the hub and sign %s chain entries (%s)\n", v.Name,
		human.Count(now.Records), sizeOf(now.RecordBytes), human.Count(now.Entries), sizeOf(now.EntryBytes))
	return nil
}

// units are the sizes' units, binary whatever their spelling.
var units = []struct {
	suffix string
	n      int64
}{{"gib", 1 << 30}, {"gb", 1 << 30}, {"g", 1 << 30}, {"mib", 1 << 20}, {"mb", 1 << 20}, {"m", 1 << 20}, {"kib", 1 << 10}, {"kb", 1 << 10}, {"k", 1 << 10}, {"b", 1}}

// parseBudget reads a budget's value: a whole number, or with bytes a
// whole number of bytes or of a unit (512MiB, 2GB, 64k; all binary).
func parseBudget(s string, bytes bool) (int64, error) {
	v, mul := strings.ToLower(strings.TrimSpace(s)), int64(1)
	if bytes {
		for _, u := range units {
			if num, ok := strings.CutSuffix(v, u.suffix); ok {
				v, mul = strings.TrimSpace(num), u.n
				break
			}
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<50)/mul {
		what := "a whole number"
		if bytes {
			what = "a size (bytes, or 512MiB, 2GiB)"
		}
		return 0, fmt.Errorf("a budget is %s, 0 (the default) or more", what)
	}
	return n * mul, nil
}

// sizeOf prints n bytes in the largest binary unit that divides them.
func sizeOf(n int64) string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.n && n%u.n == 0 {
			return fmt.Sprintf("%d %s", n/u.n, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
