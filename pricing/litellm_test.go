package pricing_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom/pricing"
)

// An excerpt of LiteLLM's own list (pricing/testdata, taken from its
// model_prices_and_context_window.json at commit 0cd588ad) reads as
// prices per million tokens under loom's provider names: embeddings and
// the sample entry left out, Gemini's API under google, a router's
// models under the router, the long-context and 1-hour prices kept.
func TestParseLiteLLM(t *testing.T) {
	f, err := os.Open("testdata/litellm-excerpt.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := pricing.ParseLiteLLM(f, "LiteLLM test", "2026-07-24")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]pricing.Price{}
	for _, e := range l.Entries {
		got[e.Provider+" "+e.Model] = e.Price
	}
	if _, ok := got["openai text-embedding-3-small"]; ok {
		t.Error("an embedding model is listed")
	}
	for k := range got {
		if strings.Contains(k, "sample") {
			t.Errorf("%s listed", k)
		}
	}
	sonnet := got["anthropic claude-sonnet-4-5"]
	if sonnet.Input != 3 || sonnet.Output != 15 || sonnet.CacheRead != 0.3 || sonnet.CacheWrite != 3.75 || sonnet.CacheWrite1h != 6 ||
		sonnet.LongContext == nil || sonnet.LongContext.Input != 6 || sonnet.LongContext.Output != 22.5 || sonnet.LongContext.CacheWrite1h != 12 {
		t.Errorf("claude-sonnet-4-5: %+v %+v", sonnet, sonnet.LongContext)
	}
	// OpenAI bills cache writes as input: the list leaves them out.
	if c := got["openai gpt-5.3-codex"]; c.Input != 1.75 || c.Output != 14 || c.CacheRead != 0.175 || c.CacheWrite != 1.75 {
		t.Errorf("gpt-5.3-codex: %+v", c)
	}
	g := got["google gemini-2.5-pro"]
	if g.Input != 1.25 || g.LongContext == nil || g.LongContext.Input != 2.5 || g.LongContext.CacheWrite != 2.5 || g.LongContext.CacheRead != 0.25 {
		t.Errorf("gemini-2.5-pro under google: %+v %+v", g, g.LongContext)
	}
	if _, ok := got["openrouter anthropic/claude-sonnet-4.5"]; !ok {
		t.Errorf("a router's model: %v", keys(got))
	}

	// What WriteList writes, ReadList reads back the same.
	var buf bytes.Buffer
	if err := l.WriteList(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := pricing.ReadList(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Source != l.Source || back.Date != l.Date || len(back.Entries) != len(l.Entries) {
		t.Fatalf("read back %+v", back)
	}
	for i := range l.Entries {
		a, b := l.Entries[i], back.Entries[i]
		if a.Provider != b.Provider || a.Model != b.Model || a.Input != b.Input || (a.LongContext == nil) != (b.LongContext == nil) {
			t.Errorf("entry %d: %+v, read back %+v", i, a, b)
		}
	}
}

func keys(m map[string]pricing.Price) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// What is not LiteLLM's list is refused in one line.
func TestParseLiteLLMRefuses(t *testing.T) {
	for _, in := range []string{"", "[]", "<html>rate limited</html>", `{"sample_spec": {"input_cost_per_token": 0}}`, `{"x": 1}`} {
		if _, err := pricing.ParseLiteLLM(strings.NewReader(in), "s", "d"); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	if _, err := pricing.ReadList(strings.NewReader(`{"source":"x","date":"y","models":[]}`)); err == nil {
		t.Error("an empty list read")
	}
}

// The bundled list is the dated snapshot, with the models of the day.
func TestBundledList(t *testing.T) {
	l := pricing.BundledList()
	if l.Date != "2026-07-24" || !strings.HasPrefix(l.Source, "LiteLLM ") || len(l.Entries) < 1000 {
		t.Fatalf("bundled list %s %s: %d models", l.Source, l.Date, len(l.Entries))
	}
	if pricing.Bundled.AsOf() != l.Date {
		t.Errorf("AsOf %s", pricing.Bundled.AsOf())
	}
}

func FuzzParseLiteLLM(f *testing.F) {
	if b, err := os.ReadFile("testdata/litellm-excerpt.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"m": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1e-6, "output_cost_per_token": 1e308}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := pricing.ParseLiteLLM(bytes.NewReader(b), "s", "d")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := l.WriteList(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := pricing.ReadList(&buf); err != nil {
			t.Fatalf("a list WriteList wrote does not read back: %v", err)
		}
	})
}
