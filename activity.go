package loom

import (
	"context"
	"time"
)

// ActivityFilter says whose activity an ActivityReader reads: one
// user's sessions (one project's, when ProjectID is set), messages
// written in [Since, Until) (either bound may be zero). Sessions in the
// trash are left out, archived ones are not.
type ActivityFilter struct {
	UserID    string
	ProjectID string
	Since     time.Time
	Until     time.Time
}

// Activity is what a user did that the usage slices do not say: the
// prompts they wrote, per quarter hour and session, the sessions they
// worked in, and the tools their agents called, with how many of the
// calls failed. Each stored message counts once, in the session it was
// written in: a fork's inherited history is not counted again.
type Activity struct {
	// Prompts are the user messages per quarter hour (in UTC) and
	// session, oldest first; a quarter hour without any is left out.
	Prompts []ActivitySlice `json:"prompts"`
	// Sessions are the sessions with messages in the range, by id.
	Sessions []SessionActivity `json:"sessions"`
	// Tools are the tool calls by tool name, most called first.
	Tools []ToolCount `json:"tools"`
}

// ActivitySlice counts one session's prompts in one quarter hour.
type ActivitySlice struct {
	// Start is the start of the quarter hour, in UTC.
	Start     time.Time `json:"start"`
	SessionID string    `json:"session_id"`
	Count     int64     `json:"count"`
}

// SessionActivity is what one session holds of a range: its messages,
// its prompts, and the times of its first prompt and its last reply
// (zero when it has none in the range).
type SessionActivity struct {
	SessionID   string    `json:"session_id"`
	Messages    int64     `json:"messages"`
	Prompts     int64     `json:"prompts"`
	FirstPrompt time.Time `json:"first_prompt"`
	LastReply   time.Time `json:"last_reply"`
}

// ToolCount counts one tool's calls: all of them, and those that ended
// in an error (status "error", an interrupted call's included).
type ToolCount struct {
	Name   string `json:"name"`
	Calls  int64  `json:"calls"`
	Errors int64  `json:"errors"`
}

// ActivityReader is a Store that reads a user's activity in one pass
// over the messages of the range. Both SQL engines implement it.
type ActivityReader interface {
	Activity(ctx context.Context, f ActivityFilter) (*Activity, error)
}
