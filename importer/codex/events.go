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
	switch ev.Type {
	case "user_message":
		rd.userEvent(rc.n, &ev)
		return
	case "agent_message":
		if text := str(ev.Message); strings.TrimSpace(text) != "" && !rd.duplicate("a", text) {
			if rd.pendingEvent(rc.n) {
				rd.res.Skip("event_msg:agent_message:pending")
				return
			}
			rd.addPart(rd.assistant(rc.n), loom.Part{Type: loom.PartText, Text: text})
			return
		}
	case "agent_reasoning", "agent_reasoning_raw_content":
		kind := "r"
		if ev.Type == "agent_reasoning_raw_content" {
			kind = "rr"
		}
		if strings.TrimSpace(ev.Text) != "" && !rd.duplicate(kind, ev.Text) {
			if rd.pendingEvent(rc.n) {
				rd.res.Skip("event_msg:" + ev.Type + ":pending")
				return
			}
			rd.addPart(rd.assistant(rc.n), loom.Part{Type: loom.PartReasoning, Text: ev.Text})
			return
		}
	case "token_count":
		if rd.tokenCount(rc.n, &ev) {
			return
		}
	case "thread_name_updated":
		if name := strings.TrimSpace(str(ev.ThreadName)); name != "" && !rd.inherited(rc.n) {
			rd.title = name
			return
		}
	case "task_started", "turn_started":
		rd.endTurn()
	case "turn_aborted":
		rd.interrupt()
		rd.endTurn()
	case "patch_apply_end":
		if b, ok := boolean(ev.Success); ok && !b {
			rd.fail(ev.CallID, firstOf(strings.TrimSpace(str(ev.Stderr)), strings.TrimSpace(str(ev.Stdout)), "patch not applied"))
		}
	case "exec_command_end":
		if code, ok := integer(ev.ExitCode); ok && code != 0 {
			rd.fail(ev.CallID, firstOf(strings.TrimSpace(str(ev.Aggregated)), "exit code "+strconv.FormatInt(code, 10)))
		}
	case "collab_agent_spawn_end":
		if c := rd.calls[ev.CallID]; c != nil && ev.CallID != "" {
			rd.linkAgent(c, str(ev.NewThreadID), firstOf(str(ev.Role), str(ev.Nickname)))
		}
	case "sub_agent_activity":
		rd.subAgentActivity(str(ev.EventID), str(ev.AgentThreadID), str(ev.AgentPath), str(ev.Kind))
	case "item_completed":
		var it subAgentItem
		if len(ev.Item) > 0 && ev.Item[0] == '{' && json.Unmarshal(ev.Item, &it) == nil && it.Type == "SubAgentActivity" {
			rd.subAgentActivity(str(it.ID), str(it.AgentThreadID), str(it.AgentPath), str(it.Kind))
		}
	}
	rd.res.Skip("event_msg:" + importer.TypeName(ev.Type))
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
func (rd *reader) userEvent(n int, ev *event) {
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
		return
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
