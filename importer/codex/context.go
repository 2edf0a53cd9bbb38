package codex

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
)

// sessionMeta handles a session_meta line: the session's own becomes the
// system message of its instructions; any other (the parent's, copied
// into a fork) is skipped.
func (rd *reader) sessionMeta(rc *rec) {
	if rd.meta == nil || rc.n != rd.metaLine {
		var m sessionMeta
		if err := json.Unmarshal(rc.payload, &m); err != nil {
			rd.res.Problemf(rd.path, rc.n, "session_meta: "+err.Error())
			return
		}
		rd.res.Skip("session_meta")
		return
	}
	var texts []string
	if t := strings.TrimSpace(str(rd.meta.Instructions)); t != "" {
		texts = append(texts, t)
	}
	base := rd.meta.BaseInstructions
	if t := strings.TrimSpace(str(base)); t != "" {
		texts = append(texts, t)
	} else if len(base) > 0 && base[0] == '{' {
		var b struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(base, &b) == nil && strings.TrimSpace(b.Text) != "" {
			texts = append(texts, strings.TrimSpace(b.Text))
		}
	}
	if len(texts) == 0 {
		return
	}
	rd.endTurn()
	m := rd.message(rc.n, loom.RoleSystem, "")
	if rd.instructions == nil {
		rd.instructions = map[string]bool{}
	}
	for _, t := range texts {
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: t})
		rd.instructions[t] = true
	}
}

// turnContext handles a turn_context line: the model and working
// directory of the turn. The line itself is counted as skipped.
func (rd *reader) turnContext(rc *rec) {
	var tc turnContext
	if err := json.Unmarshal(rc.payload, &tc); err != nil {
		rd.res.Problemf(rd.path, rc.n, "turn_context: "+err.Error())
		return
	}
	rd.endTurn()
	if tc.Model != "" {
		rd.model = tc.Model
	}
	if !rd.inherited(rc.n) {
		if tc.Model != "" {
			rd.ownModel = tc.Model
		}
		if tc.Cwd != "" {
			rd.cwd = tc.Cwd
		}
	}
	rd.res.Skip("turn_context")
}

// compacted handles a compacted line: the summary that replaced the
// history before it becomes a summary message.
func (rd *reader) compacted(rc *rec) {
	var c compacted
	if err := json.Unmarshal(rc.payload, &c); err != nil {
		rd.res.Problemf(rd.path, rc.n, "compacted: "+err.Error())
		return
	}
	text := strings.TrimSpace(str(c.Message))
	if text == "" {
		// A compaction done remotely keeps no summary text: what can be
		// read of the history that replaced the old one stands in.
		var parts []string
		for _, raw := range c.ReplacementHistory {
			var it responseItem
			if json.Unmarshal(raw, &it) != nil || it.Type != "message" {
				continue
			}
			if t := strings.TrimSpace(messageText(it.Content)); t != "" && !injected(t) {
				parts = append(parts, t)
			}
		}
		text = strings.Join(parts, "\n\n")
	}
	if text == "" {
		rd.res.Skip("compacted:encrypted")
		return
	}
	if m := rd.cur; m != nil && rd.open && compactionAnswer(m, text) {
		// Codex (0.169) writes the answer of the model call that made
		// the summary as an assistant message just before this line:
		// that message was the summary, not a reply, and becomes the
		// summary message (with that call's usage).
		m.Role, m.Parts = loom.RoleSummary, nil
		m.Usage.Compactions = 1
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
		rd.endTurn()
		// Before, that message was a reply and this line the summary
		// message, under the line's id: a copy imported so keeps both.
		if rd.s.Replaced == nil {
			rd.s.Replaced = map[string]string{}
		}
		rd.s.Replaced[fmt.Sprintf("%s:%d", rd.sid, rc.n)] = m.ID
		return
	}
	rd.endTurn()
	m := rd.message(rc.n, loom.RoleSummary, "")
	m.Usage.Compactions = 1
	rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
}

// compactionAnswer reports whether m, an assistant message of text
// alone, is the answer that summary ends with: the model call that made
// a compaction's summary.
func compactionAnswer(m *loom.Message, summary string) bool {
	if m.Role != loom.RoleAssistant || len(m.Parts) == 0 {
		return false
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type != loom.PartText {
			return false
		}
		b.WriteString(p.Text)
	}
	answer := strings.TrimSpace(b.String())
	return answer != "" && strings.HasSuffix(summary, answer)
}
