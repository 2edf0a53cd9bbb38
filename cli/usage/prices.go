package usage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/pricing"
)

// priceFlags are loom usage prices' own flags.
type priceFlags struct {
	update bool
	source string
	models []string
}

// newCmdPrices builds loom usage prices. runF, when not nil, is called
// with the options instead of running the command (for tests).
func newCmdPrices(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := newOptions(inv)
	opts.Dirs = inv.Dirs
	cmd := &cobra.Command{
		Use:   "prices [MODEL...]",
		Short: "List the prices every report is worked out from, or fetch the current ones",
		Long: `List the prices usage reports price tokens with: LiteLLM's list of
model prices (a dated snapshot of it is built into loom; --update
fetches the current one), and in front of it the prices config.toml's
[prices] adds, which win over the list's. MODEL limits the list to the
models whose provider/name holds it.

Prices are US dollars per million tokens. CACHE WRITE is a write to a
cache kept five minutes, 1H WRITE one kept for an hour; LONG CONTEXT is
the input/output price of a request whose prompt is above 200,000
tokens. A cache price the list leaves out is the input price. A model's
snapshot names (-20250514, -latest) take its base name's price; a
provider the list does not know (a gateway, a subscription) is priced by
the model's name. A model no source prices is reported as unpriced,
never as $0.

--update fetches LiteLLM's current list (or --source, a URL or a file,
for a copy of it) into the state directory; every report uses it from
then on. When it cannot be fetched, the prices in use stay, and the
error says of which day they are.`,
		Example: `  loom usage prices sonnet
  loom usage prices --json | jq '.prices[] | select(.provider == "anthropic")'
  loom usage prices --update
  loom usage prices --update --source ./model_prices_and_context_window.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = inv.JSON()
			opts.prices.models = args
			if opts.prices.source != "" && !opts.prices.update {
				return command.UsageErrorf("--source goes with --update")
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.prices.update {
				return pricesUpdateRun(cmd.Context(), opts)
			}
			return pricesRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.prices.update, "update", false, "fetch the current price list into the state directory")
	cmd.Flags().StringVar(&opts.prices.source, "source", "", "where --update fetches the list from: a URL or a file (default LiteLLM's)")
	return cmd
}

// pricesRun lists the price table.
func pricesRun(opts *Options) error {
	t, err := opts.PriceTable()
	if err != nil {
		return err
	}
	var entries []pricing.Entry
	for _, e := range t.Entries() {
		if matchesAny(e, opts.prices.models) {
			entries = append(entries, e)
		}
	}
	ios := opts.IO
	list := t.List()
	if opts.JSON {
		if entries == nil {
			entries = []pricing.Entry{}
		}
		return command.WriteJSON(ios.Out, struct {
			AsOf   string          `json:"as_of"`
			Source string          `json:"source"`
			Prices []pricing.Entry `json:"prices"`
		}{t.AsOf(), list.Source, entries})
	}
	tty := ios.IsStdoutTTY()
	if len(entries) == 0 {
		return fmt.Errorf("no price names %s (loom usage prices lists them all)", strings.Join(opts.prices.models, " or "))
	}
	if tty {
		fmt.Fprintln(ios.Out, ios.WrapErr(fmt.Sprintf("Prices of %s, as of %s; US dollars per million tokens; %s models.",
			list.Source, t.AsOf(), human.Count(int64(len(entries))))))
	}
	tp := term.NewTable(ios)
	header := []string{"PROVIDER", "MODEL", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "1H WRITE", "LONG CONTEXT", "SOURCE"}
	tp.Header(header...)
	// Names are cut (long provider names first) before a price is left
	// out; then the long-context, 1-hour and source columns go, and
	// the room they leave goes back to the names.
	tp.Flex(0, 1)
	tp.Drop(indexes(header, "LONG CONTEXT", "1H WRITE", "SOURCE")...)
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for _, e := range entries {
		long := ""
		if l := e.LongContext; l != nil {
			long = num(l.Input) + "/" + num(l.Output)
		}
		source := e.Source
		if e.Overridden {
			source += ", overridden"
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
	if err := tp.Render(); err != nil {
		return err
	}
	writeHidden(ios, tp)
	return nil
}

// matchesAny reports whether e's provider/model holds one of words
// (any entry when there are none).
func matchesAny(e pricing.Entry, words []string) bool {
	if len(words) == 0 {
		return true
	}
	name := strings.ToLower(cmpOrAny(e.Provider) + "/" + e.Model)
	for _, w := range words {
		if strings.Contains(name, strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// maxPriceList bounds what --update reads.
const maxPriceList = 64 << 20

// pricesUpdateRun fetches the price list into the state directory.
func pricesUpdateRun(ctx context.Context, opts *Options) error {
	src := opts.prices.source
	if src == "" {
		src = pricing.LiteLLMURL
	}
	t, err := opts.PriceTable()
	if err != nil {
		return err
	}
	d, err := opts.Dirs()
	if err != nil {
		return err
	}
	today := opts.Now().UTC().Format(time.DateOnly)
	l, err := fetchPriceList(ctx, src, today)
	if err != nil {
		in := t.List()
		return fmt.Errorf("%w; reports keep the prices of %s (%s)", err, t.AsOf(), in.Source)
	}
	path := filepath.Join(d.State, command.PricesFile)
	if err := command.WritePriceList(path, l); err != nil {
		return fmt.Errorf("keep the price list: %w", err)
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, struct {
			Source string `json:"source"`
			Date   string `json:"date"`
			Models int    `json:"models"`
			Path   string `json:"path"`
		}{l.Source, l.Date, len(l.Entries), path})
	}
	fmt.Fprintln(opts.IO.Out, opts.IO.WrapErr(fmt.Sprintf("Fetched the prices of %s models from %s, as of %s; every report uses them from now on.",
		human.Count(int64(len(l.Entries))), l.Source, l.Date)))
	return nil
}

// fetchPriceList reads LiteLLM's list from a URL or a file.
func fetchPriceList(ctx context.Context, src, today string) (*pricing.List, error) {
	var body io.Reader
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return nil, fmt.Errorf("fetch the price list: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("fetch the price list from %s: %w", src, unwrapURL(err))
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("fetch the price list from %s: %s", src, resp.Status)
		}
		body = resp.Body
	} else {
		f, err := os.Open(src)
		if err != nil {
			return nil, fmt.Errorf("read the price list: %w", err)
		}
		defer f.Close()
		body = f
	}
	l, err := pricing.ParseLiteLLM(io.LimitReader(body, maxPriceList), src, today)
	if err != nil {
		return nil, fmt.Errorf("read the price list from %s: %w", src, err)
	}
	return l, nil
}

// unwrapURL is what went wrong in a request, without Go's "Get URL:"
// in front, which the message says already.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// cmpOrAny names the provider of a price that holds for any provider.
func cmpOrAny(provider string) string {
	if provider == "" {
		return "any"
	}
	return provider
}
