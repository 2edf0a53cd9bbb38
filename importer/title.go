package importer

import (
	"encoding/json"
	"strings"

	"github.com/loomhq/loom"
)

// Title is the title an imported session gets: the tool's own (s.Title),
// else its first prompt (FirstPrompt); "" when it has neither. A reader
// that knows a better name for a session whose first prompt is raw JSON
// (a sub-agent's task passed on as a tool's input) sets s.Title.
func Title(s *Session) string {
	if t := loom.TitleFrom(s.Title); t != "" {
		return t
	}
	return loom.TitleFrom(FirstPrompt(s.Messages))
}

// FirstPrompt is the text of the first user message that has words:
// raw JSON (IsJSONText) is a tool's input, never a title.
func FirstPrompt(msgs []*loom.Message) string {
	for _, m := range msgs {
		if m.Role != loom.RoleUser {
			continue
		}
		if t := m.Text(); t != "" {
			if IsJSONText(t) {
				return ""
			}
			return t
		}
	}
	return ""
}

// IsJSONText reports whether a prompt is JSON rather than words: it
// opens an object, or it is a JSON array.
func IsJSONText(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "{") || (strings.HasPrefix(t, "[") && json.Valid([]byte(t)))
}
