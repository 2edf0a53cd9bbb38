package loom

import (
	"encoding/json"
	"math"
)

// Usage counts tokens, cost and calls, per message and rolled up per
// session.
type Usage struct {
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	APICalls         int64   `json:"api_calls"`
	Compactions      int64   `json:"compactions"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.CostUSD += o.CostUSD
	u.APICalls += o.APICalls
	u.Compactions += o.Compactions
}

// Sub takes o from u.
func (u *Usage) Sub(o Usage) {
	u.InputTokens -= o.InputTokens
	u.OutputTokens -= o.OutputTokens
	u.ReasoningTokens -= o.ReasoningTokens
	u.CacheReadTokens -= o.CacheReadTokens
	u.CacheWriteTokens -= o.CacheWriteTokens
	u.CostUSD = RoundCost(u.CostUSD - o.CostUSD)
	u.APICalls -= o.APICalls
	u.Compactions -= o.Compactions
}

// RoundCost rounds a cost in USD to a billionth of a dollar, below any
// price a provider charges and above the noise of summing floats.
func RoundCost(c float64) float64 { return math.Round(c*1e9) / 1e9 }

// MarshalJSON writes the cost rounded with RoundCost, so sums read 0.3,
// not 0.30000000000000004.
func (u Usage) MarshalJSON() ([]byte, error) {
	type plain Usage
	p := plain(u)
	p.CostUSD = RoundCost(p.CostUSD)
	return json.Marshal(p)
}

// IsZero reports whether nothing was counted.
func (u Usage) IsZero() bool { return u == Usage{} }

// UsageFilter selects the sessions whose usage is summed.
type UsageFilter struct {
	UserID    string
	ProjectID string
	SessionID string
}

// UsageRow is one line of a usage report: a group (session, project or
// model) and its totals.
type UsageRow struct {
	Group string `json:"group"`
	// Key identifies the group: a session id, project id or
	// provider:model.
	Key      string `json:"key"`
	Name     string `json:"name"`
	Sessions int    `json:"sessions"`
	Messages int    `json:"messages"`
	Usage    Usage  `json:"usage"`
}

// UsageReport is usage totals per session, per project, per surface and
// per model.
type UsageReport struct {
	Total     Usage      `json:"total"`
	BySession []UsageRow `json:"by_session"`
	ByProject []UsageRow `json:"by_project"`
	// BySurface groups sessions by where they were used: cli, http, or
	// the agent an imported session came from (claude-code, codex, …).
	BySurface []UsageRow `json:"by_surface"`
	ByModel   []UsageRow `json:"by_model"`
}
