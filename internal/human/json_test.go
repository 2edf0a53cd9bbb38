package human

import (
	"encoding/json"
	"testing"
)

func TestPrettyJSONAndOutputText(t *testing.T) {
	tests := []struct {
		raw, pretty, output string
	}{
		{"", "", ""},
		{"null", "", ""},
		{`"a\nb"`, `"a\nb"`, "a\nb"},
		{`{"a":1}`, "{\n  \"a\": 1\n}", "{\n  \"a\": 1\n}"},
		{`{not json`, `{not json`, `{not json`},
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
