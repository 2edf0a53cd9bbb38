package importer

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// ContentBlock is one block of a message's content in Anthropic's form
// (text, thinking, tool_use, tool_result), as agents that keep their
// messages that way write them (droid, Cline's CLI). Only the fields
// the readers use are declared.
type ContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// Block is a whole content block of Anthropic's Messages API, for the
// readers that use every type's fields (Claude Code, Cline's tasks): a
// text, thinking (with its signature) or redacted_thinking (data)
// block, a tool_use, a tool_result, and an image or document (its title
// and where its bytes are).
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Title     string          `json:"title"`
	Source    *BlockSource    `json:"source"`
}

// BlockSource is where an image or document block's bytes are: inline
// (base64 data of a media type) or at a URL.
type BlockSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

// ContentBlocks decodes a message's content: a string (one text block)
// or a list of blocks; false when it is neither.
func ContentBlocks(raw json.RawMessage) ([]ContentBlock, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []ContentBlock{{Type: "text", Text: s}}, true
	}
	var blocks []ContentBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, false
	}
	return blocks, true
}

// ToolCalls are the tool calls read so far that wait for their results,
// by call id.
type ToolCalls map[string]*loom.Part

// AddBlocks appends the parts of blocks to msg, whose ID and Role are
// set: text that is not blank, reasoning in clear, and tool calls (of a
// reply; running until a tool_result completes them). A tool_result
// completes its call, at, in place. What cannot be read is reported
// through problem; block types not known are counted in res.
func (c ToolCalls) AddBlocks(res *Result, msg *loom.Message, blocks []ContentBlock, at time.Time, problem func(string)) {
	for _, b := range blocks {
		pid := msg.ID + "/" + strconv.Itoa(len(msg.Parts))
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: b.Text})
			}
		case "thinking":
			if strings.TrimSpace(b.Thinking) == "" {
				res.Skip("empty-reasoning")
				continue
			}
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: b.Thinking})
		case "tool_use":
			if msg.Role != loom.RoleAssistant || b.Name == "" {
				problem("tool_use outside a reply, or without a name")
				continue
			}
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartTool, CallID: Clip(b.ID, 256),
				Name: Clip(b.Name, 256), Status: loom.ToolRunning, Input: compactJSON(b.Input)})
		case "tool_result":
			if !c.complete(&b, at) {
				problem(noCall + Clip(b.ToolUseID, 64))
			}
		default:
			res.Skip("block:" + TypeName(b.Type))
		}
	}
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Type == loom.PartTool && p.CallID != "" {
			c[p.CallID] = p
		}
	}
}

// complete completes the tool call b answers; false when there is none.
func (c ToolCalls) complete(b *ContentBlock, at time.Time) bool {
	p := c[b.ToolUseID]
	if p == nil {
		return false
	}
	delete(c, b.ToolUseID)
	if !at.IsZero() {
		p.EndedAt = &at
	}
	out, isText := resultText(b.Content)
	switch {
	case b.IsError:
		p.Status, p.Error = loom.ToolError, Clip(out, 4000)
		if len(out) > len(p.Error) {
			// The error is kept short; the output, whole.
			p.Output, _ = json.Marshal(out)
		}
	case isText:
		p.Status = loom.ToolCompleted
		p.Output, _ = json.Marshal(out)
	default:
		// A list of results of the agent's own form (Cline's tools
		// answer with a query, its result, whether it succeeded): kept
		// as it is.
		p.Status, p.Output = loom.ToolCompleted, compactJSON(b.Content)
	}
	return true
}

// resultText is a tool result's content as text (a string, or text
// blocks joined) and true; for any other JSON, the JSON and false.
func resultText(raw json.RawMessage) (string, bool) {
	var out string
	if json.Unmarshal(raw, &out) == nil {
		return out, true
	}
	var blocks []ContentBlock
	if json.Unmarshal(raw, &blocks) != nil || len(blocks) == 0 {
		return string(raw), !json.Valid(raw)
	}
	texts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if b.Type != "text" {
			return string(raw), false
		}
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n"), true
}

// compactJSON is raw without indentation; nil when it is not JSON.
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// noCall opens the reason of a tool result whose call was not read.
const noCall = "tool_result for no earlier call: "

// LineProblem is AddBlocks' problem for line n of path: a problem of r
// at that line, but for a result whose call is not read after a line
// that could not be read (the call most likely on it, which has its
// line already): that one is counted as skipped, not a second line.
func (r *Result) LineProblem(path string, n int) func(string) {
	return func(reason string) {
		if strings.HasPrefix(reason, noCall) && r.LostBefore(path, n) {
			r.Skip("result-of-unread-call")
			return
		}
		r.Problemf(path, n, reason)
	}
}
