package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/pricing"
)

// loom usage prices lists the table reports price with: config.toml's
// prices first, the bundled ones after, a bundled price that config
// hides marked so, the table's date said.
func TestUsagePrices(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	conf := filepath.Join(fx.home, "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[prices.\"anthropic/claude-sonnet-4-5\"]\ninput = 2.5\noutput = 12.0\n\n[prices.\"qwen3-coder\"]\ninput = 0.5\noutput = 1.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := decodeJSON[struct {
		AsOf   string          `json:"as_of"`
		Prices []pricing.Entry `json:"prices"`
	}](t, fx.mustRun(t, "usage", "prices", "--json"))
	if got.AsOf != pricing.AsOf || len(got.Prices) < 30 {
		t.Fatalf("as of %q, %d prices", got.AsOf, len(got.Prices))
	}
	first := map[string]pricing.Entry{}
	for _, e := range got.Prices {
		k := e.Source + " " + e.Provider + "/" + e.Model
		if _, ok := first[k]; !ok {
			first[k] = e
		}
	}
	if e := first["config anthropic/claude-sonnet-4-5"]; e.Input != 2.5 || e.Output != 12 {
		t.Fatalf("config price %+v", e)
	}
	if e := first["config /qwen3-coder"]; e.Input != 0.5 {
		t.Fatalf("config price for any provider %+v", e)
	}
	if e := first["bundled anthropic/claude-sonnet-4-5"]; !e.Overridden || e.Input != 3 || e.LongContext == nil {
		t.Fatalf("bundled price hidden by config %+v", e)
	}
	for _, m := range []string{"anthropic/claude-opus-4-6", "openai/gpt-5.1-codex", "google/gemini-2.5-pro"} {
		if e, ok := first["bundled "+m]; !ok || e.Overridden {
			t.Fatalf("%s: %+v", m, e)
		}
	}
	r := fx.runWith(t, runOpts{tty: true, width: 120}, "usage", "prices")
	if r.code != 0 || !strings.Contains(r.stdout, "Prices as of "+pricing.AsOf) || !strings.Contains(r.stdout, "bundled, overridden") ||
		!strings.Contains(r.stdout, "qwen3-coder") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
