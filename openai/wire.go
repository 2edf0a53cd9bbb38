package openai

import (
	"bytes"
	"encoding/json"
)

// The Chat Completions request as loom sends it: the fields the SDK sent
// for the same request, no more.
type (
	chatRequest struct {
		Messages            []message     `json:"messages"`
		Model               string        `json:"model"`
		MaxCompletionTokens int64         `json:"max_completion_tokens,omitempty"`
		StreamOptions       streamOptions `json:"stream_options"`
		Tools               []tool        `json:"tools,omitempty"`
		Stream              bool          `json:"stream"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	message struct {
		Role    string  `json:"role"`
		Content *string `json:"content,omitempty"` // nil: none, as an assistant's calls without text

		ToolCalls  []toolCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	toolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function functionCall `json:"function"`
	}
	functionCall struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters"`
	}
)

// A chunk of the streamed reply, as far as loom reads it.
type (
	chunk struct {
		Model   string          `json:"model"`
		Choices []choice        `json:"choices"`
		Usage   completionUsage `json:"usage"`
		Error   json.RawMessage `json:"error"`
	}
	choice struct {
		Index        int64  `json:"index"`
		Delta        delta  `json:"delta"`
		FinishReason string `json:"finish_reason"`
	}
	delta struct {
		Content string `json:"content"`
		// Reasoning is not in OpenAI's schema: read as raw JSON, so that
		// a server's other use of the names fails no reply.
		ReasoningContent json.RawMessage `json:"reasoning_content"`
		Reasoning        json.RawMessage `json:"reasoning"`
		ToolCalls        []toolCallDelta `json:"tool_calls"`
	}
	toolCallDelta struct {
		Index    int64        `json:"index"`
		ID       string       `json:"id"`
		Function functionCall `json:"function"`
	}
	completionUsage struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens     int64 `json:"cached_tokens"`
			CacheWriteTokens int64 `json:"cache_write_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
)

// streamError is an event of the stream that carries an error field.
type streamError struct{ data []byte }

func (e *streamError) Error() string {
	return "received error while streaming: " + string(bytes.TrimSpace(e.data))
}

// decodeChunk decodes an event of the stream into c; an event with an
// error field is a *streamError.
func decodeChunk(data []byte, c *chunk) error {
	err := json.Unmarshal(data, c)
	if c.Error != nil {
		return &streamError{data: data}
	}
	return err
}
