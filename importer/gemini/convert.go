package gemini

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// provider is the provider of every model reply Gemini CLI records.
const provider = "google"

// session is a built session with what its sub-agents inherit.
type session struct {
	sourceID string
	cwd      string
	// s is the session as built.
	s *importer.Session
	// runs maps the id of a sub-agent session to the call that ran it.
	runs map[string]agentRun
}

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

// build turns a main recording into its session and the branches its
// rewinds abandoned. It returns nil when the recording holds no message.
func (r *reader) build(rec *recording, projectRoot string) *session {
	return r.buildAs(rec, rec.sessionID, loom.KindMain, "", projectRoot)
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
	if built != nil && built.s.Title == "" {
		built.s.Title = subagentTitle(built.s, run)
	}
}

func (r *reader) buildAs(rec *recording, sourceID, kind, parentID, cwd string) *session {
	sourceID, parentID = oneLine(sourceID), oneLine(parentID)
	if d := rec.hdr.Directories; len(d) > 0 && d[0] != "" {
		cwd = d[0]
	} else if rec.hdr.ProjectRoot != "" {
		cwd = rec.hdr.ProjectRoot
	}
	cwd = oneLine(cwd)
	c := r.converter(rec, sourceID)
	msgs := c.convert(rec.chain.nodes(), 0)
	if len(msgs) == 0 && len(rec.branches) == 0 {
		r.skip("empty-session")
		return nil
	}
	s := &importer.Session{
		SourceID:  sourceID,
		Kind:      kind,
		Cwd:       cwd,
		Path:      rec.path,
		CreatedAt: parseTime(rec.hdr.StartTime),
		UpdatedAt: parseTime(rec.hdr.LastUpdated),
		Messages:  msgs,
	}
	if kind == loom.KindSubagent {
		s.ParentSourceID = parentID
	}
	if kind == loom.KindMain && rec.hdr.LoomHandoff != nil && rec.hdr.LoomHandoff.SessionID != "" {
		s.Origin = rec.hdr.LoomHandoff
	}
	if rec.hdr.Summary != nil {
		s.Title = *rec.hdr.Summary
	}
	fill(s)
	r.res.Sessions = append(r.res.Sessions, s)
	built := &session{sourceID: sourceID, cwd: cwd, s: s, runs: map[string]agentRun{}}
	built.noteAgents(s)
	for _, b := range rec.branches {
		if r.ctx.Err() != nil {
			break
		}
		c := r.converter(rec, sourceID)
		nodes := append(append(make([]*node, 0, len(b.prefix)+len(b.removed)), b.prefix...), b.removed...)
		msgs := c.convert(nodes, len(b.prefix))
		shared := c.from[len(b.prefix)]
		if shared == len(msgs) {
			continue
		}
		f := &importer.Session{
			SourceID:       sourceID + "@" + c.id(b.removed[0].msg),
			Kind:           loom.KindFork,
			ParentSourceID: sourceID,
			ForkTurn:       forkTurn(msgs, shared),
			Cwd:            cwd,
			Path:           rec.path,
			CreatedAt:      s.CreatedAt,
			Messages:       msgs,
		}
		fill(f)
		r.res.Sessions = append(r.res.Sessions, f)
		built.noteAgents(f)
	}
	return built
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

// forkTurn is the last turn a branch shares whole with its parent: the
// user messages before the first removed one, less the last turn when
// the branch leaves in the middle of it.
func forkTurn(msgs []*loom.Message, shared int) int {
	users := 0
	for _, m := range msgs[:shared] {
		if m.Role == loom.RoleUser {
			users++
		}
	}
	if msgs[shared].Role != loom.RoleUser && users > 0 {
		users--
	}
	return users
}

// fill sets a session's model, provider and missing times from its
// messages.
func fill(s *importer.Session) {
	for _, m := range s.Messages {
		if m.Role == loom.RoleAssistant {
			if m.Model != "" {
				s.Model = m.Model
			}
			s.Provider = provider
		}
	}
	if n := len(s.Messages); n > 0 {
		if s.CreatedAt.IsZero() {
			s.CreatedAt = s.Messages[0].CreatedAt
		}
		if last := s.Messages[n-1].CreatedAt; s.UpdatedAt.IsZero() || s.Kind == loom.KindFork {
			s.UpdatedAt = last
		}
	}
}

// dedupe makes source ids unique within the result, and message ids
// unique within each session.
func (r *reader) dedupe() {
	seen := map[string]bool{}
	for _, s := range r.res.Sessions {
		s.SourceID = unique(seen, oneLine(s.SourceID))
		ids := map[string]bool{}
		for _, m := range s.Messages {
			m.ID = unique(ids, m.ID)
		}
	}
}

func unique(seen map[string]bool, id string) string {
	u := id
	for n := 2; seen[u]; n++ {
		u = id + "~" + strconv.Itoa(n)
	}
	seen[u] = true
	return u
}

// converter turns a recording's messages into loom messages.
type converter struct {
	r   *reader
	rec *recording
	// sourceID is the session's SourceID; sub-agent sessions it ran are
	// named <sourceID>/<agent id>.
	sourceID string
	msgs     []*loom.Message
	// calls finds a tool part by call id, to fold results into it.
	calls map[string]callRef
	// count is whether skips and problems are counted for the message
	// being converted: a message shared by a branch and its parent
	// counts once.
	count bool
	prev  time.Time
	// from[i] is the index in msgs of the first message converted from
	// node i (len(msgs) when node i gave none).
	from []int
}

type callRef struct {
	msg *loom.Message
	i   int
	// open is whether the call's record had no result, so that a later
	// function response brings it.
	open bool
}

func (r *reader) converter(rec *recording, sourceID string) *converter {
	return &converter{r: r, rec: rec, sourceID: sourceID, calls: map[string]callRef{}}
}

// convert converts nodes; skips and problems are counted from node
// countFrom on.
func (c *converter) convert(nodes []*node, countFrom int) []*loom.Message {
	c.from = make([]int, len(nodes)+1)
	for i, n := range nodes {
		c.from[i] = len(c.msgs)
		c.count = i >= countFrom
		c.add(n.msg)
	}
	c.from[len(nodes)] = len(c.msgs)
	return c.msgs
}

func (c *converter) skip(name string) {
	if c.count {
		c.r.skip(name)
	}
}

func (c *converter) problem(m *message, reason string) {
	if c.count {
		c.r.problem(c.rec.path, m.line, reason)
	}
}

// time parses a message's timestamp; a message without one takes the time
// of the message before it.
func (c *converter) time(m *message, s string) time.Time {
	if s == "" {
		return c.prev
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		c.problem(m, "bad timestamp "+strconv.Quote(trim(s)))
		return c.prev
	}
	return t
}

func trim(s string) string {
	if len(s) > maxNameLen {
		return strings.ToValidUTF8(s[:maxNameLen], "?") + "…"
	}
	return s
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func (c *converter) id(m *message) string {
	if m.ID != "" {
		return m.ID
	}
	return c.rec.sessionID + ":" + m.pos
}

func (c *converter) add(m *message) {
	t := c.time(m, m.Timestamp)
	if !t.IsZero() {
		c.prev = t
	}
	switch m.Type {
	case "user":
		c.user(m, t)
	case "gemini":
		c.gemini(m, t)
	case "info", "error", "warning":
		c.notice(m, t)
	default:
		c.skip(skipName("unknown:", m.Type))
	}
}

func (c *converter) emit(id, role string, t time.Time, ps []loom.Part) *loom.Message {
	for i := range ps {
		ps[i].ID = id + "/" + strconv.Itoa(i)
	}
	m := &loom.Message{ID: id, Role: role, Parts: ps, CreatedAt: t}
	c.msgs = append(c.msgs, m)
	return m
}

// contentParts decodes a message's content, reporting what cannot be read.
func (c *converter) contentParts(m *message, raw json.RawMessage, field string) []part {
	ps, err := parts(raw)
	if err != nil {
		c.problem(m, field+": "+err.Error())
	}
	return ps
}

// userParts turns the parts a user sent into text and file parts, folding
// function responses into the tool parts of their calls.
// A response in what was displayed only is a copy: one with no call is
// not counted as an orphan.
func (c *converter) userParts(ps []part, t time.Time, display bool) []loom.Part {
	var out []loom.Part
	for _, p := range ps {
		switch {
		case p.FunctionResponse != nil:
			c.fold(p.FunctionResponse, t, !display)
		case p.Text != nil:
			if *p.Text == "" {
				continue
			}
			typ := loom.PartText
			if p.Thought {
				typ = loom.PartReasoning
			}
			out = append(out, loom.Part{Type: typ, Text: *p.Text})
		case p.InlineData != nil:
			out = append(out, loom.Part{Type: loom.PartFile, Mime: p.InlineData.MimeType, URL: "data:" + p.InlineData.MimeType + ";base64," + p.InlineData.Data})
		case p.FileData != nil:
			out = append(out, loom.Part{Type: loom.PartFile, Mime: p.FileData.MimeType, URL: p.FileData.FileURI})
		case p.FunctionCall != nil:
			c.skip("part:functionCall")
		default:
			c.skip(skipName("part:", p.other))
		}
	}
	return out
}

// Texts Gemini CLI sends as the user without the user typing them.
var (
	injectedPrefixes = []string{
		"<session_context>",
		"This is the Gemini CLI. We are setting up the context for our chat.",
	}
	injectedTexts = []string{"System: Please continue."}
	summaryPrefix = "<state_snapshot>"
)

// userRole tells a prompt the user typed from context Gemini CLI sent in
// the user's name, and from the summary that replaces a compressed
// conversation.
func userRole(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, summaryPrefix) {
		return loom.RoleSummary
	}
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(s, p) {
			return loom.RoleSystem
		}
	}
	for _, p := range injectedTexts {
		if s == p {
			return loom.RoleSystem
		}
	}
	return loom.RoleUser
}

