package gemini

import (
	"encoding/json"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// agentRun is the call that ran a sub-agent.
type agentRun struct {
	// by is the SourceID of the session whose message ran it: the main
	// session, or the abandoned branch that alone holds the call.
	by string
	// name is the sub-agent's name; input is the call's arguments.
	name  string
	input json.RawMessage
}

// noteAgents records which session ran each sub-agent, and with what.
func (s *session) noteAgents(from *importer.Session) {
	for _, m := range from.Messages {
		var call *loom.Part
		for i := range m.Parts {
			p := &m.Parts[i]
			switch p.Type {
			case loom.PartTool:
				call = p
			case loom.PartAgent:
				if _, ok := s.runs[p.SessionID]; ok {
					continue
				}
				run := agentRun{by: from.SourceID, name: p.Name}
				if call != nil {
					run.input = call.Input
				}
				s.runs[p.SessionID] = run
			}
		}
	}
}

// buildSubagent turns a sub-agent's recording into a sub-agent session.
// Its SourceID is <parent's SourceID>/<its session id>, parent being the
// recording that ran it (named by its directory); ParentSourceID is the
// session holding the call that ran it, when known, else that parent.
func (r *reader) buildSubagent(rec *recording, parent *session, dir, cwd string) {
	parentID := dir
	if parent != nil {
		parentID = parent.sourceID
	}
	sourceID := oneLine(parentID + "/" + rec.sessionID)
	run := agentRun{by: parentID}
	if parent != nil {
		if known, ok := parent.runs[sourceID]; ok {
			run = known
		}
	}
	built := r.buildAs(rec, sourceID, loom.KindSubagent, run.by, cwd)
	if rec.path == r.segPath && r.seg.From > 0 {
		// A segment after the first, of a recording that is a bundle
		// of its own: the first, which holds its prompt, titled it.
		return
	}
	if built != nil && built.s.Title == "" {
		built.s.Title = subagentTitle(built.s, run)
	}
}

// defaultQuery is the first message Gemini CLI sends a sub-agent whose
// definition has no query of its own: the task is then in the call.
const defaultQuery = "Get Started!"

// taskFields are the arguments that hold a sub-agent's task, in the order
// they are looked for: invoke_agent's prompt, and the inputs Gemini CLI's
// own agents take.
var taskFields = []string{"prompt", "task", "description", "objective", "query", "request", "question", "instructions"}

// subagentTitle is a sub-agent session's title, when its first prompt
// cannot be: "" when that prompt is text the user can read, else the task
// in that prompt when it is a JSON object, else the task in the call that
// ran the sub-agent, else the sub-agent's name. It is never raw JSON.
func subagentTitle(s *importer.Session, run agentRun) string {
	for _, m := range s.Messages {
		prompt := strings.TrimSpace(m.Text())
		if m.Role != loom.RoleUser || prompt == "" {
			continue
		}
		if !importer.IsJSONText(prompt) && prompt != defaultQuery {
			return ""
		}
		if t := task([]byte(prompt)); t != "" {
			return t
		}
		break
	}
	if t := task(run.input); t != "" {
		return t
	}
	if run.name != "" {
		return run.name
	}
	return "Sub-agent"
}

// task is the task a JSON object holds in one of taskFields, "" when it
// holds none.
func task(raw []byte) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	for _, f := range taskFields {
		var s string
		if json.Unmarshal(obj[f], &s) == nil {
			if s = strings.TrimSpace(s); s != "" && s[0] != '{' && s[0] != '[' {
				return s
			}
		}
	}
	return ""
}

// agentName is the name of the sub-agent a call ran: the agent_name
// argument of the calls that name it (invoke_agent, delegate_to_agent),
// else the tool's name, which is the agent's.
func agentName(tool string, args json.RawMessage) string {
	var a struct {
		AgentName string `json:"agent_name"`
	}
	if json.Unmarshal(args, &a) == nil {
		if name := strings.TrimSpace(a.AgentName); name != "" {
			return oneLine(name)
		}
	}
	return tool
}
