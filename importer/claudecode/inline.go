package claudecode

import (
	json "github.com/goccy/go-json"
)

// Claude Code writes each line of a running sub-agent's transcript into
// the session file too, inside an agent_progress line (data.message, with
// data.agentId), and, in the versions that have them, into the
// sub-agent's own file as well. Where that file is not in the bundle (a
// version that wrote none, or one deleted), inlineAgents makes the
// transcript of those lines: the sub-agent's prompts, replies, tool calls
// and their usage, which would otherwise be dropped with the progress
// lines.

// inlineAgents returns a sub-agent transcript, <session id>/agent-<id>,
// of the agent_progress lines of recs for each sub-agent whose SourceID
// have does not hold.
func (rd *reader) inlineAgents(sid, path string, recs []*record, have map[string]bool) []*subagent {
	type agent struct {
		recs []*record
		seen map[string]bool
		last string
	}
	byID := map[string]*agent{}
	var order []string
	for _, r := range recs {
		if r.Type != "progress" || r.Data == nil || r.Data.Type != "agent_progress" || len(r.Data.Message) == 0 {
			continue
		}
		id := r.Data.AgentID
		if id == "" || cleanID(id) != id || have[sid+"/agent-"+id] {
			continue
		}
		a := byID[id]
		if a == nil {
			a = &agent{seen: map[string]bool{}}
			byID[id] = a
			order = append(order, id)
		}
		line, uuid := inlineLine(r, sid, a.last)
		if line == nil || a.seen[uuid] {
			continue
		}
		x := parseLine(path, r.n, line, rd.res)
		if x == nil {
			continue
		}
		if x.ts.IsZero() {
			x.ts = r.ts
		}
		x.order = rd.order
		rd.order++
		a.seen[uuid], a.last = true, uuid
		a.recs = append(a.recs, x)
	}
	var out []*subagent
	for _, id := range order {
		a := byID[id]
		if len(a.recs) == 0 {
			continue
		}
		t := newTree(a.recs, false, rd.res)
		out = append(out, &subagent{f: &file{path: path, nodes: a.recs}, t: t, b: newBuilder(t, rd.res), sourceID: sid + "/agent-" + id})
	}
	return out
}

// inlineLine is the transcript line that agent_progress line r carries,
// as the sub-agent's own file would hold it (chained to the line before,
// parent), with its uuid; nil when it carries none that can be read.
func inlineLine(r *record, sid, parent string) ([]byte, string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(r.Data.Message, &m) != nil {
		return nil, ""
	}
	var typ, uuid string
	if json.Unmarshal(m["type"], &typ) != nil || (typ != "user" && typ != "assistant") {
		return nil, ""
	}
	if json.Unmarshal(m["uuid"], &uuid) != nil || uuid == "" {
		uuid = r.id + "/message"
	}
	set := func(k string, v any) {
		if b, err := json.Marshal(v); err == nil {
			m[k] = b
		}
	}
	set("uuid", uuid)
	set("sessionId", sid)
	set("isSidechain", true)
	set("agentId", r.Data.AgentID)
	if parent != "" {
		set("parentUuid", parent)
	} else {
		m["parentUuid"] = json.RawMessage("null")
	}
	if _, ok := m["cwd"]; !ok && r.Cwd != "" {
		set("cwd", r.Cwd)
	}
	if _, ok := m["version"]; !ok && r.Version != "" {
		set("version", r.Version)
	}
	if _, ok := m["gitBranch"]; !ok && r.GitBranch != "" {
		set("gitBranch", r.GitBranch)
	}
	if _, ok := m["timestamp"]; !ok && r.Timestamp != "" {
		set("timestamp", r.Timestamp)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, ""
	}
	return b, uuid
}
