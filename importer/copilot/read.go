package copilot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

// event is one line of events.jsonl.
type event struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// data is what loom reads of an event's data, whatever its type.
type data struct {
	// session.start, session.resume
	SessionID      string `json:"sessionId"`
	CopilotVersion string `json:"copilotVersion"`
	SelectedModel  string `json:"selectedModel"`
	// LoomHandoff is the loom session a handed-off file continues
	// (handoff.OriginField), in its session.start.
	LoomHandoff *handoff.Origin `json:"loomHandoff"`
	Context     *struct {
		Cwd    string `json:"cwd"`
		Branch string `json:"branch"`
	} `json:"context"`
	// user.message, assistant.message
	Content          json.RawMessage `json:"content"`
	Source           string          `json:"source"`
	Model            string          `json:"model"`
	ReasoningText    string          `json:"reasoningText"`
	ToolRequests     []toolRequest   `json:"toolRequests"`
	APICallID        string          `json:"apiCallId"`
	ParentToolCallID string          `json:"parentToolCallId"`
	// session.usage_record
	Usage *usage `json:"usage"`
	// tool.execution_complete, subagent.started
	ToolCallID string `json:"toolCallId"`
	Success    *bool  `json:"success"`
	Result     *struct {
		Content json.RawMessage `json:"content"`
	} `json:"result"`
	Error            json.RawMessage `json:"error"`
	AgentName        string          `json:"agentName"`
	AgentDescription string          `json:"agentDescription"`
	// session.compaction_complete
	SummaryContent       string `json:"summaryContent"`
	CompactionTokensUsed *usage `json:"compactionTokensUsed"`
	Outcome              string `json:"outcome"`
}

type toolRequest struct {
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
}

// usage is a model call's tokens, input with its cached tokens and
// output with its reasoning, as Copilot CLI records them.
type usage struct {
	APICallID string `json:"apiCallId"`
	// RequestCount is how many model calls a compaction made.
	RequestCount     int64  `json:"requestCount"`
	Model            string `json:"model"`
	InputTokens      int64  `json:"inputTokens"`
	OutputTokens     int64  `json:"outputTokens"`
	CacheReadTokens  int64  `json:"cacheReadTokens"`
	CacheWriteTokens int64  `json:"cacheWriteTokens"`
	ReasoningTokens  int64  `json:"reasoningTokens"`
}

func (u *usage) loom() loom.Usage {
	if u == nil {
		return loom.Usage{}
	}
	cached := importer.Count(u.CacheReadTokens)
	return loom.Usage{
		InputTokens:      max(0, importer.Count(u.InputTokens)-cached),
		CacheReadTokens:  cached,
		CacheWriteTokens: importer.Count(u.CacheWriteTokens),
		OutputTokens:     importer.Count(u.OutputTokens),
		ReasoningTokens:  importer.Count(u.ReasoningTokens),
		APICalls:         1,
	}
}

// call is a tool part waiting for its result.
type call struct {
	msg *loom.Message
	idx int
}

// reader reads one events.jsonl.
type reader struct {
	path   string
	res    *importer.Result
	main   *importer.Session
	subs   []*importer.Session
	byTool map[string]*importer.Session // sub-agents by the call that ran them
	agents map[string]loom.Part         // agent parts, by the call they follow
	calls  map[string]call
	usage  map[string]*usage // usage records waiting for their reply, by API call
	ids    map[string]bool
	began  bool
}

// read reads a session's events from r.
func read(ctx context.Context, path string, r io.Reader) (*importer.Result, error) {
	rd := &reader{path: path, res: &importer.Result{}, byTool: map[string]*importer.Session{},
		agents: map[string]loom.Part{}, calls: map[string]call{}, usage: map[string]*usage{}, ids: map[string]bool{},
		main: &importer.Session{Kind: loom.KindMain, Path: path}}
	lines, kept, err := importer.RecordLines(ctx, Tool, path, r, rd.res, rd.line)
	if err != nil {
		return nil, err
	}
	if lines > 0 && kept == 0 {
		return nil, fmt.Errorf("copilot: %s: not a Copilot CLI events file (no event with a type and data)", path)
	}
	rd.finish()
	return rd.res, nil
}

