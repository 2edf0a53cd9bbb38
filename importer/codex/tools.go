package codex

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// toolCall adds a tool call, running until its output is read.
func (rd *reader) toolCall(n int, callID, name string, input json.RawMessage) {
	m := rd.assistant(n)
	if callID == "" {
		callID = "line-" + strconv.Itoa(n)
	}
	if name == "" {
		name = "unknown"
	}
	t := rd.now
	i := rd.addPart(m, loom.Part{Type: loom.PartTool, CallID: callID, Name: name, Status: loom.ToolRunning, Input: input, StartedAt: &t})
	c := &call{msg: m, idx: i}
	rd.calls[callID], rd.running[callID] = c, c
	if isSpawn(name) {
		c.agentType, c.task = spawnArgs(input)
		rd.spawns = append(rd.spawns, c)
	}
}

// hostedTool adds a tool the model's service ran itself (web search,
// image generation): the item says how it ended; output, if any, is a
// note.
func (rd *reader) hostedTool(n int, it *responseItem, name string, input json.RawMessage, output string) {
	m := rd.assistant(n)
	callID := firstOf(it.CallID, it.ID)
	if callID == "" {
		callID = "line-" + strconv.Itoa(n)
	}
	t := rd.now
	p := loom.Part{Type: loom.PartTool, CallID: callID, Name: name, Input: input, StartedAt: &t}
	switch status := str(it.Status); status {
	case "", "completed":
		p.Status, p.EndedAt = loom.ToolCompleted, &t
		if output != "" {
			p.Output, _ = json.Marshal(output)
		}
	case "failed", "incomplete", "cancelled":
		p.Status, p.Error, p.EndedAt = loom.ToolError, name+" "+status, &t
	default:
		p.Status = loom.ToolRunning
	}
	rd.addPart(m, p)
}

// toolOutput folds a tool's output into its call's part. An output whose
// call is not in the file gets a part of its own.
func (rd *reader) toolOutput(n int, it *responseItem) {
	c := rd.calls[it.CallID]
	if c == nil || it.CallID == "" {
		m := rd.assistant(n)
		callID, name := it.CallID, firstOf(it.Name, "unknown")
		if callID == "" {
			callID = "line-" + strconv.Itoa(n)
		}
		i := rd.addPart(m, loom.Part{Type: loom.PartTool, CallID: callID, Name: name, Status: loom.ToolRunning})
		c = &call{msg: m, idx: i}
		rd.calls[callID] = c
	}
	delete(rd.running, it.CallID)
	out := parseOutput(it.Output)
	if importer.IsNull(it.Output) && !importer.IsNull(it.Tools) {
		out.text = string(it.Tools)
	}
	t := rd.now
	p := &c.msg.Parts[c.idx]
	p.EndedAt, p.Metadata = &t, out.meta
	switch {
	case out.failed != "" || c.failed != "":
		p.Status, p.Output = loom.ToolError, nil
		p.Error = firstOf(strings.TrimSpace(out.text), out.failed, c.failed)
	default:
		p.Status, p.Error = loom.ToolCompleted, ""
		p.Output, _ = json.Marshal(out.text)
		if isSpawn(p.Name) && !c.agent {
			rd.spawned(c, out.text)
		}
	}
	rd.touch(c.msg)
	rd.open = false
}

// output is what a tool call returned.
type output struct {
	text   string
	meta   json.RawMessage
	failed string // why the call failed, "" when it did not
}

// parseOutput reads a tool output: plain text; text wrapping
// {"output", "metadata": {"exit_code"}}; text headed by an exit code
// line; content items; or {"content", "success"}.
func parseOutput(raw json.RawMessage) output {
	var out output
	if importer.IsNull(raw) {
		return out
	}
	switch raw[0] {
	case '"':
		out.text = str(raw)
		if t := strings.TrimSpace(out.text); strings.HasPrefix(t, "{") {
			var w struct {
				Output   *string         `json:"output"`
				Metadata json.RawMessage `json:"metadata"`
				IsError  bool            `json:"isError"`
			}
			if json.Unmarshal([]byte(t), &w) == nil {
				switch {
				case w.Output != nil:
					out.text = *w.Output
					if len(w.Metadata) > 0 && w.Metadata[0] == '{' {
						out.meta = w.Metadata
						var m struct {
							ExitCode json.RawMessage `json:"exit_code"`
						}
						if json.Unmarshal(w.Metadata, &m) == nil {
							if code, ok := integer(m.ExitCode); ok && code != 0 {
								out.failed = "exit code " + strconv.FormatInt(code, 10)
							}
						}
					}
				case w.IsError:
					out.failed = "the tool failed"
				}
				return out
			}
		}
		if code, ok := headerExitCode(out.text); ok && code != 0 {
			out.failed = "exit code " + strconv.FormatInt(code, 10)
		}
	case '[':
		out.text = itemsText(items(raw))
	case '{':
		var o struct {
			Content json.RawMessage `json:"content"`
			Success *bool           `json:"success"`
		}
		if json.Unmarshal(raw, &o) == nil && len(o.Content) > 0 {
			if s := str(o.Content); s != "" {
				out.text = s
			} else {
				out.text = itemsText(items(o.Content))
			}
			if o.Success != nil && !*o.Success {
				out.failed = "the tool failed"
			}
			return out
		}
		out.text = string(raw)
	default:
		out.text = string(raw)
	}
	return out
}

