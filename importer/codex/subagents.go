package codex

import (
	"encoding/json"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// threadSpawn is a session_meta source {"subagent": {"thread_spawn":
// {…}}}: the session of an agent that another one spawned.
type threadSpawn struct {
	ParentThreadID string          `json:"parent_thread_id"`
	AgentPath      json.RawMessage `json:"agent_path"`
	AgentNickname  json.RawMessage `json:"agent_nickname"`
	AgentRole      json.RawMessage `json:"agent_role"`
}

// subagentSource returns the thread_spawn of a session_meta source, nil
// for any other source.
func subagentSource(src json.RawMessage) *threadSpawn {
	if len(src) == 0 || src[0] != '{' {
		return nil
	}
	var s struct {
		Subagent json.RawMessage `json:"subagent"`
	}
	if json.Unmarshal(src, &s) != nil || len(s.Subagent) == 0 || s.Subagent[0] != '{' {
		return nil
	}
	var sub struct {
		ThreadSpawn *threadSpawn `json:"thread_spawn"`
	}
	if json.Unmarshal(s.Subagent, &sub) != nil || sub.ThreadSpawn == nil || strings.TrimSpace(sub.ThreadSpawn.ParentThreadID) == "" {
		return nil
	}
	return sub.ThreadSpawn
}

// label names a spawned agent: the task name of its path
// (/root/<task name>), else its nickname and role.
func (ts *threadSpawn) label(m *sessionMeta) string {
	if p := strings.TrimSpace(str(ts.AgentPath)); p != "" {
		if name := lastSegment(p); name != "" {
			return name
		}
	}
	nick := firstOf(strings.TrimSpace(str(ts.AgentNickname)), strings.TrimSpace(str(m.AgentNickname)))
	role := firstOf(strings.TrimSpace(str(ts.AgentRole)), strings.TrimSpace(str(m.AgentRole)))
	switch {
	case nick != "" && role != "":
		return nick + " (" + role + ")"
	case nick != "" || role != "":
		return nick + role
	}
	return "Sub-agent"
}

// hasPrompt reports whether msgs hold a user message with text.
func hasPrompt(msgs []*loom.Message) bool {
	for _, m := range msgs {
		if m.Role == loom.RoleUser && strings.TrimSpace(m.Text()) != "" {
			return true
		}
	}
	return false
}

// skipCopied counts a line of the parent's history that a sub-agent's
// rollout starts with (a spawn that forks the parent's context copies
// it). The copy's token counts still set the running total that the
// sub-agent's own counts follow.
func (rd *reader) skipCopied(rc *rec) {
	if rc.typ == "event_msg" {
		var ev event
		if json.Unmarshal(rc.payload, &ev) == nil && ev.Type == "token_count" && rd.tokenCount(rc.n, &ev) {
			return
		}
	}
	rd.res.Skip("inherited:" + importer.TypeName(rc.typ))
}

// interAgent handles an inter_agent_communication line: a message
// another agent sent this one.
func (rd *reader) interAgent(rc *rec) {
	var c agentMail
	if err := json.Unmarshal(rc.payload, &c); err != nil {
		rd.res.Problemf(rd.path, rc.n, "inter_agent_communication: "+err.Error())
		return
	}
	rd.agentMessage(rc.n, str(c.Author), str(c.Recipient), str(c.Content))
}

// agentMessage adds a message one agent sent another at line n: from an
// agent above the recipient (its parent's task, a follow-up), it is a
// prompt, a user message; from any other (a sub-agent's answer, a
// sibling's note), a system message. Codex's envelope around the text
// (Message Type, Task name, Sender, then the Payload) is left out. A
// message whose text is only encrypted is counted as skipped.
func (rd *reader) agentMessage(n int, author, recipient, text string) {
	text = strings.TrimSpace(envelopePayload(text))
	if text == "" {
		rd.res.Skip("inter_agent_communication:encrypted")
		return
	}
	role := loom.RoleSystem
	author = strings.TrimSuffix(author, "/")
	if author != "" && strings.HasPrefix(recipient, author+"/") {
		role = loom.RoleUser
	}
	rd.endTurn()
	m := rd.message(n, role, "")
	rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
}

// envelopePayload returns the payload of a message between agents that
// Codex wrapped in its envelope ("Message Type: NEW_TASK\nTask name:
// …\nSender: …\nPayload:\n<payload>"); any other text as it is.
func envelopePayload(text string) string {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, "Message Type:") {
		return text
	}
	for range 8 {
		line, rest, ok := strings.Cut(t, "\n")
		if p, found := strings.CutPrefix(strings.TrimSpace(line), "Payload:"); found {
			return strings.TrimSpace(p + "\n" + rest)
		}
		if !ok {
			break
		}
		t = rest
	}
	return text
}

