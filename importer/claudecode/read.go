package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Bounds on abandoned branches: each is a session holding its whole
// branch, shared messages included, so a file of many branches off a long
// chain could otherwise ask for memory far beyond its size. The second
// bounds the messages of a bundle's forks together (counted as the
// branches' lengths in the message tree; a node may make two messages).
const (
	maxForks        = 1000
	maxForkMessages = 200_000
)

// reader reads one bundle.
type reader struct {
	ctx   context.Context
	open  opener
	res   *importer.Result
	order int
	// forks and forkMessages count what the bundle's abandoned branches
	// took of their bounds; dropped counts the branches left out.
	forks, forkMessages, dropped int
}

// Read reads one bundle: a session file with its sub-agents' files, or a
// sub-agent's file alone. Its sessions come parent first: the main
// session, its abandoned branches, then each sub-agent followed by its
// own branches.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	return (&reader{ctx: ctx, open: openFile}).read(b)
}

func (rd *reader) read(b importer.Bundle) (*importer.Result, error) {
	if len(b.Files) == 0 {
		return nil, errors.New("claude-code: empty bundle")
	}
	rd.res = &importer.Result{}
	var err error
	if isAgentFile(b.Files[0]) {
		err = rd.agentBundle(b.Files[0])
	} else {
		err = rd.sessionBundle(b.Files)
	}
	if err != nil {
		return nil, err
	}
	// Ids cleaned of what a SourceID cannot hold may meet in a damaged
	// file; the later session gets a suffix.
	ids := idSet{}
	for _, s := range rd.res.Sessions {
		s.SourceID = ids.unique(s.SourceID)
	}
	if rd.dropped > 0 {
		rd.res.Problemf(b.Name(), 0, strconv.Itoa(rd.dropped)+" abandoned branches not imported: more than the bound of "+
			strconv.Itoa(maxForks)+" branches or "+strconv.Itoa(maxForkMessages)+" messages in them")
	}
	return rd.res, nil
}

// file is one file's lines, sorted out.
type file struct {
	path   string
	nodes  []*record // lines that take part in the parentUuid tree
	side   []*record // isSidechain lines, in a session file
	titles titles
}

// load reads a file and sorts its lines: tree lines (main and, when split
// is set, sidechain apart), title lines, and lines only counted.
func (rd *reader) load(path string, split bool) (*file, error) {
	recs, err := readFile(rd.ctx, rd.open, path, rd.res)
	if err != nil {
		return nil, err
	}
	f := &file{path: path}
	seen := map[string]bool{}
	for _, r := range recs {
		r.order = rd.order
		rd.order++
		if r.hasUUID {
			if seen[r.id] {
				rd.res.Skip("duplicate:" + label(r.Type))
				continue
			}
			seen[r.id] = true
		}
		switch r.Type {
		case "summary":
			f.titles.summaries = append(f.titles.summaries, &summaryLine{leaf: r.LeafUUID, text: r.Summary})
			continue
		case "custom-title":
			f.titles.custom = append(f.titles.custom, r.CustomTitle)
			continue
		case "ai-title":
			f.titles.ai = append(f.titles.ai, r.AITitle)
			continue
		}
		rd.census(r)
		if !r.hasUUID && r.Type != "user" && r.Type != "assistant" && r.Type != "system" {
			continue
		}
		if split && r.IsSidechain {
			f.side = append(f.side, r)
		} else {
			f.nodes = append(f.nodes, r)
		}
	}
	return f, nil
}

