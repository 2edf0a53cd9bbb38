package storetest

import (
	"encoding/json"
	"time"

	"github.com/loomhq/loom"
)

// CompletedTool is a tool part that ran from start to end and returned
// output, for fixtures; input and output are JSON text.
func CompletedTool(callID, name, input, output string, start, end time.Time) loom.Part {
	return loom.Part{Type: loom.PartTool, CallID: callID, Name: name, Status: loom.ToolCompleted,
		Input: json.RawMessage(input), Output: json.RawMessage(output), StartedAt: &start, EndedAt: &end}
}
