package anthropic

import "encoding/json"

// The Messages request as loom sends it: the fields the SDK sent for the
// same request, no more.
type (
	messagesRequest struct {
		MaxTokens int64          `json:"max_tokens"`
		Messages  []messageParam `json:"messages"`
		Model     string         `json:"model"`
		System    []block        `json:"system,omitempty"`
		Thinking  *thinking      `json:"thinking,omitempty"`
		Tools     []toolDef      `json:"tools,omitempty"`
		Stream    bool           `json:"stream"`
	}
	messageParam struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	thinking struct {
		Type         string `json:"type"` // enabled or adaptive
		BudgetTokens int64  `json:"budget_tokens,omitempty"`
	}
	cacheControl struct {
		Type string `json:"type"`
	}
	toolDef struct {
		InputSchema map[string]any `json:"input_schema"`
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
	}
)

// ephemeral marks where the prompt may be cached up to.
var ephemeral = &cacheControl{Type: "ephemeral"}

// block is one content block of a request: text, thinking,
// redacted_thinking, tool_use or tool_result, each with the fields of
// its type.
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Name      string          `json:"name,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Content   []block         `json:"content,omitempty"`
	// CacheControl is nil but on the last block of a prompt.
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

func textBlock(s string) block { return block{Type: "text", Text: &s} }

// cacheable says whether the API takes cache_control on b.
func (b *block) cacheable() bool {
	return b.Type == "text" || b.Type == "tool_use" || b.Type == "tool_result"
}

// event is an event of the streamed reply, as far as loom reads it.
type event struct {
	Type    string `json:"type"`
	Index   int64  `json:"index"`
	Message struct {
		Model string `json:"model"`
		Usage usage  `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
		ID        string `json:"id"`
		Name      string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage usage `json:"usage"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	OutputTokensDetails      struct {
		ThinkingTokens int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}
