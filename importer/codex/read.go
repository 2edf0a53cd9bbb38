package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// rec is one line kept between the two passes: its kind (session_meta,
// response_item, …), its time and its payload.
type rec struct {
	n       int
	typ     string
	t       time.Time
	payload []byte
}

// responseTypes are the response item types a rollout written before
// the {timestamp, type, payload} envelope holds bare on its lines.
var responseTypes = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true,
	"web_search_call": true, "image_generation_call": true, "tool_search_call": true,
	"tool_search_output": true, "compaction": true, "compaction_summary": true,
	"context_compaction": true, "ghost_snapshot": true,
}

// kinds are the envelope types that carry a payload.
var kinds = map[string]bool{
	"session_meta": true, "response_item": true, "event_msg": true,
	"turn_context": true, "compacted": true, "inter_agent_communication": true,
}

// read reads a rollout from r in two passes: the first keeps the lines
// and learns what the second needs to know ahead (the session's id, which
// event texts repeat a response item, where a fork's copy of its parent's
// history ends); the second builds the session.
func read(ctx context.Context, path string, r io.Reader) (*importer.Result, error) {
	rd := &reader{
		path:    path,
		res:     &importer.Result{},
		dups:    map[uint64]int{},
		seed:    maphash.MakeSeed(),
		calls:   map[string]*call{},
		running: map[string]*call{},
	}
	var recs []rec
	lines := 0
	err := importer.Lines(ctx, r, func(n int, b []byte) error {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			return nil
		}
		lines++
		if rc, ok := rd.classify(n, b); ok {
			recs = append(recs, rc)
			rd.scan(&recs[len(recs)-1])
		}
		return nil
	}, func(n int) {
		rd.res.Problemf(path, n, fmt.Sprintf("line longer than %d bytes, skipped", importer.MaxLine))
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("codex: %s: %w", path, err)
		}
		rd.res.Problemf(path, 0, "reading stopped: "+err.Error())
	}
	if len(recs) == 0 {
		if lines == 0 {
			return rd.res, nil
		}
		return nil, fmt.Errorf("codex: %s: no rollout lines", path)
	}
	rd.endScan(recs)
	if err := rd.build(ctx, recs); err != nil {
		return nil, err
	}
	slices.SortStableFunc(rd.res.Problems, func(a, b importer.Problem) int { return a.Line - b.Line })
	return rd.res, nil
}

// classify reads a line's envelope and returns what the second pass
// needs of it; a line that is no record is reported or counted here.
func (rd *reader) classify(n int, b []byte) (rec, bool) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		rd.res.Problemf(rd.path, n, "not a rollout line: "+err.Error())
		return rec{}, false
	}
	rc := rec{n: n, t: parseTime(str(l.Timestamp))}
	switch {
	case l.Type != "" && !isNull(l.Payload):
		// The decoder's payload is a copy: the line's buffer is not
		// kept.
		rc.typ, rc.payload = l.Type, l.Payload
	case !isNull(l.RecordType):
		rd.res.Skip("record_type:" + typeName(str(l.RecordType)))
		return rec{}, false
	case l.Type == "" && str(l.ID) != "":
		rc.typ, rc.payload = "session_meta", bytes.Clone(b)
	case responseTypes[l.Type]:
		rc.typ, rc.payload = "response_item", bytes.Clone(b)
	case kinds[l.Type]:
		rd.res.Problemf(rd.path, n, l.Type+" line without a payload")
		return rec{}, false
	case l.Type == "":
		rd.res.Problemf(rd.path, n, "line without a type")
		return rec{}, false
	default:
		rd.res.Skip("unknown:" + typeName(l.Type))
		return rec{}, false
	}
	return rc, true
}

// maxTypeName bounds the type names that skipped counts are keyed by.
const maxTypeName = 64

// typeName returns a record type as a skipped count's key: cut to
// maxTypeName bytes, so that a hostile file cannot make keys of any size.
func typeName(t string) string {
	if len(t) <= maxTypeName {
		return t
	}
	t = t[:maxTypeName]
	for len(t) > 0 && !utf8.ValidString(t) {
		t = t[:len(t)-1]
	}
	return t + "…"
}

