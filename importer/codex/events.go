package codex

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// event handles an event_msg line. The events that repeat response
// items are left out; token counts become usage; the rest are counted
// as skipped by type, some of them first telling how a tool call ended.
func (rd *reader) event(rc *rec) {
	var ev event
	if err := json.Unmarshal(rc.payload, &ev); err != nil {
		rd.res.Problemf(rd.path, rc.n, "event_msg: "+err.Error())
		return
	}
	if h := eventHandlers[ev.Type]; h != nil && h(rd, rc.n, &ev) {
		return
	}
	rd.res.Skip("event_msg:" + importer.TypeName(ev.Type))
}

// eventHandlers handle the event_msg lines by type; one reports whether
// it kept what the event holds (else the event is counted as skipped).
var eventHandlers = map[string]func(rd *reader, n int, ev *event) bool{
	"user_message":                (*reader).userEvent,
	"agent_message":               (*reader).replyEvent,
	"agent_reasoning":             (*reader).agentReasoning,
	"agent_reasoning_raw_content": (*reader).agentReasoning,
	"token_count":                 (*reader).tokenCount,
	"thread_name_updated":         (*reader).threadName,
	"task_started":                (*reader).turnStarted,
	"turn_started":                (*reader).turnStarted,
	"turn_aborted":                (*reader).turnAborted,
	"patch_apply_end":             (*reader).patchApplied,
	"exec_command_end":            (*reader).commandEnded,
	"collab_agent_spawn_end":      (*reader).agentSpawned,
	"sub_agent_activity":          (*reader).subAgentEvent,
	"item_completed":              (*reader).itemCompleted,
}

// replyEvent handles an agent_message event: the reply's text, unless
// a response item holds it.
func (rd *reader) replyEvent(n int, ev *event) bool {
	text := str(ev.Message)
	if strings.TrimSpace(text) == "" || rd.duplicate("a", text) {
		return false
	}
	if rd.pendingEvent(n) {
		rd.res.Skip("event_msg:agent_message:pending")
		return true
	}
	rd.addPart(rd.assistant(n), loom.Part{Type: loom.PartText, Text: text})
	return true
}

// agentReasoning handles the agent_reasoning events: the reply's
// reasoning, unless a response item holds it.
func (rd *reader) agentReasoning(n int, ev *event) bool {
	kind := "r"
	if ev.Type == "agent_reasoning_raw_content" {
		kind = "rr"
	}
	if strings.TrimSpace(ev.Text) == "" || rd.duplicate(kind, ev.Text) {
		return false
	}
	if rd.pendingEvent(n) {
		rd.res.Skip("event_msg:" + ev.Type + ":pending")
		return true
	}
	rd.addPart(rd.assistant(n), loom.Part{Type: loom.PartReasoning, Text: ev.Text})
	return true
}

// threadName handles a thread_name_updated event: the session's title,
// unless the line is one a fork inherited.
func (rd *reader) threadName(n int, ev *event) bool {
	if name := strings.TrimSpace(str(ev.ThreadName)); name != "" && !rd.inherited(n) {
		rd.title = name
		return true
	}
	return false
}

// turnStarted ends the turn before.
func (rd *reader) turnStarted(int, *event) bool {
	rd.endTurn()
	return false
}

// turnAborted interrupts the turn and ends it.
func (rd *reader) turnAborted(int, *event) bool {
	rd.interrupt()
	rd.endTurn()
	return false
}

// patchApplied fails the call of a patch that was not applied.
func (rd *reader) patchApplied(_ int, ev *event) bool {
	if b, ok := boolean(ev.Success); ok && !b {
		rd.fail(ev.CallID, firstOf(strings.TrimSpace(str(ev.Stderr)), strings.TrimSpace(str(ev.Stdout)), "patch not applied"))
	}
	return false
}

// commandEnded fails the call of a command that exited with an error.
func (rd *reader) commandEnded(_ int, ev *event) bool {
	if code, ok := integer(ev.ExitCode); ok && code != 0 {
		rd.fail(ev.CallID, firstOf(strings.TrimSpace(str(ev.Aggregated)), "exit code "+strconv.FormatInt(code, 10)))
	}
	return false
}