// user converts a user record. content is what the model was sent;
// displayContent, when present, is what the user typed (a slash command
// that expanded into a long prompt, say). What the user typed is the user
// message; what was sent besides is a system message after it. A record
// whose display holds no text was not typed at all (a continuation the
// CLI sent after a tool): its content is a system message.
func (c *converter) user(m *message, t time.Time) {
	id := c.id(m)
	content := c.contentParts(m, m.Content, "content")
	if isNull(m.DisplayContent) {
		ps := c.userParts(content, t, false)
		if len(ps) == 0 {
			if !hasResponse(content) {
				c.skip("empty:user")
			}
			return
		}
		c.emit(id, userRole(text(content)), t, ps)
		return
	}
	display := c.contentParts(m, m.DisplayContent, "displayContent")
	sent := c.userParts(content, t, false)
	typed := c.userParts(display, t, true)
	if text(display) == "" {
		if len(sent) > 0 {
			c.emit(id, loom.RoleSystem, t, sent)
		} else if !hasResponse(content) && !hasResponse(display) {
			c.skip("empty:user")
		}
		return
	}
	c.emit(id, loom.RoleUser, t, typed)
	if st := text(content); st != "" && strings.TrimSpace(st) != strings.TrimSpace(text(display)) {
		c.emit(id+"/content", loom.RoleSystem, t, sent)
	}
}