// reader holds what reading one rollout learns on the way.
type reader struct {
	path string
	res  *importer.Result
	s    *importer.Session
	sid  string

	// First pass.
	meta     *sessionMeta
	metaLine int
	// dups counts the texts of response items by kind, so that an event
	// repeating one is left out.
	dups map[uint64]int
	seed maphash.Seed
	// A fork's copy of its parent's history spans lines replayStart up
	// to, not including, forkEnd; both 0 when there is none.
	replayStart, forkEnd int
	forkAt               time.Time
	turnEnd, timeEnd     int
	sawTurnID            bool
	lastLine             int

	// Second pass.
	now       time.Time
	model     string // the model of the current turn
	ownModel  string // the last model of the session's own turns
	cwd       string
	title     string
	cur       *loom.Message // the assistant message being built
	open      bool          // whether cur takes more items
	last      *loom.Message // the last assistant message
	pending   *loom.Usage   // usage that came before its message
	prevTotal *tokenUsage
	calls     map[string]*call
	running   map[string]*call // the calls without output yet
	forkTurn  int
	// spawns are the spawn_agent calls in order, for the events that
	// name the agent they started by its path.
	spawns []*call
	// instructions are the texts of the session_meta's instructions,
	// stored once as its system message.
	instructions map[string]bool
	// subagent is the sub-agent source of the session_meta, nil for a
	// session no agent spawned. A sub-agent's copy of its parent's
	// history is left out: the parent's session holds it.
	subagent *threadSpawn
}

// call is a tool call waiting for, or folded with, its result.
type call struct {
	msg    *loom.Message
	idx    int
	failed string // why an event says the call failed
	agent  bool   // whether its agent part was added
	// agentType and task are the arguments of a spawn_agent call that
	// name the agent it starts (agent_type, task_name), read when the
	// call is.
	agentType, task string
	// path is the task path a spawn_agent call's output gave the agent
	// it started (/root/<task name>).
	path string
}

// scan is the first pass over one record.
func (rd *reader) scan(rc *rec) {
	rd.lastLine = rc.n
	switch rc.typ {
	case "session_meta":
		if rd.meta == nil {
			var m sessionMeta
			if json.Unmarshal(rc.payload, &m) == nil {
				rd.meta, rd.metaLine = &m, rc.n
				if t, ok := uuidTime(m.ID); ok {
					rd.forkAt = t
				} else if t := parseTime(m.Timestamp); !t.IsZero() {
					rd.forkAt = t
				} else {
					rd.forkAt = rc.t
				}
			}
			return
		}
		if rd.replayStart == 0 {
			rd.replayStart = rc.n
		}
		return
	case "response_item":
		var it responseItem
		if json.Unmarshal(rc.payload, &it) != nil {
			return
		}
		switch it.Type {
		case "message":
			kind := "a"
			if it.Role != "assistant" {
				kind = "u"
			}
			rd.dups[rd.key(kind, messageText(it.Content))]++
		case "reasoning":
			for _, c := range items(it.Summary) {
				rd.dups[rd.key("r", c.Text)]++
			}
			for _, c := range items(it.Content) {
				rd.dups[rd.key("rr", c.Text)]++
			}
		}
	}
	if rd.replayStart == 0 || rc.n <= rd.replayStart || rd.turnEnd != 0 {
		return
	}
	// Inside a copy of a parent's history: its turns began before the
	// fork was made, the fork's own turns after.
	if id := turnID(rc); id != "" {
		if t, ok := uuidTime(id); ok {
			rd.sawTurnID = true
			if !t.Before(rd.forkAt) {
				rd.turnEnd = rc.n
			}
		}
	}
	if rd.timeEnd == 0 && !rc.t.IsZero() && !rd.forkAt.IsZero() && !rc.t.Before(rd.forkAt) {
		rd.timeEnd = rc.n
	}
}

// turnID returns the turn id a turn_context or turn-start event carries.
func turnID(rc *rec) string {
	switch rc.typ {
	case "turn_context":
		var tc turnContext
		if json.Unmarshal(rc.payload, &tc) == nil {
			return tc.TurnID
		}
	case "event_msg":
		var ev struct {
			Type   string          `json:"type"`
			TurnID json.RawMessage `json:"turn_id"`
		}
		if json.Unmarshal(rc.payload, &ev) == nil && (ev.Type == "task_started" || ev.Type == "turn_started") {
			return str(ev.TurnID)
		}
	}
	return ""
}

