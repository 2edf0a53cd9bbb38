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
	return readFrom(ctx, path, nil, r, 1)
}

// readFrom is read of a segment of a rollout (importer.Segmenter): r
// holds its lines from line first on, and head, when not nil, the
// file's first line, its session_meta.
func readFrom(ctx context.Context, path string, head []byte, r io.Reader, first int) (*importer.Result, error) {
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
	if head != nil {
		if rc, ok := rd.classify(1, head); ok {
			recs = append(recs, rc)
			rd.scan(&recs[len(recs)-1])
		} else {
			rd.headLost = len(rd.res.Problems) > 0
		}
	}
	err := importer.LinesFrom(ctx, r, first, func(n int, b []byte) error {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			return nil
		}
		lines++
		problems := len(rd.res.Problems)
		if rc, ok := rd.classify(n, b); ok {
			recs = append(recs, rc)
			rd.scan(&recs[len(recs)-1])
		} else if n == 1 && len(rd.res.Problems) > problems {
			rd.headLost = true
		}
		return nil
	}, func(n int) {
		rd.res.TooLong(path)(n)
		if n == 1 {
			rd.headLost = true
		}
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
	rd.res.CheckUTF8(rd.path, n, b)
	rc := rec{n: n, t: importer.RFC3339Time(str(l.Timestamp))}
	switch {
	case l.Type != "" && !importer.IsNull(l.Payload):
		// The decoder's payload is a copy: the line's buffer is not
		// kept.
		rc.typ, rc.payload = l.Type, l.Payload
	case !importer.IsNull(l.RecordType):
		rd.res.Skip("record_type:" + importer.TypeName(str(l.RecordType)))
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
		rd.res.Skip("unknown:" + importer.TypeName(l.Type))
		return rec{}, false
	}
	return rc, true
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
	// headLost says the file's first line could not be read: the
	// session_meta it held, the session's own, is lost, and one found
	// after it is a copy of a parent's (copied, a fork's or a
	// sub-agent's copy of its parent's history), never taken for the
	// session's own.
	headLost bool
	copied   *sessionMeta
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
	// settled is the last line after which an event's text can no
	// longer be repeated by a response item (pendingEvent).
	settled int

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
			rd.res.Skip("unknown:" + importer.TypeName(rc.typ))
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
		s.CreatedAt = importer.RFC3339Time(m.Timestamp)
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
		if !rd.headLost {
			// A lost first line has its own problem, which says it.
			rd.res.Problemf(rd.path, 0, "no session_meta line with an id: the session id is taken from the file name")
		}
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
	} else if c := rd.copied; c != nil {
		// The session's own session_meta is lost, and with it whether
		// it was a fork or a sub-agent: it holds a copy of the history
		// of the session the copied session_meta names, so it is read
		// as a fork of that session, the copy kept.
		if parent := oneLine(c.ID); parent != "" && parent != s.SourceID {
			s.Kind, s.ParentSourceID = loom.KindFork, parent
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
