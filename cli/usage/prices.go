package usage

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/pricing"
)

// newCmdPrices builds loom usage prices. runF, when not nil, is called
// with the options instead of running the command (for tests).
func newCmdPrices(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := newOptions(inv)
	return &cobra.Command{
		Use:   "prices",
		Short: "List the prices every report is worked out from",
		Long: `List the price table every usage report prices tokens with: the
bundled prices (dated: the month they were taken from the providers'
price lists) and, first, those config.toml's [prices] adds, which win
over a bundled price of the same model. Prices are US dollars per
million tokens (1H WRITE: a write to a cache kept for an hour, which
Anthropic bills at twice the input price); a model's snapshot names (-20250514, -latest) take its
base name's price. A model in no row is reported as unpriced, never $0.`,
		Example: `  loom usage prices
  loom usage prices --json | jq '.prices[] | select(.provider == "anthropic")'`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return pricesRun(opts)
		},
	}
}

// pricesRun lists the price table.
func pricesRun(opts *Options) error {
	t, err := opts.PriceTable()
	if err != nil {
		return err
	}
	entries := t.Entries()
	ios := opts.IO
	if opts.JSON {
		return command.WriteJSON(ios.Out, struct {
			AsOf   string          `json:"as_of"`
			Prices []pricing.Entry `json:"prices"`
		}{pricing.AsOf, entries})
	}
	tty := ios.IsStdoutTTY()
	if tty {
		fmt.Fprintf(ios.Out, "Prices as of %s, US dollars per million tokens.\n", pricing.AsOf)
	}
	tp := term.NewTable(ios)
	tp.Header("PROVIDER", "MODEL", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "1H WRITE", "LONG CONTEXT", "SOURCE")
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for _, e := range entries {
		long := ""
		if l := e.LongContext; l != nil {
			long = num(l.Input) + "/" + num(l.Output)
		}
		source := e.Source
		if e.Overridden {
			source = "bundled, overridden"
		}
		hour := e.CacheWrite1h
		if hour == 0 {
			hour = e.CacheWrite
		}
		for _, c := range []string{cmpOrAny(e.Provider), e.Model, num(e.Input), num(e.Output), num(e.CacheRead), num(e.CacheWrite), num(hour), long, source} {
			tp.AddField(c, nil)
		}
		tp.EndRow()
	}
	return tp.Render()
}

// cmpOrAny names the provider of a price that holds for any provider.
func cmpOrAny(provider string) string {
	if provider == "" {
		return "any"
	}
	return provider
}
