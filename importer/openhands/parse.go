package openhands

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

type file struct {
	path string
	data []byte
}

// conversation is one conversation's files as read.
type conversation struct {
	dir       string
	state     []byte
	statePath string
	events    []file
	missing   []importer.Problem
}

// state is base_state.json: the conversation's id, agent and workspace,
// and the usage of its model calls.
type state struct {
	ID    string `json:"id"`
	Agent struct {
		LLM struct {
			Model string `json:"model"`
		} `json:"llm"`
	} `json:"agent"`
	Workspace struct {
		WorkingDir string `json:"working_dir"`
	} `json:"workspace"`
	Stats struct {
		UsageToMetrics map[string]struct {
			TokenUsages []tokenUsage `json:"token_usages"`
			Costs       []struct {
				Cost float64 `json:"cost"`
			} `json:"costs"`
		} `json:"usage_to_metrics"`
	} `json:"stats"`
}

type tokenUsage struct {
	PromptTokens     float64 `json:"prompt_tokens"`
	CompletionTokens float64 `json:"completion_tokens"`
	CacheReadTokens  float64 `json:"cache_read_tokens"`
	CacheWriteTokens float64 `json:"cache_write_tokens"`
	ReasoningTokens  float64 `json:"reasoning_tokens"`
	ResponseID       string  `json:"response_id"`
}

