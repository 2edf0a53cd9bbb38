package claudecode

import (
	"strings"

	json "github.com/goccy/go-json"

	"github.com/loomhq/loom"
)

// instructionAttachments are the attachment lines (Claude Code 2.1)
// that hold what the agent was told rather than the conversation: the
// instruction files it read (CLAUDE.md and the rest, "instructions"),
// the environment it runs in ("environment"), and its system prompt
// ("prompt_snapshot", written before each request). Each is a system
// message: kept, but never a prompt, a title or what recall hands back.
// The other attachments (tool and skill listings, dates, reminders)
// are counted as skipped.
var instructionAttachments = map[string]bool{"instructions": true, "environment": true, "prompt_snapshot": true}

// instructions reports whether r is an attachment of what the agent was
// told (instructionAttachments).
func instructions(r *record) bool {
	return r.Type == "attachment" && r.Attachment != nil && instructionAttachments[r.Attachment.Type]
}

// attachmentText is the text of an instructions attachment: the system
// prompt of a prompt_snapshot; what the others put before the model
// (rendered), without the <system-reminder> that wraps it, else the
// instruction files' contents.
func attachmentText(r *record) string {
	a := r.Attachment
	if a.Type == "prompt_snapshot" {
		var parts []string
		if json.Unmarshal(a.SystemPrompt, &parts) != nil {
			var one string
			if json.Unmarshal(a.SystemPrompt, &one) != nil {
				return ""
			}
			parts = []string{one}
		}
		return strings.TrimSpace(strings.Join(parts, "\n\n"))
	}
	var rendered []struct {
		Content json.RawMessage `json:"content"`
	}
	var texts []string
	if json.Unmarshal(r.Rendered, &rendered) == nil {
		for _, c := range rendered {
			var t string
			if json.Unmarshal(c.Content, &t) == nil {
				texts = append(texts, unwrapReminder(t))
			}
		}
	}
	if len(texts) == 0 {
		for _, f := range a.Files {
			if strings.TrimSpace(f.Content) != "" {
				texts = append(texts, "Contents of "+f.Path+":\n\n"+f.Content)
			}
		}
	}
	return strings.TrimSpace(strings.Join(texts, "\n\n"))
}

// unwrapReminder is text without the <system-reminder> tags around it.
func unwrapReminder(text string) string {
	t := strings.TrimSpace(text)
	if inner, ok := strings.CutPrefix(t, "<system-reminder>"); ok {
		if inner, ok = strings.CutSuffix(inner, "</system-reminder>"); ok {
			return strings.TrimSpace(inner)
		}
	}
	return t
}

// addedIn names the messages of msgs made of instructions attachments:
// a copy imported before they were read lacks them
// (importer.Session.Added).
func (b *builder) addedIn(msgs []*loom.Message) map[string]bool {
	var out map[string]bool
	for _, m := range msgs {
		if b.attached[m.ID] {
			if out == nil {
				out = map[string]bool{}
			}
			out[m.ID] = true
		}
	}
	return out
}
