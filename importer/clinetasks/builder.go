package clinetasks

import (
	"cmp"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// conversation makes the messages of api, the task's API conversation,
// with the usage of each request on its reply.
func (b *builder) conversation(s *importer.Session, api []apiMessage, requests []request) {
	at := s.CreatedAt
	asked := 0 // assistant messages so far
	for i := range api {
		m := &api[i]
		mid := strconv.Itoa(i)
		when := importer.Millis(m.TS)
		if when.IsZero() && asked < len(requests) {
			// The request that sent it, or that it answers.
			when = requests[asked].at
		}
		at = cmp.Or(when, at)
		switch m.Role {
		case "user":
			b.user(mid, m, at)
			if s.Cwd == "" {
				s.Cwd = b.cwd
			}
		case "assistant":
			msg := b.assistant(mid, m, at)
			if m.IsSummary {
				break // written by the extension, not one of the task's requests
			}
			if msg != nil && asked < len(requests) {
				msg.Usage = requests[asked].usage
			}
			asked++
		default:
			b.res.Skip("unknown:" + importer.TypeName(m.Role))
		}
	}
	// Requests beyond the replies (retries, a reply left out) count on
	// the last reply, so that the task's usage is whole.
	if asked < len(requests) {
		if last := b.lastAssistant(); last != nil {
			for _, r := range requests[asked:] {
				last.Usage.Add(r.usage)
			}
		}
	}
}

// builder maps the conversation's messages to loom messages in order.
type builder struct {
	res             *importer.Result
	file            string
	model, provider string
	msgs            []*loom.Message
	calls           map[string]*loom.Part
	// children are the sub-tasks a Roo Code task started, in order, for
	// its new_task calls.
	children []string
	cwd      string
}

// cwdLine is where the environment details name the working directory:
// "# Current Working Directory (…) Files" (Cline), "# Current Workspace
// Directory (…) Files" (Roo Code).
var cwdLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^# Current (?:Working|Workspace) Directory \((.+?)\) Files`)
})

func (b *builder) user(mid string, m *apiMessage, at time.Time) {
	msg := &loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at}
	for j, bl := range blocks(m.Content) {
		pid := mid + "/" + strconv.Itoa(j)
		switch bl.Type {
		case "text":
			text := strings.TrimSpace(bl.Text)
			if strings.HasPrefix(text, "<environment_details>") {
				// What the extension adds to every request about the
				// editor's state, not what the user wrote.
				if b.cwd == "" {
					if c := cwdLine().FindStringSubmatch(text); c != nil {
						b.cwd = strings.TrimSpace(c[1])
					}
				}
				b.res.Skip("environment-details")
				continue
			}
			if text = unwrap(text); text != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: text})
			}
		case "image":
			if p, ok := image(pid, bl); ok {
				msg.Parts = append(msg.Parts, p)
			}
		case "tool_result":
			b.result(bl)
		default:
			b.res.Skip("unknown-block:" + importer.TypeName(bl.Type))
		}
	}
	b.add(msg)
}

func (b *builder) assistant(mid string, m *apiMessage, at time.Time) *loom.Message {
	role := loom.RoleAssistant
	if m.IsSummary {
		role = loom.RoleSummary
	}
	msg := &loom.Message{ID: mid, Role: role, Model: b.model, Provider: b.provider, CreatedAt: at}
	if m.IsSummary {
		msg.Usage.Compactions = 1
	}
	for j, bl := range blocks(m.Content) {
		pid := mid + "/" + strconv.Itoa(j)
		switch bl.Type {
		case "text":
			if strings.TrimSpace(bl.Text) != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: bl.Text})
			}
		case "thinking", "reasoning":
			p := loom.Part{ID: pid, Type: loom.PartReasoning, Text: cmp.Or(bl.Thinking, bl.Text)}
			if bl.Signature != "" {
				p.Metadata = importer.Meta("signature", bl.Signature)
			}
			if p.Text != "" || p.Metadata != nil {
				msg.Parts = append(msg.Parts, p)
			}
		case "redacted_thinking":
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Metadata: importer.Meta("redacted_data", bl.Data)})
		case "tool_use":
			name := cmp.Or(strings.TrimSpace(bl.Name), "unknown")
			in := importer.CompactJSON(bl.Input)
			if in == nil || in[0] != '{' {
				in = json.RawMessage(`{}`)
			}
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartTool, CallID: cmp.Or(bl.ID, pid), Name: name, Status: loom.ToolRunning, Input: in})
			if (name == "new_task" || name == "newTask") && len(b.children) > 0 {
				// Roo Code's sub-task, which its history item lists in
				// the order the calls started them.
				msg.Parts = append(msg.Parts, loom.Part{ID: pid + "/agent", Type: loom.PartAgent, Name: name, SessionID: b.children[0]})
				b.children = b.children[1:]
			}
		default:
			b.res.Skip("unknown-block:" + importer.TypeName(bl.Type))
		}
	}
	if len(msg.Parts) == 0 {
		b.res.Skip("empty-" + role + "-message")
		return nil
	}
	b.add(msg)
	return msg
}

// result completes the call a tool_result answers.
func (b *builder) result(bl block) {
	p := b.calls[bl.ToolUseID]
	if p == nil {
		b.res.Skip("orphan-tool-result")
		return
	}
	text := plain(bl.Content)
	if bl.IsError {
		p.Status, p.Error = loom.ToolError, cmp.Or(text, "error")
		return
	}
	out, _ := json.Marshal(text)
	p.Status, p.Output = loom.ToolCompleted, out
}

func (b *builder) add(msg *loom.Message) {
	if len(msg.Parts) == 0 {
		b.res.Skip("empty-" + msg.Role + "-message")
		return
	}
	done := msg.CreatedAt
	msg.CompletedAt = &done
	b.msgs = append(b.msgs, msg)
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Type == loom.PartTool {
			b.calls[p.CallID] = p
		}
	}
}

func (b *builder) lastAssistant() *loom.Message {
	for i := len(b.msgs) - 1; i >= 0; i-- {
		if b.msgs[i].Role == loom.RoleAssistant {
			return b.msgs[i]
		}
	}
	return nil
}
