package modelcall

import (
	"strings"

	"github.com/loomhq/loom"
)

// Reply assembles the parts of a streamed reply in the order the model
// produced them, telling onEvent of each piece of text and reasoning as
// it arrives. A tool call's input arrives in pieces of JSON text, put
// together when the reply is complete.
type Reply struct {
	onEvent func(loom.StreamEvent)
	parts   []loom.Part
	inputs  map[int]*strings.Builder // part index → tool input so far
}

// NewReply returns an empty reply that tells onEvent (when not nil) of
// the text and reasoning added to it.
func NewReply(onEvent func(loom.StreamEvent)) *Reply {
	if onEvent == nil {
		onEvent = func(loom.StreamEvent) {}
	}
	return &Reply{onEvent: onEvent}
}

// Start adds part p and returns its index. Text it starts with is told
// as if appended.
func (r *Reply) Start(p loom.Part) int {
	text := p.Text
	p.Text = ""
	r.parts = append(r.parts, p)
	i := len(r.parts) - 1
	r.Append(i, text)
	return i
}

// Add appends text to the last part when that part is of type typ (text
// or reasoning), else starts a part of that type with it. Empty text adds
// nothing.
func (r *Reply) Add(typ, text string) {
	if text == "" {
		return
	}
	if n := len(r.parts); n > 0 && r.parts[n-1].Type == typ {
		r.Append(n-1, text)
		return
	}
	r.Start(loom.Part{Type: typ, Text: text})
}

// Append adds a piece of text to part i and tells onEvent of it, as
// reasoning for a reasoning part, else as text.
func (r *Reply) Append(i int, text string) {
	if text == "" {
		return
	}
	r.parts[i].Text += text
	kind := loom.EventText
	if r.parts[i].Type == loom.PartReasoning {
		kind = loom.EventReasoning
	}
	r.onEvent(loom.StreamEvent{Kind: kind, Text: text})
}

// AppendInput adds a piece of the input JSON of tool part i.
func (r *Reply) AppendInput(i int, s string) {
	if r.inputs == nil {
		r.inputs = map[int]*strings.Builder{}
	}
	b := r.inputs[i]
	if b == nil {
		b = &strings.Builder{}
		r.inputs[i] = b
	}
	b.WriteString(s)
}

// Part returns part i, for the caller to fill in what its protocol adds.
func (r *Reply) Part(i int) *loom.Part { return &r.parts[i] }

// Parts returns the parts, each tool call with its input (InputJSON of
// the pieces that arrived).
func (r *Reply) Parts() []loom.Part {
	for i := range r.parts {
		if r.parts[i].Type != loom.PartTool {
			continue
		}
		var in string
		if b := r.inputs[i]; b != nil {
			in = b.String()
		}
		r.parts[i].Input = InputJSON(in)
	}
	return r.parts
}