// line reads one event and reports whether it is one.
func (rd *reader) line(n int, b []byte) bool {
	var e event
	if err := json.Unmarshal(b, &e); err != nil {
		rd.res.Problemf(rd.path, n, "not an event: "+err.Error())
		return false
	}
	rd.res.CheckUTF8(rd.path, n, b)
	if e.Type == "" || len(e.Data) == 0 {
		rd.res.Problemf(rd.path, n, "an event without a type or data")
		return false
	}
	var d data
	if err := json.Unmarshal(e.Data, &d); err != nil {
		rd.res.Problemf(rd.path, n, e.Type+" event: "+err.Error())
		return true
	}
	if e.ID == "" || rd.ids[e.ID] {
		e.ID = "line" + strconv.Itoa(n)
	}
	rd.ids[e.ID] = true
	ts := importer.ISOTime(e.Timestamp)
	switch e.Type {
	case "session.start", "session.resume":
		rd.start(&d)
		rd.res.Skip(e.Type)
	case "user.message":
		rd.user(n, &e, &d, ts)
	case "assistant.message":
		rd.assistant(n, &e, &d, ts)
	case "session.usage_record":
		if d.Usage != nil && d.Usage.APICallID != "" {
			rd.usage[d.Usage.APICallID] = d.Usage
		}
		rd.res.Skip(e.Type)
	case "tool.execution_complete":
		rd.toolResult(&d, ts)
	case "subagent.started":
		rd.subagent(&d)
	case "session.compaction_complete":
		rd.compaction(&e, &d, ts)
	default:
		rd.res.Skip(importer.TypeName(e.Type))
	}
	return true
}

// start reads the session's id, version, directory, branch and model.
func (rd *reader) start(d *data) {
	s := rd.main
	if !rd.began && importer.LineID(d.SessionID) != "" {
		s.SourceID, rd.began = importer.LineID(d.SessionID), true
		s.Origin = d.LoomHandoff
	}
	if d.CopilotVersion != "" {
		s.Version = d.CopilotVersion
	}
	if d.Context != nil {
		if d.Context.Cwd != "" {
			s.Cwd = d.Context.Cwd
		}
		if d.Context.Branch != "" {
			s.GitBranch = d.Context.Branch
		}
	}
	if d.SelectedModel != "" {
		s.Model = d.SelectedModel
	}
}

// session is the session an event of a sub-agent's call (parent) goes
// to: that sub-agent's, or the main one.
func (rd *reader) session(parent string) *importer.Session {
	if s := rd.byTool[parent]; s != nil && parent != "" {
		return s
	}
	return rd.main
}

func (rd *reader) user(n int, e *event, d *data, ts time.Time) {
	text := importer.JSONText(d.Content)
	s, role := rd.main, loom.RoleUser
	switch {
	case strings.HasPrefix(d.Source, "agent-"):
		// A sub-agent's task: the last one started that has none yet.
		s = nil
		for i := len(rd.subs) - 1; i >= 0; i-- {
			if len(rd.subs[i].Messages) == 0 {
				s = rd.subs[i]
				break
			}
		}
		if s == nil {
			s, role = rd.main, loom.RoleSystem
		}
	case d.Source != "":
		role = loom.RoleSystem
	}
	if strings.TrimSpace(text) == "" {
		rd.res.Skip("user.message:empty")
		return
	}
	s.Messages = append(s.Messages, &loom.Message{ID: e.ID, Role: role, CreatedAt: ts, CompletedAt: &ts,
		Parts: []loom.Part{{ID: e.ID + "/0", Type: loom.PartText, Text: text}}})
}

