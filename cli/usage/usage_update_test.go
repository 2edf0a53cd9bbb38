package usage_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/report"
)

// excerpt is a part of LiteLLM's own price list (pricing/testdata).
const excerpt = "../../pricing/testdata/litellm-excerpt.json"

// --update fetches LiteLLM's list (here a local copy served over HTTP,
// then a file) into the state directory and every report prices with
// it from then on; offline, the prices in use stay and the error says
// their date. It runs as the built binary, on today's clock: a list is
// dated the day it is fetched, and one older than the bundled snapshot
// gives way to it.
func TestUsagePricesUpdate(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	list, err := os.ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	// The copy prices gpt-5.3-codex at 1.75 in, 14 out.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(list) }))
	today := time.Now().UTC().Format(time.DateOnly)

	type listing struct {
		AsOf   string          `json:"as_of"`
		Source string          `json:"source"`
		Prices []pricing.Entry `json:"prices"`
	}
	before := clitest.DecodeJSON[listing](t, fx.MustExec(t, "usage", "prices", "--json"))
	if before.AsOf != pricing.Bundled.AsOf() || len(before.Prices) < 1000 {
		t.Fatalf("before: as of %s, %d prices", before.AsOf, len(before.Prices))
	}
	out := fx.MustExec(t, "usage", "prices", "--update", "--source", srv.URL+"/prices.json")
	if !strings.Contains(out, "Fetched the prices of ") || !strings.Contains(out, today) {
		t.Errorf("update said %q", out)
	}
	after := clitest.DecodeJSON[listing](t, fx.MustExec(t, "usage", "prices", "--json", "codex"))
	if after.AsOf != today || after.Source != srv.URL+"/prices.json" || len(after.Prices) == 0 ||
		after.Prices[0].Model != "gpt-5.3-codex" || after.Prices[0].Source != "fetched" {
		t.Fatalf("after: %+v", after)
	}
	// The models the copy leaves out keep loom's own price.
	for _, e := range after.Prices[1:] {
		if e.Source != "loom" {
			t.Errorf("%s/%s from %s", e.Provider, e.Model, e.Source)
		}
	}
	if _, err := os.Stat(filepath.Join(fx.Home, "state", "prices.json")); err != nil {
		t.Errorf("the list is not in the state directory: %v", err)
	}

	// Offline: the fetched list stays, and the error says of which day.
	srv.Close()
	r := fx.Exec(t, "", "usage", "prices", "--update", "--source", srv.URL+"/prices.json")
	if r.Code != 1 || len(clitest.Lines(r.Stderr)) != 1 || !strings.Contains(r.Stderr, "reports keep the prices of "+today) {
		t.Errorf("offline: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if got := clitest.DecodeJSON[listing](t, fx.MustExec(t, "usage", "prices", "--json")); got.AsOf != today {
		t.Errorf("a failed update changed the list: as of %s", got.AsOf)
	}

	// A file is a source too; what is not the list is refused.
	bad := filepath.Join(t.TempDir(), "bad.json")
	clitest.MustWrite(t, bad, "<html>rate limited</html>")
	r = fx.Exec(t, "", "usage", "prices", "--update", "--source", bad)
	if r.Code != 1 || !strings.Contains(r.Stderr, "not LiteLLM's price list") {
		t.Errorf("a bad file: exit %d, stderr %q", r.Code, r.Stderr)
	}
	abs, err := filepath.Abs(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	fx.MustExec(t, "usage", "prices", "--update", "--source", abs)
	if r := fx.Exec(t, "", "usage", "prices", "--source", excerpt); r.Code != 2 {
		t.Errorf("--source without --update: exit %d", r.Code)
	}
	if r := fx.Exec(t, "", "usage", "prices", "no-such-model-anywhere"); r.Code != 1 || !strings.Contains(r.Stderr, "no price names") {
		t.Errorf("a model no price names: exit %d, %q", r.Code, r.Stderr)
	}
}

// On a fresh home where only the real Codex CLI has run, with the model
// it defaults to (gpt-5.3-codex, which the former hand-written table
// did not price), loom usage daily prices every model of the day: no
// row reads as unpriced.
func TestUsageDailyPricesRealCodex(t *testing.T) {
	if clitest.OnPostgres() {
		t.Skip("runs the real agent once, on the SQLite pass")
	}
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	bin, dir, env, _, sc := clitest.StartCodex(t, fx)
	conf := filepath.Join(fx.Home, ".codex", "config.toml")
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	clitest.MustWrite(t, conf, strings.Replace(string(b), `model = "gpt-fake"`, `model = "gpt-5.3-codex"`, 1))
	sc.On("Say hello in one line.", sc.Answer(agentclitest.Turn{Text: "Hello there.",
		Usage: agentclitest.Usage{Input: 12000, Cached: 2000, Output: 300, Reasoning: 100}}))
	agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "exec", "--skip-git-repo-check", "Say hello in one line.")

	rep := clitest.DecodeJSON[report.Report](t, fx.MustExec(t, "usage", "daily", "--since", "2000-01-01", "--json"))
	if len(rep.Rows) == 0 {
		t.Fatal("no usage reported")
	}
	for _, row := range rep.Rows {
		if row.Totals.CostUSD == nil || len(row.Totals.Unpriced) > 0 || row.Totals.InputTokens == 0 {
			t.Errorf("%s: %+v", row.Period, row.Totals)
		}
	}
	// 10,000 new input at 1.75, 2,000 cached at 0.175, 300 output at 14.
	if want := (10000*1.75 + 2000*0.175 + 300*14) / 1e6; rep.Total.CostUSD == nil || *rep.Total.CostUSD < want*0.999 || *rep.Total.CostUSD > want*1.001 {
		t.Errorf("cost %v, want %v", rep.Total.CostUSD, want)
	}
}
