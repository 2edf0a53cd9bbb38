package importer

import (
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
)

// ReplyWriter is what a hand-off writer makes of a reply, as WriteReply
// walks its parts: a reply is its text and calls up to their results,
// which follow it; what it says after them is the next reply.
type ReplyWriter interface {
	// Part takes a text or reasoning part.
	Part(p loom.Part)
	// Call takes tool part p, a call of the target's tool name with
	// args, under call id id.
	Call(id, name string, args any, p loom.Part)
	// Record takes a call the target has no tool for, told as text.
	Record(text string)
	// Calls is how many calls the reply holds so far.
	Calls() int
	// Flush writes the reply held so far, and its calls' results; one
	// that holds nothing writes nothing.
	Flush()
}

// WriteReply writes the parts of a reply, a hand-off's entry, through w:
// the calls of the target's tools (by tools) as calls, any other call as
// a text record (counted in out), and text or reasoning after a call's
// result as the next reply.
func WriteReply(h *handoff.Handoff, out *handoff.Handed, ids *handoff.CallIDs, tools handoff.Tools, parts []loom.Part, w ReplyWriter) {
	for _, p := range parts {
		switch p.Type {
		case loom.PartReasoning, loom.PartText:
			if w.Calls() > 0 {
				w.Flush()
			}
			w.Part(p)
		case loom.PartTool:
			name, args := h.Call(p, tools)
			if name == "" {
				if w.Calls() > 0 {
					w.Flush()
				}
				out.ToolRecords++
				w.Record(handoff.ToolRecord(p))
				continue
			}
			out.ToolCalls++
			w.Call(ids.For(p), name, args, p)
		}
	}
	w.Flush()
}
