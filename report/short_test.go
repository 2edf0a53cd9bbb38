package report

import "testing"

func TestShortModels(t *testing.T) {
	for in, want := range map[string]string{
		"claude-sonnet-4-20250514":     "sonnet-4",
		"claude-opus-4-6":              "opus-4-6",
		"claude-3-5-haiku@20241022":    "3-5-haiku",
		"models/gemini-2.5-pro":        "gemini-2.5-pro",
		"openrouter/openai/gpt-5.1":    "gpt-5.1",
		"gpt-5.1-codex":                "gpt-5.1-codex",
		"claude-":                      "claude-",
		"qwen3-coder-30b-a3b-instruct": "qwen3-coder-30b-a3b-instruct",
	} {
		if got := ShortModel(in); got != want {
			t.Errorf("ShortModel(%q) = %q, want %q", in, got, want)
		}
	}
	f := Format{ShortModels: true}
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"claude-opus-4-6"}, "opus-4-6"},
		{[]string{"claude-opus-4-6", "claude-sonnet-4-20250514"}, "opus-4-6, sonnet-4"},
		// The same model with and without its date is one.
		{[]string{"claude-sonnet-4", "claude-sonnet-4-20250514", "gpt-5"}, "sonnet-4, gpt-5"},
		{[]string{"claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "gpt-5"}, "opus-4-6, sonnet-4-5 +2"},
	} {
		if got := f.modelList(tc.in); got != tc.want {
			t.Errorf("modelList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := (Format{}).modelList([]string{"claude-opus-4-6", "gpt-5"}); got != "claude-opus-4-6, gpt-5" {
		t.Errorf("full names: %q", got)
	}
}
