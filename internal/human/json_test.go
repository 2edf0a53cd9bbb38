package human

import (
	"encoding/json"
	"testing"

	"github.com/loomhq/loom"
)

func TestInputLineUnescapes(t *testing.T) {
	if got := InputLine(json.RawMessage(`{"x":"a \u0026\u0026 b","y":1}`)); got != `{"x":"a && b","y":1}` {
		t.Fatalf("InputLine = %q", got)
	}
	if got := InputLine(json.RawMessage(`{"command":"ls 2\u003e/dev/null"}`)); got != "$ ls 2>/dev/null" {
		t.Fatalf("InputLine of a command = %q", got)
	}
	// Codex's command is an argv: shown as the shell line that runs it.
	if got := InputLine(json.RawMessage(`{"command":["bash","-lc","rg -n \"go [0-9]+\" go.mod"]}`)); got != `$ bash -lc 'rg -n "go [0-9]+" go.mod'` {
		t.Fatalf("InputLine of an argv = %q", got)
	}
	if got := InputLine(json.RawMessage(`{"command":["echo","it's"]}`)); got != `$ echo 'it'\''s'` {
		t.Fatalf("InputLine of an argv with a quote = %q", got)
	}
}

func TestPrettyJSONAndOutputText(t *testing.T) {
	tests := []struct {
		raw, pretty, output string
	}{
		{"", "", ""},
		{"null", "", ""},
		{`"a\nb"`, `"a\nb"`, "a\nb"},
		{`{"a":1}`, "{\n  \"a\": 1\n}", "{\n  \"a\": 1\n}"},
		{`{not json`, `{not json`, `{not json`},
		// Go's encoder escapes <, > and &: shown as the characters, an
		// escaped backslash before them left alone.
		{`{"command":"bd ready 2\u003e/dev/null \u0026\u0026 make \u003cx\u003E","s":"\\u003e\\\u0026"}`,
			"{\n  \"command\": \"bd ready 2>/dev/null && make <x>\",\n  \"s\": \"\\\\u003e\\\\&\"\n}",
			"{\n  \"command\": \"bd ready 2>/dev/null && make <x>\",\n  \"s\": \"\\\\u003e\\\\&\"\n}"},
	}
	for _, tc := range tests {
		if got := PrettyJSON(json.RawMessage(tc.raw)); got != tc.pretty {
			t.Errorf("PrettyJSON(%s) = %q, want %q", tc.raw, got, tc.pretty)
		}
		if got := OutputText(json.RawMessage(tc.raw)); got != tc.output {
			t.Errorf("OutputText(%s) = %q, want %q", tc.raw, got, tc.output)
		}
	}
}

// A usage with tokens and a cost of 0 (a model the price table does not
// know) has a null cost in JSON; one without tokens, or priced, keeps its
// number; text that spells a usage out inside a string is left alone.
func TestNullUnknownCosts(t *testing.T) {
	type doc struct {
		A, B, C, D loom.Usage
		Text       string
	}
	d := doc{
		A:    loom.Usage{InputTokens: 54, OutputTokens: 212, APICalls: 4},
		D:    loom.Usage{CacheWriteTokens: 900, CacheWrite1hTokens: 800, APICalls: 1},
		B:    loom.Usage{},
		C:    loom.Usage{InputTokens: 10, CostUSD: 0.25, APICalls: 1},
		Text: `{"input_tokens":1,"output_tokens":0,"reasoning_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"cost_usd":0,"api_calls":1}`,
	}
	for _, indent := range []string{"", "  "} {
		b, err := json.MarshalIndent(d, "", indent)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			A, B, C, D map[string]any
			Text       string
		}
		if err := json.Unmarshal(NullUnknownCosts(b), &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, NullUnknownCosts(b))
		}
		if got.A["cost_usd"] != nil || got.B["cost_usd"] != 0.0 || got.C["cost_usd"] != 0.25 || got.Text != d.Text ||
			got.D["cost_usd"] != nil || got.D["cache_write_1h_tokens"] != 800.0 {
			t.Errorf("indent %q: %+v", indent, got)
		}
		if _, ok := got.A["cost_usd"]; !ok || got.A["api_calls"] != 4.0 {
			t.Errorf("indent %q: the unknown cost lost its key or its neighbours: %v", indent, got.A)
		}
	}
}