// endScan decides where a fork's copy of its parent's history ends: at
// the first turn whose id was made after the fork; failing turn ids, at
// the first line stamped after the fork. When neither tells, nothing is
// taken as copied.
func (rd *reader) endScan(recs []rec) {
	if rd.replayStart == 0 {
		return
	}
	switch {
	case rd.turnEnd != 0:
		rd.forkEnd = rd.turnEnd
	case rd.sawTurnID:
		rd.forkEnd = rd.lastLine + 1
	case rd.timeEnd != 0:
		rd.forkEnd = rd.timeEnd
	default:
		rd.forkEnd = rd.replayStart
	}
}

// inherited reports whether line n belongs to a fork's copy of its
// parent's history.
func (rd *reader) inherited(n int) bool {
	return rd.replayStart != 0 && n >= rd.replayStart && n < rd.forkEnd
}

// key hashes a text of kind for matching events with response items,
// ignoring differences of white space. A user message's IDE context,
// which its event may leave out, is ignored too.
func (rd *reader) key(kind, text string) uint64 {
	if kind == "u" {
		if _, after, ok := strings.Cut(text, userMessageBegin); ok {
			text = after
		}
	}
	var h maphash.Hash
	h.SetSeed(rd.seed)
	h.WriteString(kind)
	h.WriteByte(':')
	first := true
	for f := range strings.FieldsSeq(text) {
		if !first {
			h.WriteByte(' ')
		}
		first = false
		h.WriteString(f)
	}
	return h.Sum64()
}

// duplicate reports whether an event's text repeats a response item's,
// and consumes that item's count when it does.
func (rd *reader) duplicate(kind, text string) bool {
	k := rd.key(kind, text)
	if rd.dups[k] > 0 {
		rd.dups[k]--
		return true
	}
	return false
}

// build is the second pass: it turns the records into the session.
func (rd *reader) build(ctx context.Context, recs []rec) error {
	rd.start(recs)
	for i := range recs {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rc := &recs[i]
		if !rc.t.IsZero() {
			rd.now = rc.t
			if rc.t.After(rd.s.UpdatedAt) {
				rd.s.UpdatedAt = rc.t
			}
		}
		if rd.subagent != nil && rd.inherited(rc.n) {
			rd.skipCopied(rc)
			continue
		}
		switch rc.typ {
		case "session_meta":
			rd.sessionMeta(rc)
		case "turn_context":
			rd.turnContext(rc)
		case "response_item":
			rd.responseItem(rc)
		case "event_msg":
			rd.event(rc)
		case "compacted":
			rd.compacted(rc)
		case "inter_agent_communication":
			rd.interAgent(rc)
		case "inter_agent_communication_metadata", "world_state":
			rd.res.Skip(rc.typ)
		default:
			rd.res.Skip("unknown:" + typeName(rc.typ))
		}
	}
	rd.finish()
	return nil
}

// start sets up the session from the first pass's findings.
func (rd *reader) start(recs []rec) {
	s := &importer.Session{Kind: loom.KindMain, Path: rd.path}
	rd.s = s
	if m := rd.meta; m != nil {
		s.SourceID = m.ID
		s.Version = m.CLIVersion
		s.Provider = m.ModelProvider
		s.CreatedAt = parseTime(m.Timestamp)
		rd.cwd = m.Cwd
		if m.Git != nil {
			s.GitBranch = m.Git.Branch
		}
		rd.subagent = subagentSource(m.Source)
		if m.LoomHandoff != nil && m.LoomHandoff.SessionID != "" {
			s.Origin = m.LoomHandoff
		}
	}
	s.SourceID = oneLine(s.SourceID)
	if s.SourceID == "" {
		s.SourceID = fileID(rd.path)
		if s.SourceID == "" {
			name := filepath.Base(rd.path)
			s.SourceID = strings.TrimSuffix(strings.TrimSuffix(name, ".zst"), ".jsonl")
		}
		rd.res.Problemf(rd.path, 0, "no session_meta line with an id: the session id is taken from the file name")
	}
	rd.sid = s.SourceID
	for _, rc := range recs {
		if !rc.t.IsZero() {
			if s.CreatedAt.IsZero() {
				s.CreatedAt = rc.t
			}
			break
		}
	}
	s.UpdatedAt = s.CreatedAt
	rd.now = s.CreatedAt
}

