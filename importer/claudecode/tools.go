package claudecode

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
)

// tool makes the tool part of a call with its result, and the agent part
// of the sub-agent it ran.
func (b *builder) tool(m *loom.Message, key string, r *record, i int, bl block) {
	start := r.ts
	p := loom.Part{
		ID:        partID(r, i),
		Type:      loom.PartTool,
		CallID:    bl.ID,
		Name:      bl.Name,
		Input:     inputObject(bl.Input),
		StartedAt: &start,
	}
	if p.CallID == "" {
		b.res.Problemf(r.file, r.n, "tool call without an id")
		p.CallID = p.ID
	}
	if p.Name == "" {
		b.res.Problemf(r.file, r.n, "tool call "+p.CallID+" without a name")
		p.Name = "unknown"
	}
	var files []loom.Part
	if res, ok := b.results[bl.ID]; ok && bl.ID != "" {
		res.used = true
		rb := res.rec.blocks[res.idx]
		end := res.rec.ts
		p.EndedAt = &end
		text, images := resultContent(rb.Content)
		if rb.IsError {
			p.Status, p.Error = loom.ToolError, text
			if p.Error == "" {
				p.Error = "the tool failed"
			}
		} else {
			p.Status = loom.ToolCompleted
			p.Output, _ = json.Marshal(text)
		}
		if res.rec.Type == "user" {
			p.Metadata = toolMetadata(res.rec.ToolUseResult)
		}
		for k, img := range images {
			if f, ok := filePart(partID(res.rec, res.idx)+"/"+strconv.Itoa(k), img); ok {
				files = append(files, f)
			}
		}
	} else if b.live[key] {
		p.Status = loom.ToolRunning
	} else {
		// The conversation went on without the call's result: it was
		// interrupted.
		p.Status, p.Error = loom.ToolError, loom.Interrupted
	}
	if r.Cwd != "" && r.Cwd != b.cwd {
		p.Metadata = withCwd(p.Metadata, r.Cwd)
	}
	m.Parts = append(m.Parts, p)
	for _, f := range files {
		b.late = append(b.late, latePart{b.results[bl.ID].rec.order, f})
	}
	if a, ok := b.agents[bl.ID]; ok && bl.ID != "" {
		b.late = append(b.late, latePart{a.at, loom.Part{ID: p.ID + "/agent", Type: loom.PartAgent, Name: a.name, SessionID: a.sourceID}})
	}
}

// withCwd adds to a tool part's metadata the directory its call ran in
// ("cwd"), when it is not the session's: relative paths of the call
// (a shell command's files) are taken from it.
func withCwd(meta json.RawMessage, cwd string) json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(meta) > 0 && json.Unmarshal(meta, &m) != nil {
		return meta
	}
	m["cwd"], _ = json.Marshal(cwd)
	b, err := json.Marshal(m)
	if err != nil {
		return meta
	}
	return b
}

// resultContent reads a tool_result's content: its text (a string, the
// text blocks joined, or the JSON of content that is neither) and its
// images.
func resultContent(raw json.RawMessage) (string, []block) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		if s, ok := loom.JSONString(raw); ok {
			return s, nil
		}
	}
	var items []block
	if raw[0] == '[' && json.Unmarshal(raw, &items) == nil {
		var texts []string
		var images []block
		plain := true
		for _, it := range items {
			switch it.Type {
			case "text":
				texts = append(texts, it.Text)
			case "image", "document":
				images = append(images, it)
			default:
				plain = false
			}
		}
		if plain {
			return strings.Join(texts, "\n"), images
		}
	}
	return string(raw), nil
}

// inputObject is a tool call's input as a JSON object: {} when it has
// none, {"input": …} when it is not an object.
func inputObject(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null" || !json.Valid(raw):
		return json.RawMessage("{}")
	case raw[0] != '{':
		b, _ := json.Marshal(map[string]json.RawMessage{"input": raw})
		return b
	}
	return raw
}

// Bounds of the toolUseResult kept in a tool part's metadata: it repeats
// the result in a structured form, at times with a whole file's content,
// so a large one keeps only its small members.
const (
	maxMetadata = 8 << 10
	maxMember   = 1 << 10
)

// toolMetadata keeps Claude Code's toolUseResult (the structured result:
// exit codes, file paths, a sub-agent's id and usage) as
// {"toolUseResult": …}; members too large to keep are named in
// "omitted".
func toolMetadata(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || !loom.ValidJSON(raw) {
		return nil
	}
	if len(raw) <= maxMetadata {
		// What json.Marshal writes of it in the struct below, in one
		// pass.
		b := append(make([]byte, 0, len(raw)+20), `{"toolUseResult":`...)
		return append(loom.AppendCompactJSON(b, raw), '}')
	}
	var out struct {
		ToolUseResult json.RawMessage `json:"toolUseResult"`
		Omitted       []string        `json:"omitted,omitempty"`
	}
	var obj map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return nil // a long text: the output has it
	}
	kept := map[string]json.RawMessage{}
	for k, v := range obj {
		if len(v) <= maxMember {
			kept[k] = v
		} else {
			out.Omitted = append(out.Omitted, k)
		}
	}
	slices.Sort(out.Omitted)
	out.ToolUseResult, _ = json.Marshal(kept)
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}