func hasResponse(ps []part) bool {
	for _, p := range ps {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// notice converts what the CLI showed the user (info, error, warning)
// into a system message.
func (c *converter) notice(m *message, t time.Time) {
	ps := c.userParts(c.contentParts(m, m.Content, "content"), t, false)
	if len(ps) == 0 {
		c.skip("empty:" + m.Type)
		return
	}
	c.emit(c.id(m), loom.RoleSystem, t, ps)
}

// gemini converts a model reply: its thoughts, its text, its tool calls
// with their results, and its token usage.
func (c *converter) gemini(m *message, t time.Time) {
	id := c.id(m)
	var ps []loom.Part
	for _, th := range m.Thoughts {
		if s := thoughtText(th); s != "" {
			ps = append(ps, loom.Part{Type: loom.PartReasoning, Text: s})
		}
	}
	var calls []*functionCall
	for _, p := range c.contentParts(m, m.Content, "content") {
		switch {
		case p.Text != nil:
			if *p.Text == "" {
				continue
			}
			typ := loom.PartText
			if p.Thought {
				typ = loom.PartReasoning
			}
			ps = append(ps, loom.Part{Type: typ, Text: *p.Text})
		case p.FunctionCall != nil:
			calls = append(calls, p.FunctionCall)
		case p.InlineData != nil:
			ps = append(ps, loom.Part{Type: loom.PartFile, Mime: p.InlineData.MimeType, URL: "data:" + p.InlineData.MimeType + ";base64," + p.InlineData.Data})
		case p.FileData != nil:
			ps = append(ps, loom.Part{Type: loom.PartFile, Mime: p.FileData.MimeType, URL: p.FileData.FileURI})
		case p.FunctionResponse != nil:
			c.skip("part:functionResponse")
		default:
			c.skip(skipName("part:", p.other))
		}
	}
	recorded := map[string]bool{}
	for i, tc := range m.ToolCalls {
		p := c.toolPart(m, id, i, tc, t)
		recorded[p.CallID] = true
		ps = append(ps, p)
		if tc.AgentID != "" {
			ps = append(ps, loom.Part{Type: loom.PartAgent, Name: agentName(p.Name, p.Input), SessionID: oneLine(c.sourceID + "/" + tc.AgentID)})
		}
	}
	// Calls in the content that the record has no tool call for: their
	// results, if any, come in a later user record.
	for i, fc := range calls {
		callID := fc.ID
		if callID == "" {
			callID = id + "/call-" + strconv.Itoa(i)
		}
		if recorded[callID] {
			continue
		}
		recorded[callID] = true
		name := fc.Name
		if name == "" {
			name = "unknown"
		}
		start := t
		ps = append(ps, loom.Part{Type: loom.PartTool, CallID: callID, Name: name, Status: loom.ToolRunning, Input: input(fc.Args), StartedAt: &start})
	}
	u := usage(m.Tokens)
	if len(ps) == 0 && u.IsZero() {
		c.skip("empty:gemini")
		return
	}
	msg := c.emit(id, loom.RoleAssistant, t, ps)
	msg.Model = m.Model
	msg.Provider = provider
	msg.Usage = u
	if !t.IsZero() {
		done := t
		msg.CompletedAt = &done
	}
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Type == loom.PartTool {
			c.calls[p.CallID] = callRef{msg: msg, i: i, open: len(p.Output) == 0}
		}
	}
}

// thoughtText is a thought summary as the model wrote it: a bold subject
// and its description.
func thoughtText(th thought) string {
	s, d := strings.TrimSpace(th.Subject), strings.TrimSpace(th.Description)
	switch {
	case s == "":
		return d
	case d == "":
		return "**" + s + "**"
	}
	return "**" + s + "**\n\n" + d
}

// toolPart converts one recorded tool call with its result.
func (c *converter) toolPart(m *message, msgID string, i int, tc toolCall, t time.Time) loom.Part {
	callID := tc.ID
	if callID == "" {
		callID = msgID + "/call-" + strconv.Itoa(i)
	}
	name := tc.Name
	if name == "" {
		name = "unknown"
	}
	start := t
	p := loom.Part{
		Type:      loom.PartTool,
		CallID:    callID,
		Name:      name,
		Input:     input(tc.Args),
		Title:     tc.Description,
		Metadata:  metadata(tc),
		StartedAt: &start,
	}
	out, errText, err := resultText(tc.Result)
	if err != nil {
		c.problem(m, "tool call "+strconv.Quote(trim(callID))+" result: "+err.Error())
	}
	if out != "" {
		p.Output = jsonString(out)
	}
	var end *time.Time
	if tc.Timestamp != "" {
		e := c.time(m, tc.Timestamp)
		end = &e
	}
	switch tc.Status {
	case "success":
		p.Status, p.EndedAt = loom.ToolCompleted, end
	case "error", "cancelled":
		p.Status, p.EndedAt = loom.ToolError, end
		p.Error = errText
		if p.Error == "" {
			p.Error = displayText(tc.ResultDisplay)
		}
		if p.Error == "" {
			p.Error = tc.Status
		}
	default:
		// validating, scheduled, awaiting_approval, executing: the
		// call had not finished when the file was written.
		p.Status = loom.ToolRunning
	}
	return p
}

// fold puts a function response a user record carries into the tool part
// of its call, when the call's own record had no result.
func (c *converter) fold(fr *functionResponse, t time.Time, countOrphan bool) {
	ref, ok := c.calls[fr.ID]
	if !ok {
		if countOrphan {
			c.skip("orphan:functionResponse")
		}
		return
	}
	if !ref.open {
		return
	}
	ref.open = false
	c.calls[fr.ID] = ref
	p := &ref.msg.Parts[ref.i]
	out, errText := responseText(fr.Response)
	if out != "" {
		p.Output = jsonString(out)
	}
	if p.EndedAt == nil {
		end := t
		p.EndedAt = &end
	}
	switch {
	case errText != "":
		p.Status, p.Error = loom.ToolError, errText
	case p.Status != loom.ToolError:
		p.Status = loom.ToolCompleted
	}
}

// input is a tool call's arguments as a JSON object.
func input(args json.RawMessage) json.RawMessage {
	if isNull(args) {
		return json.RawMessage(`{}`)
	}
	args = bytes.TrimSpace(args)
	if args[0] == '{' {
		return args
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"args": args})
	return b
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// displayText is a tool's display when it is text.
func displayText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// metadata keeps what Gemini CLI showed of a tool call: its display name
// and its result as displayed (text or a diff).
func metadata(tc toolCall) json.RawMessage {
	m := map[string]json.RawMessage{}
	if tc.DisplayName != "" {
		m["displayName"] = jsonString(tc.DisplayName)
	}
	if !isNull(tc.ResultDisplay) && string(bytes.TrimSpace(tc.ResultDisplay)) != `""` {
		m["resultDisplay"] = tc.ResultDisplay
	}
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// usage converts a reply's tokens to loom's counts, where input,
// cache-read and cache-write tokens do not overlap and output includes
// reasoning.
func usage(t *tokens) loom.Usage {
	if t == nil {
		return loom.Usage{}
	}
	cached := clamp(t.Cached)
	in := clamp(t.Input)
	return loom.Usage{
		InputTokens:     max(0, in-cached) + clamp(t.Tool),
		OutputTokens:    clamp(t.Output) + clamp(t.Thoughts),
		ReasoningTokens: clamp(t.Thoughts),
		CacheReadTokens: cached,
		APICalls:        1,
	}
}

// clamp keeps a count from a file within what a sum cannot overflow.
func clamp(n int64) int64 {
	return min(max(n, 0), 1<<48)
}
