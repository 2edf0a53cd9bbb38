package codex

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
)

// line is the envelope of one rollout line: {timestamp, type, payload}.
// Rollouts written before the envelope existed hold the session's meta
// on the first line ({id, timestamp, …}), response items bare on the
// following ones, and {"record_type": "state"} markers.
type line struct {
	Timestamp  json.RawMessage `json:"timestamp"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	RecordType json.RawMessage `json:"record_type"`
	ID         json.RawMessage `json:"id"`
}

// sessionMeta is a session_meta payload.
type sessionMeta struct {
	ID               string          `json:"id"`
	Timestamp        string          `json:"timestamp"`
	Cwd              string          `json:"cwd"`
	Originator       string          `json:"originator"`
	CLIVersion       string          `json:"cli_version"`
	Instructions     json.RawMessage `json:"instructions"`
	BaseInstructions json.RawMessage `json:"base_instructions"`
	ModelProvider    string          `json:"model_provider"`
	ForkedFromID     string          `json:"forked_from_id"`
	Source           json.RawMessage `json:"source"`
	AgentNickname    json.RawMessage `json:"agent_nickname"`
	AgentRole        json.RawMessage `json:"agent_role"`
	Git              *struct {
		Branch string `json:"branch"`
	} `json:"git"`
	// LoomHandoff marks a session loom wrote for Codex to continue
	// (handoff.OriginFieldSnake).
	LoomHandoff *handoff.Origin `json:"loom_handoff"`
}

// turnContext is a turn_context payload: the settings of a turn.
type turnContext struct {
	Cwd    string `json:"cwd"`
	Model  string `json:"model"`
	TurnID string `json:"turn_id"`
}

// responseItem is a response_item payload: a message, reasoning, a tool
// call or a tool's output, as the Responses API has them.
type responseItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Summary          json.RawMessage `json:"summary"`
	EncryptedContent json.RawMessage `json:"encrypted_content"`
	Name             string          `json:"name"`
	Namespace        string          `json:"namespace"`
	Arguments        json.RawMessage `json:"arguments"`
	Input            json.RawMessage `json:"input"`
	CallID           string          `json:"call_id"`
	Output           json.RawMessage `json:"output"`
	Action           json.RawMessage `json:"action"`
	Status           json.RawMessage `json:"status"`
	Tools            json.RawMessage `json:"tools"`
	RevisedPrompt    json.RawMessage `json:"revised_prompt"`
	// An agent_message item: a message from another agent.
	Author    json.RawMessage `json:"author"`
	Recipient json.RawMessage `json:"recipient"`
}

// contentItem is one element of a message's content or of a reasoning
// item's summary or content.
type contentItem struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
	// An encrypted_content block of an agent_message item.
	Encrypted json.RawMessage `json:"encrypted_content"`
}

// agentMail is a message between agents: an inter_agent_communication
// payload, or the JSON of one that is the only text of a message in the
// recipient's history. Author and recipient are agent paths (/root,
// /root/<task name>).
type agentMail struct {
	Author    json.RawMessage `json:"author"`
	Recipient json.RawMessage `json:"recipient"`
	Content   json.RawMessage `json:"content"`
}

// event is an event_msg payload, with the fields of the event types the
// reader uses.
type event struct {
	Type        string          `json:"type"`
	Message     json.RawMessage `json:"message"`
	Text        string          `json:"text"`
	Images      json.RawMessage `json:"images"`
	LocalImages json.RawMessage `json:"local_images"`
	Info        json.RawMessage `json:"info"`
	ThreadName  json.RawMessage `json:"thread_name"`
	TurnID      json.RawMessage `json:"turn_id"`
	CallID      string          `json:"call_id"`
	Success     json.RawMessage `json:"success"`
	ExitCode    json.RawMessage `json:"exit_code"`
	Stdout      json.RawMessage `json:"stdout"`
	Stderr      json.RawMessage `json:"stderr"`
	Aggregated  json.RawMessage `json:"aggregated_output"`
	NewThreadID json.RawMessage `json:"new_thread_id"`
	Nickname    json.RawMessage `json:"new_agent_nickname"`
	Role        json.RawMessage `json:"new_agent_role"`
	// item_completed: the item, {"type": "SubAgentActivity", …} among
	// others (subAgentItem).
	Item json.RawMessage `json:"item"`
	// sub_agent_activity: the spawn call (event_id) and the thread it
	// started.
	EventID       json.RawMessage `json:"event_id"`
	AgentThreadID json.RawMessage `json:"agent_thread_id"`
	AgentPath     json.RawMessage `json:"agent_path"`
	Kind          json.RawMessage `json:"kind"`
}

// subAgentItem is the item of an item_completed event of Codex 0.169
// and later whose type is SubAgentActivity: the spawn call (id) and the
// thread it started.
type subAgentItem struct {
	Type          string          `json:"type"`
	ID            json.RawMessage `json:"id"`
	AgentThreadID json.RawMessage `json:"agent_thread_id"`
	AgentPath     json.RawMessage `json:"agent_path"`
	Kind          json.RawMessage `json:"kind"`
}

// tokenInfo is a token_count event's info.
type tokenInfo struct {
	Total *tokenUsage `json:"total_token_usage"`
	Last  *tokenUsage `json:"last_token_usage"`
}

// tokenUsage counts tokens the OpenAI way: cached input tokens are part
// of the input tokens, reasoning tokens part of the output tokens.
type tokenUsage struct {
	Input     int64 `json:"input_tokens"`
	Cached    int64 `json:"cached_input_tokens"`
	Output    int64 `json:"output_tokens"`
	Reasoning int64 `json:"reasoning_output_tokens"`
	Total     int64 `json:"total_tokens"`
}

// compacted is a compacted payload: the summary that replaced the history
// before it.
type compacted struct {
	Message            json.RawMessage   `json:"message"`
	ReplacementHistory []json.RawMessage `json:"replacement_history"`
}

// str returns the JSON string in r, "" when r holds anything else.
func str(r json.RawMessage) string {
	if len(r) == 0 || r[0] != '"' {
		return ""
	}
	s, _ := loom.JSONString(r)
	return s
}

// integer returns the JSON integer in r, and false when r holds anything
// else.
func integer(r json.RawMessage) (int64, bool) {
	var n int64
	if len(r) == 0 || json.Unmarshal(r, &n) != nil {
		return 0, false
	}
	return n, true
}

// items decodes r as a list of content items; anything else is no items.
func items(r json.RawMessage) []contentItem {
	if len(r) == 0 || r[0] != '[' {
		return nil
	}
	var out []contentItem
	if json.Unmarshal(r, &out) != nil {
		return nil
	}
	return out
}

// uuidTime returns the time a version 7 UUID was made: its first 48 bits
// are Unix milliseconds.
func uuidTime(id string) (time.Time, bool) {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[14] != '7' {
		return time.Time{}, false
	}
	var ms int64
	for i := 0; i < 13; i++ {
		if i == 8 {
			continue
		}
		c := id[i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return time.Time{}, false
		}
		ms = ms<<4 | int64(v)
	}
	return time.UnixMilli(ms).UTC(), true
}

// lastSegment returns what follows the last slash of an agent path
// (/root/<task name>): the task name.
func lastSegment(path string) string {
	return path[strings.LastIndexByte(path, '/')+1:]
}

// fileID returns the last UUID in a rollout's file name
// (rollout-<time>-<uuid>.jsonl), "" when there is none.
func fileID(path string) string {
	name := path[strings.LastIndexAny(path, `/\`)+1:]
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".zst"), ".jsonl")
	if len(name) < 36 {
		return ""
	}
	id := name[len(name)-36:]
	for i, c := range id {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return ""
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return ""
			}
		}
	}
	return id
}