// census counts the lines that make no message or part by type.
func (rd *reader) census(r *record) {
	switch r.Type {
	case "user", "assistant":
		if r.Message == nil || len(r.blocks) == 0 {
			rd.res.Skip(r.Type + ":empty")
		}
	case "system":
		switch r.Subtype {
		case "compact_boundary", "local_command":
		case "":
			rd.res.Skip("system")
		default:
			rd.res.Skip("system:" + label(r.Subtype))
		}
	case "progress", "file-history-snapshot", "queue-operation", "agent-name", "last-prompt":
		rd.res.Skip(r.Type)
	case "attachment":
		if r.Attachment != nil && r.Attachment.Type != "" {
			rd.res.Skip("attachment:" + label(r.Attachment.Type))
		} else {
			rd.res.Skip("attachment")
		}
	default:
		rd.res.Skip("unknown:" + label(r.Type))
	}
}

// subagent is a sub-agent's transcript file of a session bundle.
type subagent struct {
	f        *file
	t        *tree
	b        *builder
	sourceID string
}

func (rd *reader) sessionBundle(paths []string) error {
	f, err := rd.load(paths[0], true)
	if err != nil {
		return err
	}
	sid := sessionID(paths[0], f.nodes)
	mainTree := newTree(f.nodes, true, rd.res)
	sideTree := newTree(f.side, false, rd.res)
	mb, sb := newBuilder(mainTree, rd.res), newBuilder(sideTree, rd.res)

	var subs []*subagent
	for _, p := range paths[1:] {
		sf, err := rd.load(p, false)
		if err != nil {
			rd.res.Problemf(p, 0, err.Error())
			continue
		}
		t := newTree(sf.nodes, false, rd.res)
		stem := cleanID(strings.TrimSuffix(filepath.Base(p), ".jsonl"))
		subs = append(subs, &subagent{f: sf, t: t, b: newBuilder(t, rd.res), sourceID: sid + "/" + stem})
	}

	titles := map[string]string{} // sub-agent SourceID -> its task's description
	calls := taskCalls(mainTree)
	linkAgents(sid, mainTree, mb, calls, titles)
	sideTops, sideLeaves := sideTree.leaves()
	sideIDs := linkSidechains(sid, sideTree, sideTops, mb, calls, titles)
	linkCompactions(mainTree, mb, subs)

	base := importer.Session{SourceID: sid, Kind: loom.KindMain, Path: paths[0], Provider: provider}
	tops, leaves := mainTree.leaves()
	var all []int
	for _, top := range tops {
		all = append(all, leaves[top]...)
	}
	for _, n := range f.nodes {
		if n.LoomHandoff != nil && n.LoomHandoff.SessionID != "" {
			base.Origin = n.LoomHandoff
			break
		}
	}
	if len(all) > 0 {
		rd.sessions(mainTree, mb, all, base, &f.titles, f.nodes)
	}
	base.Origin = nil
	byTop := recsByTop(sideTree)
	for i, top := range sideTops {
		s := base
		s.SourceID, s.Kind, s.ParentSourceID, s.Title = sideIDs[i], loom.KindSubagent, sid, titles[sideIDs[i]]
		rd.sessions(sideTree, sb, sideLeaves[top], s, nil, byTop[top])
	}
	var parentTitle string
	if len(rd.res.Sessions) > 0 && rd.res.Sessions[0].SourceID == sid {
		parentTitle = importer.Title(rd.res.Sessions[0])
	}
	for _, sa := range subs {
		s := base
		s.SourceID, s.Kind, s.ParentSourceID, s.Title, s.Path = sa.sourceID, loom.KindSubagent, sid, titles[sa.sourceID], sa.f.path
		if isCompactionFile(sa.f.path) {
			s.Title = compactionTitle(parentTitle)
		}
		rd.treeSessions(sa.t, sa.b, s, &sa.f.titles, sa.f.nodes)
		sa.b.unused()
		sa.f.titles.count(rd.res)
	}
	mb.unused()
	sb.unused()
	f.titles.count(rd.res)
	types := map[string]string{}
	for _, a := range mb.agents {
		types[a.sourceID] = a.agentType
	}
	for _, s := range rd.res.Sessions {
		titleSubagent(s, types[s.SourceID])
	}
	return nil
}

