package usage

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/cmdtest"
	"github.com/loomhq/loom/pricing"
)

// prices takes --json and no argument.
func TestNewCmdPricesOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdPrices, "--json"); !got.JSON || got.PriceTable == nil {
		t.Errorf("prices --json: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdPrices); got.JSON {
		t.Errorf("prices: %+v", got)
	}
	cmdtest.Rejects(t, newCmdPrices, "anthropic")
}

// prices lists config.toml's prices first, then the bundled ones.
func TestPricesRunListsTheTable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options()
	if err := pricesRun(opts); err != nil {
		t.Fatal(err)
	}
	rs := rows(text(ios.Out))
	if want := []string{"anthropic", "house-model", "3", "15", "0", "0", "0", "", "config"}; !slices.Equal(rs[0], want) {
		t.Errorf("first line %q, want config.toml's price %q", rs[0], want)
	}
	if len(rs) < 10 || rs[len(rs)-1][8] != "bundled" {
		t.Errorf("%d lines, the last %q: want the bundled prices after", len(rs), rs[len(rs)-1])
	}

	opts, ios = w.options()
	opts.JSON = true
	if err := pricesRun(opts); err != nil {
		t.Fatal(err)
	}
	var got struct {
		AsOf   string          `json:"as_of"`
		Prices []pricing.Entry `json:"prices"`
	}
	if err := json.Unmarshal([]byte(text(ios.Out)), &got); err != nil || got.AsOf != pricing.AsOf || len(got.Prices) != len(rs) || got.Prices[0].Model != "house-model" {
		t.Errorf("--json: %v, %s", err, strings.SplitN(text(ios.Out), "\n", 8))
	}
}
