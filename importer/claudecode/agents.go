package claudecode

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// call is a tool call that may run a sub-agent.
type call struct {
	id     string
	name   string
	rec    *record
	input  taskInput
	linked bool
}

type taskInput struct {
	Prompt       string `json:"prompt"`
	Description  string `json:"description"`
	SubagentType string `json:"subagent_type"`
}

// taskCalls are the tool calls of t by id.
func taskCalls(t *tree) map[string]*call {
	calls := map[string]*call{}
	for _, r := range t.recs {
		if r.Type != "assistant" {
			continue
		}
		for _, bl := range r.blocks {
			if bl.Type != "tool_use" || bl.ID == "" {
				continue
			}
			c := &call{id: bl.ID, name: bl.Name, rec: r}
			if len(bl.Input) > 0 && bl.Input[0] == '{' {
				_ = json.Unmarshal(bl.Input, &c.input) // a call that is not a task has none
			}
			if _, dup := calls[bl.ID]; !dup {
				calls[bl.ID] = c
			}
		}
	}
	return calls
}

func isTaskTool(name string) bool { return name == "Task" || name == "Agent" }

// agentName is what an agent part calls the sub-agent of c.
func (c *call) agentName() string {
	if c.input.SubagentType != "" {
		return c.input.SubagentType
	}
	return "agent"
}

// linkAgents links the calls whose result (toolUseResult.agentId) or
// progress lines (agent_progress) name a sub-agent to
// <session id>/agent-<agentId>: the sub-agent's file of Claude Code 2.x
// (<session>/subagents/agent-<agentId>.jsonl) or 2.0
// (agent-<agentId>.jsonl beside the session file).
func linkAgents(sid string, t *tree, b *builder, calls map[string]*call, titles map[string]string) {
	link := func(callID, agentID string, at int) {
		c, ok := calls[callID]
		if !ok || agentID == "" || cleanID(agentID) != agentID {
			return
		}
		id := sid + "/agent-" + agentID
		if c.linked {
			// Named again, by an earlier line: its part goes there.
			if a := b.agents[callID]; a.sourceID == id && at < a.at {
				a.at = at
				b.agents[callID] = a
			}
			return
		}
		c.linked = true
		b.agents[callID] = agentLink{sourceID: id, name: c.agentName(), agentType: c.input.SubagentType, at: at}
		if c.input.Description != "" {
			titles[id] = c.input.Description
		}
	}
	for callID, res := range b.results {
		if raw := res.rec.ToolUseResult; len(raw) > 0 && raw[0] == '{' && mayName(raw, "agentid") {
			var v struct {
				AgentID string `json:"agentId"`
			}
			if json.Unmarshal(raw, &v) == nil {
				link(callID, v.AgentID, res.rec.order)
			}
		}
	}
	for _, r := range t.recs {
		if r.Type == "progress" && r.Data != nil && r.Data.Type == "agent_progress" {
			link(r.ParentToolUseID, r.Data.AgentID, r.order)
		}
	}
}

// mayName says whether the JSON object raw may have a key that
// encoding/json matches to key (lower case ASCII letters, which it
// matches in any case): one spelled so in any case, or any \u escape,
// which could spell it. Most tool results name no agent, and are
// then not decoded.
func mayName(raw []byte, key string) bool {
	if bytes.Contains(raw, []byte(`\u`)) {
		return true
	}
	for i := 0; i+len(key) <= len(raw); i++ {
		j := 0
		for j < len(key) && raw[i+j]|0x20 == key[j] {
			j++
		}
		if j == len(key) {
			return true
		}
	}
	return false
}

