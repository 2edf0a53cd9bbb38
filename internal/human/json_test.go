package human

import (
	"encoding/json"
	"testing"
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
