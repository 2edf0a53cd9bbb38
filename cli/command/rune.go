package command

import (
	"context"

	"github.com/spf13/cobra"
)

// RunE is the RunE of a command on gh's pattern, whose options opts its
// flags fill: args, when not nil, fills opts from the arguments or
// refuses them (a usage error), then runF runs with opts when it is set
// (a test's, to see what the command would run with), else run does.
func RunE[O any](opts O, args func([]string) error, runF func(O) error, run func(context.Context, O) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, a []string) error {
		if args != nil {
			if err := args(a); err != nil {
				return err
			}
		}
		if runF != nil {
			return runF(opts)
		}
		return run(cmd.Context(), opts)
	}
}