// isCompactionFile reports whether p is the transcript of a compaction
// agent: subagents/agent-acompact-*.jsonl.
func isCompactionFile(p string) bool {
	return strings.HasPrefix(filepath.Base(p), "agent-acompact")
}

// compactionTitle is the title of a compaction agent's session: its
// prompt is the instructions Claude Code gives every compaction, which
// say nothing of the session.
func compactionTitle(parent string) string {
	if parent == "" {
		return "Compaction summary"
	}
	return "Compaction of " + parent
}

// titleSubagent gives a sub-agent session without a title, whose first
// prompt is raw JSON (a tool's input passed on as it is, which
// importer.FirstPrompt does not take for a title), a title made of the
// kind of agent that ran it (agentType, the call's subagent_type)
// rather than none.
func titleSubagent(s *importer.Session, agentType string) {
	if s.Kind != loom.KindSubagent || s.Title != "" || importer.FirstPrompt(s.Messages) != "" || !hasPrompt(s.Messages) {
		return
	}
	if agentType == "" {
		s.Title = "Sub-agent"
		return
	}
	s.Title = agentType + " sub-agent"
}

// hasPrompt reports whether msgs hold a user message with text.
func hasPrompt(msgs []*loom.Message) bool {
	return slices.ContainsFunc(msgs, func(m *loom.Message) bool {
		return m.Role == loom.RoleUser && m.Text() != ""
	})
}

