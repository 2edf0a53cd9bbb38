package opencode

import (
	"encoding/json"
	"time"

	"github.com/loomhq/loom/handoff"
)

// The shapes below are the JSON opencode writes: a session's info, a
// message's info and a part, the same in a storage tree file and in a
// data column of opencode.db (where the ids live in columns instead).
// Only the fields the reader uses are declared; numbers that are times
// or counts are read as float64 so that a value written as 1.5e12 or
// 12.0 still reads.

// sessionInfo is storage/session/<project>/<session>.json.
type sessionInfo struct {
	ParentID  string `json:"parentID"`
	Title     string `json:"title"`
	Directory string `json:"directory"`
	Version   string `json:"version"`
	Time      struct {
		Created  float64 `json:"created"`
		Updated  float64 `json:"updated"`
		Archived float64 `json:"archived"`
	} `json:"time"`
	// Metadata is the session's metadata column: a handed-off session's
	// records the loom session it continues (handoff.OriginField).
	Metadata struct {
		LoomHandoff *handoff.Origin `json:"loomHandoff"`
	} `json:"metadata"`
}

// messageInfo is a message: storage/message/<session>/<message>.json or
// message.data.
type messageInfo struct {
	Role string `json:"role"`
	Time struct {
		Created   float64 `json:"created"`
		Completed float64 `json:"completed"`
	} `json:"time"`
	// Summary is an object on user messages (a title and diffs) and
	// true on the assistant message holding a compaction summary.
	Summary    json.RawMessage `json:"summary"`
	ModelID    string          `json:"modelID"`
	ProviderID string          `json:"providerID"`
	Error      json.RawMessage `json:"error"`
	Tokens     *tokens         `json:"tokens"`
	// Cost is the message's cost in US dollars, by the prices opencode
	// knows for the model (of models.dev, or a provider's config).
	Cost float64 `json:"cost"`
	Path struct {
		Cwd string `json:"cwd"`
	} `json:"path"`
}

// tokens is an assistant message's or a step's token counts.
type tokens struct {
	// Total is the sum opencode records beside the counts (0 where it
	// records none).
	Total     float64 `json:"total"`
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	Reasoning float64 `json:"reasoning"`
	Cache     struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

// partInfo is a part: storage/part/<message>/<part>.json or part.data.
// It is the union of the part types' fields.
type partInfo struct {
	Type string `json:"type"`

	// text, reasoning
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`

	// tool
	CallID string     `json:"callID"`
	Tool   string     `json:"tool"`
	State  *toolState `json:"state"`

	// file
	Mime     string      `json:"mime"`
	Filename string      `json:"filename"`
	URL      string      `json:"url"`
	Source   *fileSource `json:"source"`

	// step-finish
	Tokens *tokens `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// toolState is a tool part's state: pending, running, completed or
// error.
type toolState struct {
	Status   string          `json:"status"`
	Input    json.RawMessage `json:"input"`
	Output   json.RawMessage `json:"output"`
	Error    json.RawMessage `json:"error"`
	Title    string          `json:"title"`
	Metadata json.RawMessage `json:"metadata"`
	Time     struct {
		Start float64 `json:"start"`
		End   float64 `json:"end"`
	} `json:"time"`
	Attachments []partInfo `json:"attachments"`
}

// fileSource says where a file part came from: a file, a symbol in it,
// or an MCP resource.
type fileSource struct {
	Type string `json:"type"`
	Path string `json:"path"`
	URI  string `json:"uri"`
	Text struct {
		Value string  `json:"value"`
		Start float64 `json:"start"`
		End   float64 `json:"end"`
	} `json:"text"`
}

// maxMillis bounds the times accepted: later than the year 5000 is not a
// time opencode wrote.
const maxMillis = 95_617_584_000_000

// millis turns opencode's milliseconds since the epoch into a time; the
// zero time for none or nonsense.
func millis(ms float64) time.Time {
	if !(ms > 0 && ms < maxMillis) {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// millisPtr is millis for an optional time.
func millisPtr(ms float64) *time.Time {
	t := millis(ms)
	if t.IsZero() {
		return nil
	}
	return &t
}
