package agentclitest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/loomhq/loom/providertest"
)

// Turn scripts one answer of a fake model: reasoning (streamed first),
// text, tool calls and the usage reported.
type Turn struct {
	Reasoning string
	Text      string
	Calls     []providertest.ToolCall
	Usage     Usage
}

// Usage is the token usage a scripted answer reports. Input includes
// Cached, and Output includes Reasoning, as both APIs count them.
type Usage struct {
	Input, Cached, Output, Reasoning int64
}

// Scripted is a fake model service scripted with a queue of Turns (its
// Enqueue); when the queue is empty it answers Reply with the usage of
// FallbackUsage.
type Scripted = providertest.Server[Turn]

// FallbackUsage is the usage of an answer that was not scripted.
var FallbackUsage = Usage{Input: 100, Output: 8}

func (tn Turn) orFallback() Turn {
	if tn.Text == "" && tn.Reasoning == "" && len(tn.Calls) == 0 {
		tn.Text = Reply
	}
	if tn.Usage == (Usage{}) {
		tn.Usage = FallbackUsage
	}
	return tn
}

// NewScriptedResponses serves the part of OpenAI's Responses API that
// Codex CLI uses, answering each POST /v1/responses with the next
// scripted Turn (a call named NAMESPACE.NAME is a tool of a
// namespace): a reasoning item (its summary in clear), a message item
// and function_call items (their arguments streamed as the service
// streams them), then response.completed with the usage.
func NewScriptedResponses() *Scripted {
	return providertest.NewServer(func(w http.ResponseWriter, r *http.Request, x *providertest.Exchange[Turn]) {
		if !responsesCall(w, r, x.Req.Body) {
			return
		}
		tn, _ := x.Take(func() Turn { return Turn{} })
		tn = tn.orFallback()
		id := fmt.Sprintf("resp_fake%d", x.N)
		var items []map[string]any
		custom := customTools(x.Req.Body)
		if tn.Reasoning != "" {
			items = append(items, map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_fake%d", x.N),
				"summary": []any{map[string]any{"type": "summary_text", "text": tn.Reasoning}}})
		}
		if tn.Text != "" {
			items = append(items, map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_fake%d", x.N), "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": tn.Text, "annotations": []any{}}}})
		}
		for i, c := range tn.Calls {
			callID := c.ID
			if callID == "" {
				callID = fmt.Sprintf("call_fake%d_%d", x.N, i)
			}
			item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake%d_%d", x.N, i), "status": "completed",
				"call_id": callID, "name": c.Name, "arguments": c.Args}
			if custom[c.Name] {
				// A free-form tool (Codex's exec in code mode, its
				// apply_patch) is called with its text, as the service
				// calls the tools a request declares custom.
				item = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_fake%d_%d", x.N, i), "status": "completed",
					"call_id": callID, "name": c.Name, "input": c.Args}
			}
			// A tool of a namespace (multi_agent_v1.spawn_agent) is
			// called by its name in its namespace.
			if ns, name, ok := strings.Cut(c.Name, "."); ok {
				item["namespace"], item["name"] = ns, name
			}
			items = append(items, item)
		}
		ev := x.StartEvents(0)
		ev.Send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id, "status": "in_progress"}})
		out := make([]any, 0, len(items))
		for i, it := range items {
			added := it
			if it["type"] == "function_call" {
				// The service announces a call before its arguments,
				// which follow as deltas.
				added = maps.Clone(it)
				added["arguments"], added["status"] = "", "in_progress"
			}
			ev.Send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": added})
			if it["type"] == "message" {
				ev.Send("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": it["id"], "output_index": i, "content_index": 0, "delta": tn.Text})
			}
			// The service streams a call's arguments before the item is
			// done; a client that builds its calls from these events
			// alone (Erosolar's) has no call without them.
			if it["type"] == "function_call" {
				ev.Send("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta", "item_id": it["id"], "output_index": i, "delta": it["arguments"]})
				ev.Send("response.function_call_arguments.done", map[string]any{"type": "response.function_call_arguments.done", "item_id": it["id"], "output_index": i, "name": it["name"], "arguments": it["arguments"]})
			}
			ev.Send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
			out = append(out, it)
		}
		u := tn.Usage
		ev.Send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": id, "status": "completed", "output": out,
			"usage": map[string]any{"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.Cached},
				"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning}, "total_tokens": u.Input + u.Output},
		}})
	})
}

// customTools are the names of the free-form tools a Responses request
// declares, in its tools or in an additional_tools item of its input
// (Codex's code mode), namespaces included.
func customTools(body map[string]any) map[string]bool {
	out := map[string]bool{}
	var walk func(tools any)
	walk = func(tools any) {
		list, _ := tools.([]any)
		for _, t := range list {
			tool, _ := t.(map[string]any)
			if tool["type"] == "namespace" {
				walk(tool["tools"])
			}
			if name, _ := tool["name"].(string); tool["type"] == "custom" && name != "" {
				out[name] = true
			}
		}
	}
	walk(body["tools"])
	input, _ := body["input"].([]any)
	for _, it := range input {
		if item, _ := it.(map[string]any); item["type"] == "additional_tools" {
			walk(item["tools"])
		}
	}
	return out
}

// NewScriptedGemini serves the part of the Gemini API that Gemini CLI
// uses, answering each generateContent or streamGenerateContent request
// for the conversation with the next scripted Turn: thoughts as parts
// marked thought, text, and functionCall parts, with usageMetadata.
// Gemini CLI's own side questions (a request for JSON: which model to
// route to, who speaks next) get a JSON answer and take nothing from the
// script; countTokens answers a small count.
func NewScriptedGemini() *Scripted {
	return providertest.NewServer(func(w http.ResponseWriter, r *http.Request, x *providertest.Exchange[Turn]) {
		path := r.URL.Path
		if strings.HasSuffix(path, ":countTokens") {
			providertest.WriteJSON(w, http.StatusOK, map[string]any{"totalTokens": 100})
			return
		}
		stream := strings.HasSuffix(path, ":streamGenerateContent")
		if !stream && !strings.HasSuffix(path, ":generateContent") {
			providertest.WriteJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": 404, "message": "not found: " + path, "status": "NOT_FOUND"}})
			return
		}
		var tn Turn
		if cfg, _ := x.Req.Body["generationConfig"].(map[string]any); cfg != nil && cfg["responseMimeType"] == "application/json" {
			tn = Turn{Text: `{"reasoning": "fake", "model_choice": "flash", "next_speaker": "user"}`}.orFallback()
		} else {
			tn, _ = x.Take(func() Turn { return Turn{} })
			tn = tn.orFallback()
		}
		var parts []any
		if tn.Reasoning != "" {
			parts = append(parts, map[string]any{"text": tn.Reasoning, "thought": true})
		}
		if tn.Text != "" {
			parts = append(parts, map[string]any{"text": tn.Text})
		}
		for _, c := range tn.Calls {
			var args any = map[string]any{}
			if c.Args != "" {
				json.Unmarshal([]byte(c.Args), &args)
			}
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}})
		}
		u := tn.Usage
		answer := map[string]any{
			"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": u.Input, "cachedContentTokenCount": u.Cached,
				"candidatesTokenCount": u.Output - u.Reasoning, "thoughtsTokenCount": u.Reasoning, "totalTokenCount": u.Input + u.Output},
			"modelVersion": "gemini-fake",
		}
		if stream {
			x.StartEvents(0).Send("", answer)
		} else {
			providertest.WriteJSON(w, http.StatusOK, answer)
		}
	})
}