// agentSpawned links the call that spawned a sub-agent to its thread.
func (rd *reader) agentSpawned(_ int, ev *event) bool {
	if c := rd.calls[ev.CallID]; c != nil && ev.CallID != "" {
		rd.linkAgent(c, str(ev.NewThreadID), firstOf(str(ev.Role), str(ev.Nickname)))
	}
	return false
}

// subAgentEvent handles a sub_agent_activity event.
func (rd *reader) subAgentEvent(_ int, ev *event) bool {
	rd.subAgentActivity(str(ev.EventID), str(ev.AgentThreadID), str(ev.AgentPath), str(ev.Kind))
	return false
}

// itemCompleted handles an item_completed event of a sub-agent's
// activity.
func (rd *reader) itemCompleted(_ int, ev *event) bool {
	var it subAgentItem
	if len(ev.Item) > 0 && ev.Item[0] == '{' && json.Unmarshal(ev.Item, &it) == nil && it.Type == "SubAgentActivity" {
		rd.subAgentActivity(str(it.ID), str(it.AgentThreadID), str(it.AgentPath), str(it.Kind))
	}
	return false
}

// boolean returns the JSON boolean in r.
func boolean(r json.RawMessage) (bool, bool) {
	switch string(r) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// userEvent handles a user_message event: counted as skipped when a
// response item holds the same message, else the message itself.
func (rd *reader) userEvent(n int, ev *event) bool {
	text := str(ev.Message)
	var images []string
	if len(ev.Images) > 0 && ev.Images[0] == '[' {
		_ = json.Unmarshal(ev.Images, &images)
	}
	var local []string
	if len(ev.LocalImages) > 0 && ev.LocalImages[0] == '[' {
		_ = json.Unmarshal(ev.LocalImages, &local)
	}
	if rd.duplicate("u", text) || (strings.TrimSpace(text) == "" && len(images) == 0 && len(local) == 0) {
		rd.res.Skip("event_msg:user_message")
		return true
	}
	m := rd.userMessage(n, text, []string{text})
	if m.Role == loom.RoleSystem && len(m.Parts) == 0 {
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
	}
	for _, u := range images {
		rd.addPart(m, imagePart(u))
	}
	for _, p := range local {
		rd.addPart(m, loom.Part{Type: loom.PartFile, Filename: filepath.Base(p), Mime: "image", Source: &loom.FileSource{Type: "file", Path: p}})
	}
	return true
}

// tokenCount handles a token_count event and reports whether its usage
// was kept. last_token_usage is one model call's; it goes to the
// assistant message of that call: the current one while it has no usage
// yet, else the next one (older versions write the count before the
// call's items, newer ones after). A count that repeats the previous
// total, or that belongs to a fork's copy of its parent's history, is
// not kept.
func (rd *reader) tokenCount(n int, ev *event) bool {
	if importer.IsNull(ev.Info) {
		return false
	}
	var info tokenInfo
	if err := json.Unmarshal(ev.Info, &info); err != nil {
		rd.res.Problemf(rd.path, n, "token_count: "+err.Error())
		return true
	}
	u := info.Last
	if info.Total != nil {
		if rd.prevTotal != nil && *info.Total == *rd.prevTotal {
			return false
		}
		if u == nil {
			d := *info.Total
			if p := rd.prevTotal; p != nil {
				d = tokenUsage{Input: d.Input - p.Input, Cached: d.Cached - p.Cached, Output: d.Output - p.Output, Reasoning: d.Reasoning - p.Reasoning}
			}
			u = &d
		}
		rd.prevTotal = info.Total
	}
	if u == nil {
		return false
	}
	if rd.inherited(n) {
		rd.res.Skip("inherited:event_msg:token_count")
		return true
	}
	usage := loom.Usage{
		InputTokens:     max(0, u.Input-u.Cached),
		CacheReadTokens: max(0, u.Cached),
		OutputTokens:    max(0, u.Output),
		ReasoningTokens: max(0, u.Reasoning),
		APICalls:        1,
	}
	if rd.cur != nil && rd.cur.Usage.APICalls == 0 {
		rd.cur.Usage.Add(usage)
		rd.touch(rd.cur)
		return true
	}
	if rd.pending == nil {
		rd.pending = &loom.Usage{}
	}
	rd.pending.Add(usage)
	return true
}