// linkSidechains links each inline sub-agent transcript (Claude Code 1.x
// writes them into the session file as isSidechain lines, without naming
// the call that ran them) to a Task call that is not linked otherwise: the
// one whose prompt is the transcript's first prompt, else the one running
// when the transcript began (started before it, without a result before
// it); among several, the one started closest before. It returns the
// SourceID of each transcript: <session id>/sidechain-<uuid of its first
// line>.
func linkSidechains(sid string, t *tree, tops []int, b *builder, calls map[string]*call, titles map[string]string) []string {
	var open []*call
	byPrompt := map[string][]*call{}
	for _, c := range calls {
		if !c.linked && isTaskTool(c.name) {
			open = append(open, c)
		}
	}
	sortCalls(open)
	for _, c := range open {
		if p := strings.TrimSpace(c.input.Prompt); p != "" {
			byPrompt[p] = append(byPrompt[p], c)
		}
	}
	// Matching by time compares every transcript with every call; a
	// hostile file of many of both gets no more than this many
	// comparisons.
	budget := 1 << 20
	ids := make([]string, len(tops))
	for i, top := range tops {
		root := t.recs[t.nodes[top].first]
		ids[i] = sid + "/sidechain-" + cleanID(root.id)
		var best *call
		consider := func(c *call) {
			if best == nil || closer(c.rec.ts, best.rec.ts, root.ts) {
				best = c
			}
		}
		prompt := strings.TrimSpace(root.text())
		same := byPrompt[prompt]
		for len(same) > 0 && same[0].linked {
			same = same[1:]
		}
		byPrompt[prompt] = same
		for k, c := range same {
			if k == 16 {
				break
			}
			if !c.linked {
				consider(c)
			}
		}
		byTime := best == nil
		for k := 0; byTime && k < len(open) && budget > 0; k++ {
			budget--
			c := open[k]
			if c.linked || c.rec.ts.After(root.ts) {
				continue
			}
			if res, ok := b.results[c.id]; ok && res.rec.ts.Before(root.ts) {
				continue
			}
			consider(c)
		}
		if best == nil {
			continue
		}
		best.linked = true
		b.agents[best.id] = agentLink{sourceID: ids[i], name: best.agentName(), agentType: best.input.SubagentType, at: root.order}
		if best.input.Description != "" {
			titles[ids[i]] = best.input.Description
		}
	}
	return ids
}

// closer reports whether a call started at a is a better match than one
// started at b for a transcript that began at at: started before it
// rather than after, and closer to it.
func closer(a, b, at time.Time) bool {
	aBefore, bBefore := !a.After(at), !b.After(at)
	if aBefore != bBefore {
		return aBefore
	}
	return absDur(at.Sub(a)) < absDur(at.Sub(b))
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func sortCalls(cs []*call) {
	slices.SortFunc(cs, func(a, b *call) int {
		if a.rec.order != b.rec.order {
			return a.rec.order - b.rec.order
		}
		return strings.Compare(a.id, b.id)
	})
}

// linkCompactions links each compaction agent's transcript
// (subagents/agent-acompact-*.jsonl) to the compact_boundary it produced:
// the boundary whose logical parent is the line the transcript's lines
// hang from, else the first boundary not linked yet written after the
// transcript ended.
func linkCompactions(t *tree, b *builder, subs []*subagent) {
	var bounds []*record
	for _, r := range t.recs {
		if r.Type == "system" && r.Subtype == "compact_boundary" {
			bounds = append(bounds, r)
		}
	}
	taken := map[string]bool{}
	for _, sa := range subs {
		if !isCompactionFile(sa.f.path) || len(sa.f.nodes) == 0 {
			continue
		}
		parents := map[string]bool{}
		var end time.Time
		for _, r := range sa.f.nodes {
			parents[r.ParentUUID] = true
			end = later(end, r.ts)
		}
		var match *record
		for _, bd := range bounds {
			if !taken[bd.id] && bd.LogicalParentUUID != "" && parents[bd.LogicalParentUUID] {
				match = bd
				break
			}
		}
		if match == nil {
			for _, bd := range bounds {
				if !taken[bd.id] && !bd.ts.Before(end) {
					match = bd
					break
				}
			}
		}
		if match == nil {
			continue
		}
		taken[match.id] = true
		b.agents[match.id] = agentLink{sourceID: sa.sourceID, name: "compact", at: match.order}
	}
}
