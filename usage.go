package loom

import (
	"encoding/json"
	"math"
	"time"
)

// Usage counts tokens, cost and calls, per message and rolled up per
// session.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	// CacheWrite1hTokens are the part of CacheWriteTokens written to a
	// cache kept for an hour (Anthropic's 1-hour cache), billed at its
	// own rate; the rest were written for five minutes.
	CacheWrite1hTokens int64   `json:"cache_write_1h_tokens,omitempty"`
	CostUSD            float64 `json:"cost_usd"`
	APICalls           int64   `json:"api_calls"`
	Compactions        int64   `json:"compactions"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.CacheWrite1hTokens += o.CacheWrite1hTokens
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
	u.CacheWrite1hTokens -= o.CacheWrite1hTokens
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
	// SessionsOnly fills BySession and Total alone, from the counters
	// kept on session rows, without reading messages (ByModel's cost).
	SessionsOnly bool
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

// UsageSliceMinutes is the length of the intervals UsageSlices groups
// messages by: a quarter of an hour, of which every time zone's offset
// from UTC is a whole number, so that slices add up to days, weeks and
// months in any zone.
const UsageSliceMinutes = 15

// UsageSliceFilter selects the messages whose usage UsageSlices sums:
// those of one user's live sessions (archived ones included: their
// usage was spent), made in [Since, Until) when set.
type UsageSliceFilter struct {
	UserID    string
	ProjectID string
	Surface   string
	// SessionID keeps the messages one session counts.
	SessionID string
	// BySession keeps each session's slices apart, each naming its
	// session (SessionID); otherwise the sessions' slices are summed.
	BySession bool
	Since     time.Time
	Until     time.Time
	// LongContext is the prompt size (input, cache-read and cache-write
	// tokens of one message) above which a message is priced at its
	// model's long-context rate; zero puts every message below it.
	LongContext int64
}

// UsageSlice is the usage of the messages of one quarter hour, one
// surface, one project and one model, each message counted once (a
// fork's inherited history in the session it was made in). Only
// messages with usage are counted.
type UsageSlice struct {
	// Start is the start of the quarter hour, in UTC.
	Start time.Time `json:"start"`
	// First and Last are the times of its first and last message.
	First       time.Time `json:"first"`
	Last        time.Time `json:"last"`
	Surface     string    `json:"surface"`
	ProjectID   string    `json:"project_id"`
	ProjectName string    `json:"project_name"`
	Provider    string    `json:"provider"`
	Model       string    `json:"model"`
	// SessionID is the session whose messages these are, in slices read
	// with UsageSliceFilter.BySession.
	SessionID string `json:"session_id,omitempty"`
	// LongContext is whether its messages' prompts were above the
	// filter's LongContext.
	LongContext bool  `json:"long_context"`
	Messages    int64 `json:"messages"`
	// Usage is the messages' usage as stored; its cost is what it was
	// priced at when stored.
	Usage Usage `json:"usage"`
}
