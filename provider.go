package loom

import (
	"context"
	"encoding/json"
)

// Provider is a language model service. Implementations turn loom
// messages into the service's request format and its streamed response
// back into parts.
//
// How history maps to a provider: an assistant message's tool parts are
// both the calls and (once completed or failed) their results; a tool part
// still pending or running has no result and must have been repaired
// (RepairInterrupted) before it is sent. A message with role tool carries
// results (tool parts whose call_id matches an earlier call). A summary
// message is sent as a user message that starts "Summary of the earlier
// conversation:". System messages are sent as system text.
type Provider interface {
	// Name is the provider's id as stored on messages: "openai" or
	// "anthropic".
	Name() string
	// Stream sends req and calls onEvent for every piece of text or
	// reasoning as it arrives, and with EventProgress whenever anything
	// arrives (also what has no text: a piece of a tool call, a
	// keep-alive), so that a caller can tell a stream that went silent
	// from one that is busy.
	// It returns the whole response when the stream is complete; on
	// error nothing of the response is usable.
	Stream(ctx context.Context, req *ModelRequest, onEvent func(StreamEvent)) (*ModelResponse, error)
}

// ModelRequest is one model call.
type ModelRequest struct {
	Model     string
	System    string
	Messages  []*Message
	Tools     []ToolSpec
	MaxTokens int
	// Thinking asks for reasoning when the model supports it.
	Thinking bool
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the tool's input object.
	Schema json.RawMessage
}

// Stream event kinds.
const (
	EventText      = "text"
	EventReasoning = "reasoning"
	// EventProgress says that the service sent something, without text
	// to show.
	EventProgress = "progress"
)

// StreamEvent is a piece of a streamed response.
type StreamEvent struct {
	Kind string
	Text string
}

// ModelResponse is a complete model response.
type ModelResponse struct {
	// Parts holds reasoning, text and tool parts (status pending, with
	// call id, name and input) in the order the model produced them.
	Parts []Part
	Usage Usage
	// Model is the model that answered, as the service names it.
	Model string
	// StopReason is the service's reason for ending, e.g. "tool_use".
	StopReason string
}

// SummaryPrefix starts the text of a summary message when it is sent to a
// model.
const SummaryPrefix = "Summary of the earlier conversation:\n"
