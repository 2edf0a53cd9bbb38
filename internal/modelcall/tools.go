package modelcall

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
)

// ToolSchema is the JSON Schema object of a tool's input, decoded: an
// empty map when the tool has none, an error naming the provider and the
// tool when it is not a JSON object.
func ToolSchema(provider string, t loom.ToolSpec) (map[string]any, error) {
	schema := map[string]any{}
	if len(t.Schema) > 0 {
		if err := json.Unmarshal(t.Schema, &schema); err != nil || schema == nil {
			return nil, fmt.Errorf("%s: tool %s: schema is not a JSON object", provider, t.Name)
		}
	}
	return schema, nil
}

// InputJSON turns a call's streamed input into a part's input: the text
// when it is JSON, {} when there is none, and otherwise the text as a JSON
// string, so that a malformed call is kept and reaches the tool (which
// reports it) instead of failing the turn.
func InputJSON(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(s)):
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// Finished reports whether a tool call has its result: it completed or
// failed.
func Finished(p loom.Part) bool {
	return p.Status == loom.ToolCompleted || p.Status == loom.ToolError
}

// Results are the finished results that tool messages carry, by call id.
type Results map[string]loom.Part

// ResultsOf gathers the results of the tool messages in msgs.
func ResultsOf(msgs []*loom.Message) Results {
	results := Results{}
	for _, m := range msgs {
		if m.Role != loom.RoleTool {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == loom.PartTool && Finished(p) {
				results[p.CallID] = p
			}
		}
	}
	return results
}

// Answer is the part whose result answers call: the call itself once it
// has finished, else the result a tool message carries, else the call as
// it is (unfinished, which Result tells as interrupted: a call must never
// go unanswered).
func (r Results) Answer(call loom.Part) loom.Part {
	if res, ok := r[call.CallID]; ok && !Finished(call) {
		return res
	}
	return call
}

// Result is what the model is told a call returned: its output as text,
// or, with failed set, its error (a stock one when the tool gave none) or
// loom.Interrupted when it never finished.
func Result(p loom.Part) (text string, failed bool) {
	switch p.Status {
	case loom.ToolCompleted:
		return loom.JSONText(p.Output), false
	case loom.ToolError:
		if p.Error == "" {
			return "the tool failed", true
		}
		return p.Error, true
	}
	return loom.Interrupted, true
}