// event is one event file: the kinds the SDK writes, with the fields
// loom reads.
type event struct {
	Kind       string          `json:"kind"`
	ID         string          `json:"id"`
	Timestamp  string          `json:"timestamp"`
	Source     string          `json:"source"`
	LLMMessage *llmMessage     `json:"llm_message"`
	Thought    json.RawMessage `json:"thought"`
	Reasoning  string          `json:"reasoning_content"`
	Thinking   []struct {
		Thinking string `json:"thinking"`
	} `json:"thinking_blocks"`
	Action     json.RawMessage `json:"action"`
	ToolName   string          `json:"tool_name"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCall   *struct {
		Arguments string `json:"arguments"`
	} `json:"tool_call"`
	ResponseID  string `json:"llm_response_id"`
	Observation *struct {
		Content json.RawMessage `json:"content"`
		IsError bool            `json:"is_error"`
	} `json:"observation"`
	Error           string `json:"error"`
	RejectionReason string `json:"rejection_reason"`
	Summary         string `json:"summary"`
}

type llmMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Reasoning string          `json:"reasoning_content"`
}

// passed are the events that hold nothing of the conversation.
var passed = map[string]bool{
	"SystemPromptEvent": true, "ConversationStateUpdateEvent": true, "PauseEvent": true,
	"CondensationRequest": true, "TokenEvent": true, "LLMCompletionLogEvent": true,
}

func (c *conversation) parse() *importer.Result {
	res := &importer.Result{Problems: c.missing}
	var st state
	if c.state != nil && json.Unmarshal(c.state, &st) != nil {
		res.Unreadablef(c.statePath, 0, "not a conversation's state")
	}
	id := strings.TrimSpace(st.ID)
	if id == "" || strings.ContainsAny(id, "\n\r") {
		id = filepath.Base(c.dir)
	}
	model := st.Agent.LLM.Model
	provider, bare := "", model
	if p, m, ok := strings.Cut(model, "/"); ok {
		provider, bare = p, m
	}
	path := c.statePath
	if path == "" && len(c.events) > 0 {
		path = c.events[0].path
	}
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: path, Cwd: st.Workspace.WorkingDir, Model: bare, Provider: provider}
	usage := st.usage()
	ev := &events{res: res, calls: map[string]*loom.Part{}, model: bare, provider: provider}
	seen := map[string]bool{}
	for _, f := range c.events {
		msg, responseID := ev.read(f, seen)
		if msg == nil {
			continue
		}
		if u, ok := usage[responseID]; ok && msg.Role == loom.RoleAssistant {
			// A response's usage once, on its first message.
			msg.Usage = u
			delete(usage, responseID)
		}
		for i := range msg.Parts {
			if p := &msg.Parts[i]; p.Type == loom.PartTool {
				ev.calls[p.CallID] = p
			}
		}
		s.Messages = append(s.Messages, msg)
	}
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res
	}
	for _, m := range s.Messages {
		if s.CreatedAt.IsZero() || (!m.CreatedAt.IsZero() && m.CreatedAt.Before(s.CreatedAt)) {
			s.CreatedAt = m.CreatedAt
		}
		if m.CreatedAt.After(s.UpdatedAt) {
			s.UpdatedAt = m.CreatedAt
		}
	}
	res.Sessions = []*importer.Session{s}
	return res
}

// usage is each model call's usage, by the id of its response.
func (st *state) usage() map[string]loom.Usage {
	usage := map[string]loom.Usage{}
	for _, m := range st.Stats.UsageToMetrics {
		for _, u := range m.TokenUsages {
			if u.ResponseID == "" {
				continue
			}
			x := usage[u.ResponseID]
			n := loom.Usage{
				InputTokens: importer.Tokens(u.PromptTokens), OutputTokens: importer.Tokens(u.CompletionTokens),
				CacheReadTokens: importer.Tokens(u.CacheReadTokens), CacheWriteTokens: importer.Tokens(u.CacheWriteTokens),
				ReasoningTokens: importer.Tokens(u.ReasoningTokens), APICalls: 1,
			}
			// LiteLLM's prompt tokens count the cached ones, as OpenAI's
			// do; loom's input does not.
			n.InputTokens = max(n.InputTokens-n.CacheReadTokens-n.CacheWriteTokens, 0)
			x.Add(n)
			usage[u.ResponseID] = x
		}
	}
	return usage
}

// events reads a conversation's event files, in order, into messages:
// a tool's result completes the call an earlier message made.
type events struct {
	res             *importer.Result
	calls           map[string]*loom.Part
	model, provider string
}

// read is the message of event file f and the id of the model response
// it is part of; nil when it holds none (then it is skipped or a
// problem). seen holds the ids of the messages read before.
func (e *events) read(f file, seen map[string]bool) (*loom.Message, string) {
	var ev event
	if err := json.Unmarshal(f.data, &ev); err != nil || ev.Kind == "" {
		e.res.Unreadablef(f.path, 0, "not an event")
		return nil, ""
	}
	e.res.CheckUTF8(f.path, 0, f.data)
	mid := strings.TrimSpace(ev.ID)
	if mid == "" || strings.ContainsAny(mid, "\n\r/") || seen[mid] {
		mid = strings.TrimSuffix(filepath.Base(f.path), ".json")
	}
	if seen[mid] {
		e.res.Skip("repeated-event")
		return nil, ""
	}
	seen[mid] = true
	at := importer.ISOTime(ev.Timestamp)
	msg := &loom.Message{ID: mid, CreatedAt: at, CompletedAt: &at}
	var ok bool
	switch ev.Kind {
	case "MessageEvent":
		ok = e.message(f, &ev, msg)
	case "ActionEvent":
		ok = e.action(&ev, msg)
	case "ObservationEvent", "AgentErrorEvent", "UserRejectObservation":
		ok = e.observation(&ev, msg)
	case "Condensation":
		ok = e.condensation(&ev, msg)
	default:
		if passed[ev.Kind] {
			e.res.Skip(ev.Kind)
		} else {
			e.res.Skip("unknown:" + importer.TypeName(ev.Kind))
		}
	}
	if !ok {
		return nil, ""
	}
	if len(msg.Parts) == 0 {
		e.res.Skip("empty-" + msg.Role + "-message")
		return nil, ""
	}
	return msg, ev.ResponseID
}

// message reads a MessageEvent: a user's, the model's or the system's
// message.
func (e *events) message(f file, ev *event, msg *loom.Message) bool {
	if ev.LLMMessage == nil {
		e.res.Problemf(f.path, 0, "a message event without its message")
		return false
	}
	switch ev.LLMMessage.Role {
	case "user":
		msg.Role = loom.RoleUser
	case "assistant":
		msg.Role, msg.Model, msg.Provider = loom.RoleAssistant, e.model, e.provider
		msg.Parts = reasoning(msg.ID, cmp.Or(ev.LLMMessage.Reasoning, ev.Reasoning), ev)
	case "system":
		msg.Role = loom.RoleSystem
	default:
		e.res.Skip("unknown-role:" + importer.TypeName(ev.LLMMessage.Role))
		return false
	}
	msg.Parts = append(msg.Parts, texts(msg.ID+"/text", ev.LLMMessage.Content)...)
	return true
}

// action reads an ActionEvent: the model's call of a tool, with its
// reasoning and thought.
func (e *events) action(ev *event, msg *loom.Message) bool {
	mid := msg.ID
	msg.Role, msg.Model, msg.Provider = loom.RoleAssistant, e.model, e.provider
	msg.Parts = reasoning(mid, ev.Reasoning, ev)
	msg.Parts = append(msg.Parts, texts(mid+"/thought", ev.Thought)...)
	name := cmp.Or(strings.TrimSpace(ev.ToolName), "unknown")
	in := json.RawMessage(nil)
	if ev.ToolCall != nil {
		in = importer.CompactJSON(json.RawMessage(ev.ToolCall.Arguments))
	}
	if in == nil || in[0] != '{' {
		in = importer.CompactJSON(ev.Action)
	}
	if in == nil || in[0] != '{' {
		in = json.RawMessage(`{}`)
	}
	msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/tool", Type: loom.PartTool, CallID: cmp.Or(strings.TrimSpace(ev.ToolCallID), mid), Name: name, Status: loom.ToolRunning, Input: in})
	return true
}

// observation reads a tool's result, error or rejection into the call
// it answers; true only for an error of the agent's own, not of a call,
// which is a message of the system.
func (e *events) observation(ev *event, msg *loom.Message) bool {
	p := e.calls[ev.ToolCallID]
	if p == nil {
		if ev.Kind == "AgentErrorEvent" && ev.Error != "" {
			msg.Role = loom.RoleSystem
			msg.Parts = []loom.Part{{ID: msg.ID + "/0", Type: loom.PartText, Text: ev.Error}}
			return true
		}
		e.res.Skip("orphan-" + ev.Kind)
		return false
	}
	switch {
	case ev.Kind == "AgentErrorEvent":
		p.Status, p.Error = loom.ToolError, cmp.Or(ev.Error, "error")
	case ev.Kind == "UserRejectObservation":
		p.Status, p.Error = loom.ToolError, "rejected: "+cmp.Or(ev.RejectionReason, "by the user")
	case ev.Observation != nil && ev.Observation.IsError:
		p.Status, p.Error = loom.ToolError, cmp.Or(plain(ev.Observation.Content), "error")
	default:
		text := ""
		if ev.Observation != nil {
			text = plain(ev.Observation.Content)
		}
		out, _ := json.Marshal(text)
		p.Status, p.Output = loom.ToolCompleted, out
	}
	if end := msg.CreatedAt; !end.IsZero() {
		p.EndedAt = &end
	}
	e.res.Skip("tool-result")
	return false
}

// condensation reads the summary of a condensed history.
func (e *events) condensation(ev *event, msg *loom.Message) bool {
	if strings.TrimSpace(ev.Summary) == "" {
		e.res.Skip("condensation")
		return false
	}
	msg.Role, msg.Usage.Compactions = loom.RoleSummary, 1
	msg.Parts = []loom.Part{{ID: msg.ID + "/0", Type: loom.PartText, Text: ev.Summary}}
	return true
}

// reasoning is an event's reasoning: its thinking blocks, else its
// reasoning content.
func reasoning(mid, content string, ev *event) []loom.Part {
	var out []loom.Part
	for i, b := range ev.Thinking {
		if strings.TrimSpace(b.Thinking) != "" {
			out = append(out, loom.Part{ID: mid + "/thinking/" + strconv.Itoa(i), Type: loom.PartReasoning, Text: b.Thinking})
		}
	}
	if len(out) == 0 && strings.TrimSpace(content) != "" {
		out = append(out, loom.Part{ID: mid + "/reasoning", Type: loom.PartReasoning, Text: content})
	}
	return out
}

// texts is a content list's text items as text parts ([{type: text,
// text}], or a string).
func texts(pid string, raw json.RawMessage) []loom.Part {
	if t := plain(raw); strings.TrimSpace(t) != "" {
		return []loom.Part{{ID: pid, Type: loom.PartText, Text: t}}
	}
	return nil
}

// plain is a content list's text, its items joined.
func plain(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	var parts []string
	for _, it := range items {
		if it.Text != "" {
			parts = append(parts, it.Text)
		}
	}
	return strings.Join(parts, "\n")
}