// finish completes the session once every record was read.
func (rd *reader) finish() {
	s := rd.s
	if rd.pending != nil {
		if rd.last != nil {
			rd.last.Usage.Add(*rd.pending)
		} else {
			rd.res.Skip("event_msg:token_count")
		}
	}
	s.Model = rd.ownModel
	first := ""
	for _, m := range s.Messages {
		if m.Model != "" {
			first = m.Model
			break
		}
	}
	if s.Model == "" {
		s.Model = first
	}
	for _, m := range s.Messages {
		if (m.Role == loom.RoleAssistant || m.Role == loom.RoleSummary) && m.Model == "" {
			m.Model = first
		}
	}
	s.Cwd = rd.cwd
	s.Title = rd.title
	if rd.meta != nil {
		parent, forked := "", oneLine(rd.meta.ForkedFromID)
		if rd.subagent != nil {
			parent = oneLine(rd.subagent.ParentThreadID)
		}
		switch {
		case parent != "" && parent != s.SourceID:
			s.Kind, s.ParentSourceID = loom.KindSubagent, parent
			if s.Title == "" && !hasPrompt(s.Messages) {
				// Its task could not be read (Codex sends it encrypted):
				// the agent's name stands in.
				s.Title = rd.subagent.label(rd.meta)
			}
		case forked != "" && forked != s.SourceID:
			s.Kind, s.ParentSourceID = loom.KindFork, forked
			s.ForkTurn = rd.forkTurn
		}
	}
	if s.UpdatedAt.Before(s.CreatedAt) {
		s.UpdatedAt = s.CreatedAt
	}
	rd.res.Sessions = []*importer.Session{s}
}

// oneLine returns an id trimmed, "" when it spans lines: an id of a
// session is one line.
func oneLine(id string) string {
	id = strings.TrimSpace(id)
	if strings.ContainsAny(id, "\n\r") {
		return ""
	}
	return id
}

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
	rd.res.Skip("inherited:" + typeName(rc.typ))
}

// message adds a message of role created at line n; suffix tells apart
// two messages of one line.
func (rd *reader) message(n int, role, suffix string) *loom.Message {
	t := rd.now
	m := &loom.Message{ID: fmt.Sprintf("%s:%d%s", rd.sid, n, suffix), Role: role, CreatedAt: t, CompletedAt: &t}
	if role == loom.RoleAssistant || role == loom.RoleSummary {
		m.Model, m.Provider = rd.model, rd.s.Provider
	}
	rd.s.Messages = append(rd.s.Messages, m)
	if role == loom.RoleUser && rd.inherited(n) {
		rd.forkTurn++
	}
	return m
}

// endTurn closes the assistant message being built: what comes next
// belongs to another model call.
func (rd *reader) endTurn() {
	rd.cur, rd.open = nil, false
}

// assistant returns the assistant message that items of the current model
// call go to, starting one at line n if needed.
func (rd *reader) assistant(n int) *loom.Message {
	if rd.cur != nil && rd.open {
		return rd.cur
	}
	m := rd.message(n, loom.RoleAssistant, "")
	if rd.pending != nil {
		m.Usage.Add(*rd.pending)
		rd.pending = nil
	}
	rd.cur, rd.open, rd.last = m, true, m
	return m
}

// addPart appends p to m with an id stable across reads, and returns its
// index.
func (rd *reader) addPart(m *loom.Message, p loom.Part) int {
	p.ID = fmt.Sprintf("%s/%d", m.ID, len(m.Parts))
	m.Parts = append(m.Parts, p)
	rd.touch(m)
	return len(m.Parts) - 1
}

// touch moves m's completion to now.
func (rd *reader) touch(m *loom.Message) {
	if m.CompletedAt == nil || rd.now.After(*m.CompletedAt) {
		t := rd.now
		m.CompletedAt = &t
	}
}

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
	rd.endTurn()
	m := rd.message(rc.n, loom.RoleSummary, "")
	m.Usage.Compactions = 1
	rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
}