func (rd *reader) assistant(n int, e *event, d *data, ts time.Time) {
	m := &loom.Message{ID: e.ID, Role: loom.RoleAssistant, CreatedAt: ts, CompletedAt: &ts, Model: d.Model, Usage: loom.Usage{APICalls: 1}}
	if u := rd.usage[d.APICallID]; u != nil && d.APICallID != "" {
		m.Usage = u.loom()
		delete(rd.usage, d.APICallID)
	}
	id := func() string { return e.ID + "/" + strconv.Itoa(len(m.Parts)) }
	if strings.TrimSpace(d.ReasoningText) != "" {
		m.Parts = append(m.Parts, loom.Part{ID: id(), Type: loom.PartReasoning, Text: d.ReasoningText})
	}
	if text := importer.JSONText(d.Content); strings.TrimSpace(text) != "" {
		m.Parts = append(m.Parts, loom.Part{ID: id(), Type: loom.PartText, Text: text})
	}
	for _, tr := range d.ToolRequests {
		start := ts
		p := loom.Part{ID: id(), Type: loom.PartTool, CallID: tr.ToolCallID, Name: tr.Name, Status: loom.ToolPending,
			Input: importer.ArgsObject(tr.Arguments), StartedAt: &start}
		if p.CallID == "" {
			rd.res.Problemf(rd.path, n, "a tool request without an id")
			p.CallID = p.ID
		}
		if p.Name == "" {
			rd.res.Problemf(rd.path, n, "tool request "+importer.Clip(p.CallID, 64)+" without a name")
			p.Name = "unknown"
		}
		if old, ok := rd.calls[p.CallID]; ok {
			q := &old.msg.Parts[old.idx]
			q.Status, q.Error = loom.ToolError, loom.Interrupted
		}
		m.Parts = append(m.Parts, p)
		rd.calls[p.CallID] = call{msg: m, idx: len(m.Parts) - 1}
	}
	if len(m.Parts) == 0 {
		rd.res.Skip("assistant.message:empty")
		return
	}
	s := rd.session(d.ParentToolCallID)
	s.Messages = append(s.Messages, m)
}

func (rd *reader) toolResult(d *data, ts time.Time) {
	c, ok := rd.calls[d.ToolCallID]
	if !ok || d.ToolCallID == "" {
		rd.res.Skip("tool.execution_complete:unmatched")
		return
	}
	delete(rd.calls, d.ToolCallID)
	p := &c.msg.Parts[c.idx]
	end := ts
	if p.StartedAt != nil && end.Before(*p.StartedAt) {
		end = *p.StartedAt
	}
	p.EndedAt = &end
	out := ""
	if d.Result != nil {
		out = importer.JSONText(d.Result.Content)
	}
	if d.Success != nil && !*d.Success {
		var e struct {
			Message string `json:"message"`
		}
		msg := importer.JSONText(d.Error)
		if json.Unmarshal(d.Error, &e) == nil && e.Message != "" {
			msg = e.Message
		}
		if msg == "" {
			msg = out
		}
		if msg == "" {
			msg = "the tool failed"
		}
		p.Status, p.Error = loom.ToolError, msg
		return
	}
	p.Status = loom.ToolCompleted
	p.Output, _ = json.Marshal(out)
}

// subagent starts the session of a sub-agent a call ran (the task
// tool), linked from that call.
func (rd *reader) subagent(d *data) {
	if d.ToolCallID == "" || rd.byTool[d.ToolCallID] != nil {
		rd.res.Skip("subagent.started:unmatched")
		return
	}
	s := &importer.Session{Kind: loom.KindSubagent, Path: rd.path, Title: d.AgentDescription, Model: d.Model}
	rd.byTool[d.ToolCallID] = s
	rd.subs = append(rd.subs, s)
	name := d.AgentName
	if name == "" {
		name = "agent"
	}
	rd.agents[d.ToolCallID] = loom.Part{Type: loom.PartAgent, Name: name}
}

