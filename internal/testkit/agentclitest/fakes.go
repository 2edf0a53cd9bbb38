package agentclitest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/loomhq/loom/providertest"
)

// Reply is the text a fake model answers every request with.
const Reply = "Noted; carrying on from here."

// Server is a fake model service that records every request.
type Server = providertest.Server[string]

// NewResponses serves the part of OpenAI's Responses API that Codex CLI
// uses: POST /v1/responses answered with a stream of one assistant
// message saying Reply, and an empty model list.
func NewResponses() *Server {
	return providertest.NewServer(func(w http.ResponseWriter, r *http.Request, x *providertest.Exchange[string]) {
		if !responsesCall(w, r, x.Req.Body) {
			return
		}
		id := fmt.Sprintf("resp_fake%d", x.N)
		item := map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_fake%d", x.N), "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": Reply, "annotations": []any{}}}}
		ev := x.StartEvents(0)
		ev.Send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id, "status": "in_progress"}})
		ev.Send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
		ev.Send("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": Reply})
		ev.Send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
		ev.Send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": id, "status": "completed", "output": []any{item},
			"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": 8, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 108},
		}})
	})
}

// responsesCall answers what Codex CLI asks the Responses API besides a
// response (an empty model list; 404 for anything else), refuses a
// request as the service does (uncalledTool), and reports whether r is
// a POST /v1/responses, left to the caller to answer.
func responsesCall(w http.ResponseWriter, r *http.Request, body map[string]any) bool {
	switch {
	case strings.HasSuffix(r.URL.Path, "/models"):
		providertest.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
		return false
	case !strings.HasSuffix(r.URL.Path, "/responses") || r.Method != http.MethodPost:
		providertest.WriteJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "not found: " + r.URL.Path}})
		return false
	case uncalledTool(body) != "":
		providertest.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": uncalledTool(body), "type": "invalid_request_error", "param": "input", "code": nil}})
		return false
	}
	return true
}

// uncalledTool says which call in a Responses request's input names a
// tool the request does not offer (in its tools, or in an
// additional_tools item of its input, as Codex's code mode offers them),
// which the service refuses; "" when there is none. A call of a tool in
// a namespace names the namespace; one that names none may be of any.
func uncalledTool(body map[string]any) string {
	offered := map[string]bool{}
	var offer func(ns string, tools any)
	offer = func(ns string, tools any) {
		list, _ := tools.([]any)
		for _, t := range list {
			tool, _ := t.(map[string]any)
			name, _ := tool["name"].(string)
			if tool["type"] == "namespace" {
				offer(name, tool["tools"])
				continue
			}
			offered[name] = true
			offered[ns+"."+name] = true
		}
	}
	offer("", body["tools"])
	input, _ := body["input"].([]any)
	for _, it := range input {
		if item, _ := it.(map[string]any); item["type"] == "additional_tools" {
			offer("", item["tools"])
		}
	}
	for i, it := range input {
		item, _ := it.(map[string]any)
		if item["type"] != "function_call" && item["type"] != "custom_tool_call" {
			continue
		}
		name, _ := item["name"].(string)
		if ns, _ := item["namespace"].(string); ns != "" {
			name = ns + "." + name
		}
		if !offered[name] {
			return fmt.Sprintf("input[%d]: the %s names tool %q, which the request does not offer", i, item["type"], name)
		}
	}
	return ""
}

// NewGemini serves the part of the Gemini API that Gemini CLI uses:
// generateContent and streamGenerateContent (server-sent events) answer
// Reply (or, to a request for JSON, an object that says so), and
// countTokens a small count.
func NewGemini() *Server {
	return providertest.NewServer(func(w http.ResponseWriter, r *http.Request, x *providertest.Exchange[string]) {
		path := r.URL.Path
		text := Reply
		if cfg, _ := x.Req.Body["generationConfig"].(map[string]any); cfg != nil && cfg["responseMimeType"] == "application/json" {
			// Gemini CLI's own side questions (which model to route to,
			// who speaks next) want JSON.
			text = `{"reasoning": "fake", "model_choice": "flash", "next_speaker": "user"}`
		}
		answer := map[string]any{
			"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 8, "totalTokenCount": 108},
			"modelVersion":  "gemini-fake",
		}
		switch {
		case strings.HasSuffix(path, ":countTokens"):
			providertest.WriteJSON(w, http.StatusOK, map[string]any{"totalTokens": 100})
		case strings.HasSuffix(path, ":streamGenerateContent"):
			x.StartEvents(0).Send("", answer)
		case strings.HasSuffix(path, ":generateContent"):
			providertest.WriteJSON(w, http.StatusOK, answer)
		default:
			providertest.WriteJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": 404, "message": "not found: " + path, "status": "NOT_FOUND"}})
		}
	})
}