// agentBundle reads a sub-agent's file alone: a project-level agent-*.jsonl
// of Claude Code 1.x and 2.0, or a subagents/ file whose session file is
// gone. Its parent is the session its lines name.
func (rd *reader) agentBundle(path string) error {
	f, err := rd.load(path, false)
	if err != nil {
		return err
	}
	parent := linesSessionID(f.nodes)
	if parent == "" && isSubagentPath(path) {
		parent = cleanID(filepath.Base(filepath.Dir(filepath.Dir(path))))
	}
	stem := cleanID(strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	s := importer.Session{SourceID: stem, Kind: loom.KindMain, Path: path, Provider: provider}
	if parent != "" {
		s.SourceID, s.Kind, s.ParentSourceID = parent+"/"+stem, loom.KindSubagent, parent
	}
	if isCompactionFile(path) {
		s.Title = compactionTitle("")
	}
	t := newTree(f.nodes, false, rd.res)
	b := newBuilder(t, rd.res)
	rd.treeSessions(t, b, s, &f.titles, f.nodes)
	b.unused()
	f.titles.count(rd.res)
	for _, s := range rd.res.Sessions {
		titleSubagent(s, "")
	}
	return nil
}

// treeSessions adds the sessions of a whole tree: one transcript, however
// many roots it has.
func (rd *reader) treeSessions(t *tree, b *builder, base importer.Session, ti *titles, recs []*record) {
	tops, leaves := t.leaves()
	var all []int
	for _, top := range tops {
		all = append(all, leaves[top]...)
	}
	if len(all) > 0 {
		rd.sessions(t, b, all, base, ti, recs)
	}
}

// sessions adds the session that ends at the newest of leaves and a fork
// for each other leaf. recs are the session's lines, for its working
// directory, branch and version.
func (rd *reader) sessions(t *tree, b *builder, leaves []int, base importer.Session, ti *titles, recs []*record) {
	mainLeaf, others := t.newest(leaves)
	b.live[t.nodes[mainLeaf].key] = true
	mainPath := t.path(mainLeaf)
	msgs := b.messages(mainPath)
	settleCommands(msgs, b.commands)
	if len(msgs) == 0 {
		return
	}
	s := base
	s.Cwd, s.GitBranch, s.Version = sessionMeta(recs)
	fill(&s, msgs)
	if ti != nil {
		s.Title = ti.main(t, mainPath, s.Title)
	}
	rd.res.Sessions = append(rd.res.Sessions, &s)

	for _, leaf := range others {
		depth := t.nodes[leaf].depth
		if rd.forks >= maxForks || rd.forkMessages+depth > maxForkMessages {
			rd.dropped++
			continue
		}
		rd.forks++
		rd.forkMessages += depth
		path := t.path(leaf)
		fmsgs := copyMessages(b.messages(path))
		settleCommands(fmsgs, b.commands)
		if len(fmsgs) == 0 {
			continue
		}
		fk := s
		fk.SourceID = s.SourceID + "@" + cleanID(t.recs[t.nodes[t.own(leaf)].first].id)
		fk.Kind, fk.ParentSourceID, fk.Title = loom.KindFork, s.SourceID, ""
		fk.ForkTurn = forkTurn(msgs, fmsgs)
		fill(&fk, fmsgs)
		if ti != nil {
			fk.Title = ti.summary(t, path)
		}
		rd.res.Sessions = append(rd.res.Sessions, &fk)
	}
}

// fill sets a session's messages, times and model.
func fill(s *importer.Session, msgs []*loom.Message) {
	uniqueIDs(msgs)
	s.Messages = msgs
	s.CreatedAt, s.UpdatedAt = span(msgs)
	s.Model = ""
	for i := len(msgs) - 1; i >= 0 && s.Model == ""; i-- {
		if msgs[i].Role == loom.RoleAssistant {
			s.Model = msgs[i].Model
		}
	}
}

// forkTurn is the number of turns a fork shares whole with its parent:
// the turns opened in their common messages, less the last of them when
// either side goes on inside it.
func forkTurn(parent, fork []*loom.Message) int {
	d := 0
	for d < len(parent) && d < len(fork) && parent[d].ID == fork[d].ID {
		d++
	}
	turns := 0
	for _, m := range fork[:d] {
		if m.Role == loom.RoleUser {
			turns++
		}
	}
	opens := func(msgs []*loom.Message) bool { return d == len(msgs) || msgs[d].Role == loom.RoleUser }
	if turns > 0 && (!opens(parent) || !opens(fork)) {
		turns--
	}
	return turns
}

// sessionMeta is the latest working directory, git branch and Claude
// Code version the lines name.
func sessionMeta(recs []*record) (cwd, branch, version string) {
	for i := len(recs) - 1; i >= 0 && (cwd == "" || branch == "" || version == ""); i-- {
		r := recs[i]
		if cwd == "" {
			cwd = r.Cwd
		}
		if branch == "" {
			branch = r.GitBranch
		}
		if version == "" {
			version = r.Version
		}
	}
	return cwd, branch, version
}

// recsByTop splits a tree's lines by the transcript (top node) they
// belong to; lines above every message (top 0) go with none.
func recsByTop(t *tree) map[int][]*record {
	out := map[int][]*record{}
	for i, r := range t.recs {
		if top := t.nodes[t.node[i]].top; top > 0 {
			out[top] = append(out[top], r)
		}
	}
	return out
}

// sessionID is the session's id: the file's name when it is a UUID (a
// resumed session's file may hold lines of the session it resumed), else
// the sessionId of its latest message line.
func sessionID(path string, recs []*record) string {
	stem := cleanID(strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	if isUUID(stem) {
		return stem
	}
	if id := linesSessionID(recs); id != "" {
		return id
	}
	return stem
}

// linesSessionID is the sessionId of the latest message line that names
// one (Claude Code's session ids are UUIDs; anything else is ignored).
func linesSessionID(recs []*record) string {
	for i := len(recs) - 1; i >= 0; i-- {
		if r := recs[i]; (r.Type == "user" || r.Type == "assistant") && isUUID(r.SessionID) {
			return r.SessionID
		}
	}
	return ""
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// titles are a file's title lines.
type titles struct {
	custom, ai []string
	summaries  []*summaryLine
	byNode     map[int]*summaryLine // by the node of its leafUuid, once read
	usedCustom bool
	usedAI     bool
}

type summaryLine struct {
	leaf, text string
	used       bool
}

// main is the title of the session along path: the latest custom title
// (from /rename), else the latest AI title, else the summary of the
// deepest message of path that has one, else def.
func (ti *titles) main(t *tree, path []int, def string) string {
	if n := len(ti.custom); n > 0 && ti.custom[n-1] != "" {
		ti.usedCustom = true
		return ti.custom[n-1]
	}
	if n := len(ti.ai); n > 0 && ti.ai[n-1] != "" {
		ti.usedAI = true
		return ti.ai[n-1]
	}
	if s := ti.summary(t, path); s != "" {
		return s
	}
	return def
}

// summary is the text of the summary line whose leafUuid is the deepest
// on path (the later line on a tie).
func (ti *titles) summary(t *tree, path []int) string {
	if len(ti.summaries) == 0 {
		return ""
	}
	if ti.byNode == nil {
		ti.byNode = map[int]*summaryLine{}
		for _, s := range ti.summaries {
			if i, ok := t.byUUID[s.leaf]; ok && s.text != "" {
				ti.byNode[t.node[i]] = s
			}
		}
	}
	for k := len(path) - 1; k >= 0; k-- {
		if s, ok := ti.byNode[path[k]]; ok {
			s.used = true
			return s.text
		}
	}
	return ""
}

// count counts the title lines that named no session.
func (ti *titles) count(res *importer.Result) {
	for i := range ti.custom {
		if !ti.usedCustom || i != len(ti.custom)-1 {
			res.Skip("custom-title")
		}
	}
	for i := range ti.ai {
		if !ti.usedAI || i != len(ti.ai)-1 {
			res.Skip("ai-title")
		}
	}
	for _, s := range ti.summaries {
		if !s.used {
			res.Skip("summary")
		}
	}
}

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
	link := func(callID, agentID string) {
		c, ok := calls[callID]
		if !ok || c.linked || agentID == "" || cleanID(agentID) != agentID {
			return
		}
		c.linked = true
		id := sid + "/agent-" + agentID
		b.agents[callID] = agentLink{sourceID: id, name: c.agentName(), agentType: c.input.SubagentType}
		if c.input.Description != "" {
			titles[id] = c.input.Description
		}
	}
	for callID, res := range b.results {
		if raw := res.rec.ToolUseResult; len(raw) > 0 && raw[0] == '{' {
			var v struct {
				AgentID string `json:"agentId"`
			}
			if json.Unmarshal(raw, &v) == nil {
				link(callID, v.AgentID)
			}
		}
	}
	for _, r := range t.recs {
		if r.Type == "progress" && r.Data != nil && r.Data.Type == "agent_progress" {
			link(r.ParentToolUseID, r.Data.AgentID)
		}
	}
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
		b.agents[best.id] = agentLink{sourceID: ids[i], name: best.agentName(), agentType: best.input.SubagentType}
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
		b.agents[match.id] = agentLink{sourceID: sa.sourceID, name: "compact"}
	}
}

// uniqueIDs makes the message ids of a session, and the part ids, unique:
// ids come from the file's uuids, which a damaged or hostile file may
// repeat in ways the reader's derived ids collide with.
func uniqueIDs(msgs []*loom.Message) {
	msgIDs, partIDs := idSet{}, idSet{}
	for _, m := range msgs {
		m.ID = msgIDs.unique(m.ID)
		for i := range m.Parts {
			m.Parts[i].ID = partIDs.unique(m.Parts[i].ID)
		}
	}
}

// idSet hands out unique ids: an id taken already gets a suffix #2, #3 …
type idSet map[string]int

func (s idSet) unique(id string) string {
	n, taken := s[id]
	if !taken {
		s[id] = 1
		return id
	}
	for k := max(n, 1) + 1; ; k++ {
		c := id + "#" + strconv.Itoa(k)
		if _, t := s[c]; !t {
			s[id], s[c] = k, 1
			return c
		}
	}
}