// compaction is the summary a compaction left, with the usage of its
// model call. A compaction that left none (cancelled, failed) and still
// called the model is a system message saying so, with that call's
// usage.
func (rd *reader) compaction(e *event, d *data, ts time.Time) {
	if d.Success != nil && !*d.Success || strings.TrimSpace(d.SummaryContent) == "" {
		u := d.CompactionTokensUsed
		if u == nil || u.RequestCount <= 0 && u.InputTokens+u.OutputTokens <= 0 {
			rd.res.Skip("session.compaction_complete:failed")
			return
		}
		outcome := strings.TrimSpace(d.Outcome)
		if outcome == "" {
			outcome = "failed"
		}
		m := &loom.Message{ID: e.ID, Role: loom.RoleSystem, CreatedAt: ts, CompletedAt: &ts, Model: u.Model, Usage: u.loom(),
			Parts: []loom.Part{{ID: e.ID + "/0", Type: loom.PartText, Text: "Compaction " + importer.Clip(outcome, 64) + "; its summary was not kept."}}}
		if u.RequestCount > 1 {
			m.Usage.APICalls = u.RequestCount
		}
		rd.main.Messages = append(rd.main.Messages, m)
		return
	}
	m := &loom.Message{ID: e.ID, Role: loom.RoleSummary, CreatedAt: ts, CompletedAt: &ts,
		Parts: []loom.Part{{ID: e.ID + "/0", Type: loom.PartText, Text: d.SummaryContent}}}
	if u := d.CompactionTokensUsed; u != nil {
		m.Usage, m.Model = u.loom(), u.Model
		if u.RequestCount > 1 {
			m.Usage.APICalls = u.RequestCount
		}
	}
	m.Usage.Compactions = 1
	rd.main.Messages = append(rd.main.Messages, m)
}

// finish names the sessions, links the sub-agents, marks the calls left
// without a result and fills the sessions' times.
func (rd *reader) finish() {
	s := rd.main
	if s.SourceID == "" {
		s.SourceID = importer.LineID(filepath.Base(filepath.Dir(rd.path)))
	}
	if s.SourceID == "" || s.SourceID == "." {
		s.SourceID = "unknown"
	}
	if len(s.Messages) == 0 {
		if len(rd.subs) > 0 {
			rd.res.Skip("subagent:without-session")
		}
		return
	}
	for tool, sub := range rd.byTool {
		sub.SourceID, sub.ParentSourceID = s.SourceID+"/"+importer.LineID(tool), s.SourceID
		if sub.SourceID == s.SourceID+"/" {
			sub.SourceID += "agent"
		}
		if sub.Cwd == "" {
			sub.Cwd, sub.Version, sub.GitBranch = s.Cwd, s.Version, s.GitBranch
		}
	}
	var last *loom.Message
	for _, sess := range append([]*importer.Session{s}, rd.subs...) {
		for _, m := range sess.Messages {
			if m.Role == loom.RoleAssistant {
				last = m
			}
		}
	}
	for _, c := range rd.calls {
		p := &c.msg.Parts[c.idx]
		p.Status, p.Error = loom.ToolError, loom.Interrupted
		if c.msg == last {
			p.Error = importer.NoResult
		}
	}
	// The agent part follows the call that ran the sub-agent.
	for _, sess := range append([]*importer.Session{s}, rd.subs...) {
		for _, m := range sess.Messages {
			var parts []loom.Part
			for _, p := range m.Parts {
				parts = append(parts, p)
				if a, ok := rd.agents[p.CallID]; ok && p.Type == loom.PartTool {
					a.ID, a.SessionID = p.ID+"/agent", rd.byTool[p.CallID].SourceID
					parts = append(parts, a)
					delete(rd.agents, p.CallID)
				}
			}
			m.Parts = parts
		}
	}
	rd.res.Sessions = append(rd.res.Sessions, s)
	for _, sub := range rd.subs {
		if len(sub.Messages) > 0 {
			rd.res.Sessions = append(rd.res.Sessions, sub)
		}
	}
	for _, sess := range rd.res.Sessions {
		for _, m := range sess.Messages {
			if sess.CreatedAt.IsZero() || m.CreatedAt.Before(sess.CreatedAt) {
				sess.CreatedAt = m.CreatedAt
			}
			if m.CreatedAt.After(sess.UpdatedAt) {
				sess.UpdatedAt = m.CreatedAt
			}
			if m.Role == loom.RoleAssistant && m.Model != "" {
				sess.Model = m.Model
			}
		}
	}
}
