package gemini

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// toolPart converts one recorded tool call with its result.
func (c *converter) toolPart(m *message, msgID string, i int, tc toolCall, t time.Time) loom.Part {
	callID := tc.ID
	if callID == "" {
		callID = msgID + "/call-" + strconv.Itoa(i)
	}
	name := tc.Name
	if name == "" {
		name = "unknown"
	}
	start := t
	p := loom.Part{
		Type:      loom.PartTool,
		CallID:    callID,
		Name:      name,
		Input:     input(tc.Args),
		Title:     tc.Description,
		Metadata:  metadata(tc),
		StartedAt: &start,
	}
	out, errText, err := resultText(tc.Result)
	if err != nil {
		c.problem(m, "tool call "+strconv.Quote(trim(callID))+" result: "+err.Error())
	}
	if out != "" {
		p.Output = jsonString(out)
	}
	var end *time.Time
	if tc.Timestamp != "" {
		e := c.time(m, tc.Timestamp)
		end = &e
	}
	switch tc.Status {
	case "success":
		p.Status, p.EndedAt = loom.ToolCompleted, end
	case "error", "cancelled":
		p.Status, p.EndedAt = loom.ToolError, end
		p.Error = errText
		if p.Error == "" {
			p.Error = displayText(tc.ResultDisplay)
		}
		if p.Error == "" {
			p.Error = tc.Status
		}
	default:
		// validating, scheduled, awaiting_approval, executing: the
		// call had not finished when the file was written.
		p.Status = loom.ToolRunning
	}
	return p
}

// fold puts a function response a user record carries into the tool part
// of its call, when the call's own record had no result.
func (c *converter) fold(fr *functionResponse, t time.Time, countOrphan bool) {
	ref, ok := c.calls[fr.ID]
	if !ok {
		if countOrphan {
			c.skip("orphan:functionResponse")
		}
		return
	}
	if !ref.open {
		return
	}
	ref.open = false
	c.calls[fr.ID] = ref
	p := &ref.msg.Parts[ref.i]
	out, errText := responseText(fr.Response)
	if out != "" {
		p.Output = jsonString(out)
	}
	if p.EndedAt == nil {
		end := t
		p.EndedAt = &end
	}
	switch {
	case errText != "":
		p.Status, p.Error = loom.ToolError, errText
	case p.Status != loom.ToolError:
		p.Status = loom.ToolCompleted
	}
}

// input is a tool call's arguments as a JSON object.
func input(args json.RawMessage) json.RawMessage {
	if importer.IsNull(args) {
		return json.RawMessage(`{}`)
	}
	args = bytes.TrimSpace(args)
	if args[0] == '{' {
		return args
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"args": args})
	return b
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// displayText is a tool's display when it is text.
func displayText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// metadata keeps what Gemini CLI showed of a tool call: its display name
// and its result as displayed (text or a diff).
func metadata(tc toolCall) json.RawMessage {
	m := map[string]json.RawMessage{}
	if tc.DisplayName != "" {
		m["displayName"] = jsonString(tc.DisplayName)
	}
	if !importer.IsNull(tc.ResultDisplay) && string(bytes.TrimSpace(tc.ResultDisplay)) != `""` {
		m["resultDisplay"] = tc.ResultDisplay
	}
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}
