package pricing

// fallback prices the models a price list may leave out: those a
// provider has retired (LiteLLM drops them, and a user's history still
// holds them) and the undated names of models it lists by date only.
// These are the providers' published list prices of 2026-11; a list's
// price of a model wins over them.
// Prices shared by several models.
var (
	gpt5     = Price{Input: 1.25, Output: 10.00, CacheRead: 0.125, CacheWrite: 1.25}
	gpt52    = Price{Input: 1.75, Output: 14.00, CacheRead: 0.175, CacheWrite: 1.75}
	gpt5Mini = Price{Input: 0.25, Output: 2.00, CacheRead: 0.025, CacheWrite: 0.25}
	// Anthropic bills a cache write for five minutes at 1.25 times the
	// input price, one for an hour at twice it.
	opus4  = Price{Input: 15.00, Output: 75.00, CacheRead: 1.50, CacheWrite: 18.75, CacheWrite1h: 30.00}
	opus45 = Price{Input: 5.00, Output: 25.00, CacheRead: 0.50, CacheWrite: 6.25, CacheWrite1h: 10.00}
	// Sonnet 4 and later read up to a million tokens; a prompt above
	// 200,000 is billed at the long-context rates.
	sonnet4 = Price{Input: 3.00, Output: 15.00, CacheRead: 0.30, CacheWrite: 3.75, CacheWrite1h: 6.00,
		LongContext: &Price{Input: 6.00, Output: 22.50, CacheRead: 0.60, CacheWrite: 7.50, CacheWrite1h: 12.00}}
	sonnet3  = Price{Input: 3.00, Output: 15.00, CacheRead: 0.30, CacheWrite: 3.75, CacheWrite1h: 6.00}
	gemini25 = Price{Input: 1.25, Output: 10.00, CacheRead: 0.125, CacheWrite: 1.25,
		LongContext: &Price{Input: 2.50, Output: 15.00, CacheRead: 0.25, CacheWrite: 2.50}}
	gemini3 = Price{Input: 2.00, Output: 12.00, CacheRead: 0.20, CacheWrite: 2.00,
		LongContext: &Price{Input: 4.00, Output: 18.00, CacheRead: 0.40, CacheWrite: 4.00}}
)

var fallback = []entry{
	{"openai", "gpt-4o", Price{Input: 2.50, Output: 10.00, CacheRead: 1.25, CacheWrite: 2.50}},
	{"openai", "gpt-4o-2024-05-13", Price{Input: 5.00, Output: 15.00, CacheRead: 5.00, CacheWrite: 5.00}},
	{"openai", "gpt-4o-mini", Price{Input: 0.15, Output: 0.60, CacheRead: 0.075, CacheWrite: 0.15}},
	{"openai", "gpt-4.1", Price{Input: 2.00, Output: 8.00, CacheRead: 0.50, CacheWrite: 2.00}},
	{"openai", "gpt-4.1-mini", Price{Input: 0.40, Output: 1.60, CacheRead: 0.10, CacheWrite: 0.40}},
	{"openai", "gpt-4.1-nano", Price{Input: 0.10, Output: 0.40, CacheRead: 0.025, CacheWrite: 0.10}},
	{"openai", "o1", Price{Input: 15.00, Output: 60.00, CacheRead: 7.50, CacheWrite: 15.00}},
	{"openai", "o3", Price{Input: 2.00, Output: 8.00, CacheRead: 0.50, CacheWrite: 2.00}},
	{"openai", "o3-mini", Price{Input: 1.10, Output: 4.40, CacheRead: 0.55, CacheWrite: 1.10}},
	{"openai", "o4-mini", Price{Input: 1.10, Output: 4.40, CacheRead: 0.275, CacheWrite: 1.10}},
	{"openai", "codex-mini-latest", Price{Input: 1.50, Output: 6.00, CacheRead: 0.375, CacheWrite: 1.50}},
	{"openai", "gpt-5", gpt5},
	{"openai", "gpt-5-codex", gpt5},
	{"openai", "gpt-5-mini", gpt5Mini},
	{"openai", "gpt-5-nano", Price{Input: 0.05, Output: 0.40, CacheRead: 0.005, CacheWrite: 0.05}},
	{"openai", "gpt-5.1", gpt5},
	{"openai", "gpt-5.1-codex", gpt5},
	{"openai", "gpt-5.1-codex-max", gpt5},
	{"openai", "gpt-5.1-codex-mini", gpt5Mini},
	{"openai", "gpt-5.2", gpt52},
	{"openai", "gpt-5.2-codex", gpt52},

	{"anthropic", "claude-opus-4", opus4},
	{"anthropic", "claude-opus-4-0", opus4},
	{"anthropic", "claude-opus-4-1", opus4},
	{"anthropic", "claude-opus-4-5", opus45},
	{"anthropic", "claude-opus-4-6", opus45},
	{"anthropic", "claude-sonnet-4", sonnet4},
	{"anthropic", "claude-sonnet-4-0", sonnet4},
	{"anthropic", "claude-sonnet-4-5", sonnet4},
	{"anthropic", "claude-sonnet-4-6", sonnet4},
	{"anthropic", "claude-3-7-sonnet", sonnet3},
	{"anthropic", "claude-3-5-sonnet", sonnet3},
	{"anthropic", "claude-3-opus", opus4},
	{"anthropic", "claude-3-5-haiku", Price{Input: 0.80, Output: 4.00, CacheRead: 0.08, CacheWrite: 1.00, CacheWrite1h: 1.60}},
	{"anthropic", "claude-3-haiku", Price{Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.30, CacheWrite1h: 0.50}},
	{"anthropic", "claude-haiku-4-5", Price{Input: 1.00, Output: 5.00, CacheRead: 0.10, CacheWrite: 1.25, CacheWrite1h: 2.00}},

	{"google", "gemini-2.0-flash", Price{Input: 0.10, Output: 0.40, CacheRead: 0.025, CacheWrite: 0.10}},
	{"google", "gemini-2.0-flash-lite", Price{Input: 0.075, Output: 0.30, CacheRead: 0.075, CacheWrite: 0.075}},
	{"google", "gemini-2.5-pro", gemini25},
	{"google", "gemini-2.5-flash", Price{Input: 0.30, Output: 2.50, CacheRead: 0.03, CacheWrite: 0.30}},
	{"google", "gemini-2.5-flash-lite", Price{Input: 0.10, Output: 0.40, CacheRead: 0.01, CacheWrite: 0.10}},
	{"google", "gemini-3-pro-preview", gemini3},
	{"google", "gemini-3.1-pro-preview", gemini3},
	{"google", "gemini-3-flash-preview", Price{Input: 0.50, Output: 3.00, CacheRead: 0.05, CacheWrite: 0.50}},
}