// agentJSON reads a message whose content items cs are one text, a
// message between agents as Codex records one in the recipient's
// history: the JSON of an agentMail {author, recipient, content, …}.
func agentJSON(cs []contentItem) (author, recipient, text string, ok bool) {
	if len(cs) != 1 || (cs[0].Type != "input_text" && cs[0].Type != "output_text") {
		return "", "", "", false
	}
	t := strings.TrimSpace(cs[0].Text)
	if !strings.HasPrefix(t, "{") || !strings.Contains(t, `"recipient"`) {
		return "", "", "", false
	}
	var c agentMail
	if json.Unmarshal([]byte(t), &c) != nil {
		return "", "", "", false
	}
	author, recipient = str(c.Author), str(c.Recipient)
	if !strings.HasPrefix(author, "/") || !strings.HasPrefix(recipient, "/") || (len(c.Content) > 0 && c.Content[0] != '"') {
		return "", "", "", false
	}
	return author, recipient, str(c.Content), true
}

// isSpawn reports whether a tool starts a sub-agent.
func isSpawn(name string) bool {
	return name == "spawn_agent" || strings.HasSuffix(name, ".spawn_agent")
}

// spawned adds an agent part beside a spawn_agent call whose output
// names the thread it started ({"agent_id", "nickname"}). An output that
// names the agent only by its task path ({"task_name": "/root/…"}) has
// it kept, for an event that names the thread.
func (rd *reader) spawned(c *call, out string) {
	var o struct {
		AgentID  json.RawMessage `json:"agent_id"`
		Nickname json.RawMessage `json:"nickname"`
		TaskName json.RawMessage `json:"task_name"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(out)), &o) != nil {
		return
	}
	c.path = strings.TrimSpace(str(o.TaskName))
	rd.linkAgent(c, str(o.AgentID), str(o.Nickname))
}

// spawnArgs reads the arguments of a spawn_agent call that name the
// agent it starts: its agent_type and task_name, trimmed.
func spawnArgs(input json.RawMessage) (agentType, task string) {
	var a struct {
		AgentType json.RawMessage `json:"agent_type"`
		TaskName  json.RawMessage `json:"task_name"`
	}
	_ = json.Unmarshal(input, &a) // an input of another shape names nothing
	return strings.TrimSpace(str(a.AgentType)), strings.TrimSpace(str(a.TaskName))
}

// linkAgent adds to c's message the agent part of the sub-agent session
// id, named after the agent's role, else its nickname, else its task
// name.
func (rd *reader) linkAgent(c *call, id, nickname string) {
	id = strings.TrimSpace(id)
	if id == "" || c.agent || strings.ContainsAny(id, "\n\r") {
		return
	}
	task := strings.TrimSpace(lastSegment(firstOf(c.path, c.task)))
	name := firstOf(c.agentType, strings.TrimSpace(nickname), task, "default")
	rd.addPart(c.msg, loom.Part{Type: loom.PartAgent, Name: name, SessionID: id})
	c.agent = true
}

// subAgentActivity handles a sub_agent_activity event or a
// SubAgentActivity item: when it says (kind) an agent started, it names
// the spawn call (callID: the event's event_id, the item's id) and the
// thread (agent_thread_id) and path (agent_path) of the agent.
func (rd *reader) subAgentActivity(callID, id, path, kind string) {
	if !strings.EqualFold(kind, "started") {
		return
	}
	path = strings.TrimSpace(path)
	if c := rd.calls[callID]; c != nil && isSpawn(c.msg.Parts[c.idx].Name) {
		rd.linkAgent(c, id, "")
		return
	}
	if c := rd.spawnOf(path); c != nil {
		rd.linkAgent(c, id, "")
	}
}

// spawnOf returns the first spawn_agent call without its agent part
// whose agent has path: by the task path of its output, else by the task
// name of its arguments (relative to the spawning agent's path).
func (rd *reader) spawnOf(path string) *call {
	if path == "" {
		return nil
	}
	for _, c := range rd.spawns {
		if c.agent {
			continue
		}
		if c.path == path || (c.path == "" && c.task != "" && (c.task == path || strings.HasSuffix(path, "/"+c.task))) {
			return c
		}
	}
	return nil
}