// itemsText joins the texts of content items, an image standing as
// "[image]".
func itemsText(cs []contentItem) string {
	var b strings.Builder
	for _, c := range cs {
		t := c.Text
		if c.Type == "input_image" || c.Type == "image" {
			t = "[image]"
		}
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(t)
	}
	return b.String()
}

// headerExitCode reads the exit code in the header lines of a shell
// tool's output ("Exit code: 1" or "Process exited with code 1" before
// "Output:").
func headerExitCode(s string) (int64, bool) {
	if !strings.HasPrefix(s, "Exit code: ") && !strings.HasPrefix(s, "Chunk ID: ") &&
		!strings.HasPrefix(s, "Wall time: ") && !strings.HasPrefix(s, "Process exited with code ") {
		return 0, false
	}
	for i := 0; i < 8 && s != ""; i++ {
		var l string
		l, s, _ = strings.Cut(s, "\n")
		l = strings.TrimSpace(l)
		var num string
		switch {
		case l == "Output:":
			return 0, false
		case strings.HasPrefix(l, "Exit code: "):
			num = strings.TrimPrefix(l, "Exit code: ")
		case strings.HasPrefix(l, "Process exited with code "):
			num = strings.TrimPrefix(l, "Process exited with code ")
		default:
			continue
		}
		code, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		return code, err == nil
	}
	return 0, false
}

// argumentsInput turns a function call's arguments (a JSON text, as a
// string) into the tool part's input object.
func argumentsInput(raw json.RawMessage) json.RawMessage {
	if importer.IsNull(raw) {
		return json.RawMessage("{}")
	}
	if raw[0] != '"' {
		return objectInput(raw)
	}
	s := strings.TrimSpace(str(raw))
	switch {
	case s == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(s)):
		return objectInput(json.RawMessage(s))
	}
	return textInput("arguments", raw)
}

// objectInput returns raw when it is a JSON object, else raw wrapped as
// {"arguments": raw}.
func objectInput(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if importer.IsNull(raw) {
		return json.RawMessage("{}")
	}
	if raw[0] == '{' && json.Valid(raw) {
		return raw
	}
	b, err := json.Marshal(map[string]json.RawMessage{"arguments": raw})
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// textInput wraps a free-form input (a string) as {key: text}; an object
// is kept as it is.
func textInput(key string, raw json.RawMessage) json.RawMessage {
	if importer.IsNull(raw) {
		return json.RawMessage("{}")
	}
	if raw[0] == '{' {
		return objectInput(raw)
	}
	var v any = str(raw)
	if raw[0] != '"' {
		v = raw
	}
	b, err := json.Marshal(map[string]any{key: v})
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// firstOf returns the first non-empty string.
func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// fail records that an event says call id failed, and marks its part so
// if its output is already read.
func (rd *reader) fail(id, why string) {
	c := rd.calls[id]
	if c == nil || id == "" {
		return
	}
	c.failed = why
	p := &c.msg.Parts[c.idx]
	if p.Status == loom.ToolCompleted {
		p.Status, p.Error = loom.ToolError, firstOf(strings.TrimSpace(loom.JSONText(p.Output)), why)
		p.Output = nil
	}
}

// interrupt ends the calls still running when a turn is aborted: they
// will get no output.
func (rd *reader) interrupt() {
	t := rd.now
	for id, c := range rd.running {
		p := &c.msg.Parts[c.idx]
		if p.Status == loom.ToolRunning {
			p.Status, p.Error, p.EndedAt = loom.ToolError, loom.Interrupted, &t
		}
		delete(rd.running, id)
	}
}
