package human

import (
	"bytes"
	"encoding/json"
)

// PrettyJSON indents a JSON value (a tool's input) for people to read: ""
// for none or null, and the value as it is when it is not valid JSON.
func PrettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// OutputText shows a tool's output for people to read: a JSON string as
// its text, anything else as PrettyJSON.
func OutputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return PrettyJSON(raw)
}
