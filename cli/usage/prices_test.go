package usage

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/cmdtest"
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
	if got := cmdtest.Options(t, newCmdPrices, "sonnet", "gpt-5"); !slices.Equal(got.prices.models, []string{"sonnet", "gpt-5"}) {
		t.Errorf("prices sonnet gpt-5: %+v", got.prices)
	}
	cmdtest.Rejects(t, newCmdPrices, "--source", "x.json")
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
	sources := map[string]int{}
	for _, r := range rs {
		sources[r[8]]++
	}
	if len(rs) < 1000 || rs[1][8] != "bundled" || sources["bundled"] < 1000 || rs[len(rs)-1][8] != "loom" {
		t.Errorf("%d lines, the second %q, the last %q: want the bundled list after config.toml's, then loom's own prices of what it leaves out", len(rs), rs[1], rs[len(rs)-1])
	}

	opts, ios = w.options()
	opts.JSON = true
	if err := pricesRun(opts); err != nil {
		t.Fatal(err)
	}
	var got struct {
		AsOf   string          `json:"as_of"`
		Source string          `json:"source"`
		Prices []pricing.Entry `json:"prices"`
	}
	if err := json.Unmarshal([]byte(text(ios.Out)), &got); err != nil || got.AsOf != pricing.Bundled.AsOf() || len(got.Prices) != len(rs) || got.Prices[0].Model != "house-model" {
		t.Errorf("--json: %v, %s", err, strings.SplitN(text(ios.Out), "\n", 8))
	}
}
