package claudecode

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	json "github.com/goccy/go-json"

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
	// segPath is the main file when a segment of it is read, segLine
	// the number of the segment's first line.
	segPath string
	segLine int
	segFrom int64
}

// Read reads one bundle: a session file with its sub-agents' files, or a
// sub-agent's file alone. Its sessions come parent first: the main
// session, its abandoned branches, then each sub-agent followed by its
// own branches.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	return (&reader{ctx: ctx, open: openFile}).read(b)
}

var _ importer.Segmenter = Format{}

// ReadSegment reads one bundle with its session file cut to seg
// (importer.Segmenter): what a big file holds, a segment at a time.
func (Format) ReadSegment(ctx context.Context, b importer.Bundle, seg importer.Segment) (*importer.Result, error) {
	rd := &reader{ctx: ctx, open: importer.SectionOpener(b.Name(), seg, openFile), segPath: b.Name(), segLine: seg.Line, segFrom: seg.From}
	return rd.read(b)
}

// Restart reports whether line is a prompt of the main conversation,
// which starts a turn: a segment read from it on makes the messages a
// reading of the whole file makes of what follows.
func (Format) Restart(line []byte) bool {
	if !bytes.Contains(line, []byte(`"user"`)) {
		return false
	}
	l, ok := turnLine(line)
	return ok && l.isPrompt() && !l.IsSidechain
}

var _ importer.TurnScanner = Format{}

// Turns tells the turns of a sub-agent's file (importer.TurnScanner),
// whose lines are all isSidechain and which is mostly one long turn of
// replies and tool results: a line starts a turn when it is a prompt,
// or the first line of a reply after another reply and the tool
// results that answered it. Claude Code asks for the next reply only
// once every call of the one before has its result, so no result
// after that line answers a call before it. A reply's first line is
// told by its message id, which its other lines repeat; the first
// reply a scan meets is never taken, since the lines before it are
// unknown. A session file's turns are its prompts (Restart).
func (Format) Turns(name string) func(line []byte) bool {
	if !isAgentFile(name) {
		return nil
	}
	var reply string
	replied, answered := false, false
	return func(line []byte) bool {
		l, ok := turnLine(line)
		if !ok {
			return false
		}
		switch l.Type {
		case "user":
			answered = true
			return l.isPrompt()
		case "assistant":
			id := l.UUID
			if l.Message != nil && l.Message.ID != "" {
				id = l.Message.ID
			}
			starts := replied && answered && id != reply
			if id != reply {
				answered = false
			}
			reply, replied = id, true
			return starts
		}
		return false
	}
}

// lineOfTurn is what tells of a line whether it starts a turn.
type lineOfTurn struct {
	Type             string          `json:"type"`
	UUID             string          `json:"uuid"`
	IsSidechain      bool            `json:"isSidechain"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	ToolUseResult    json.RawMessage `json:"toolUseResult"`
	Message          *struct {
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// turnLine reads line as a user or assistant line; false for any
// other.
func turnLine(line []byte) (lineOfTurn, bool) {
	var l lineOfTurn
	if !bytes.Contains(line, []byte(`"user"`)) && !bytes.Contains(line, []byte(`"assistant"`)) {
		return l, false
	}
	if json.Unmarshal(line, &l) != nil || (l.Type != "user" && l.Type != "assistant") {
		return l, false
	}
	return l, true
}

// isPrompt reports whether l is a prompt: a user line with content of
// its own, no tool's result, no line Claude Code adds (isMeta), no
// compaction's summary.
func (l lineOfTurn) isPrompt() bool {
	return l.Type == "user" && !l.IsMeta && !l.IsCompactSummary && len(l.ToolUseResult) == 0 &&
		l.Message != nil && len(l.Message.Content) > 0 && !bytes.Contains(l.Message.Content, []byte(`"tool_result"`))
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
	first := 1
	if path == rd.segPath {
		first = rd.segLine
	}
	recs, err := readFile(rd.ctx, rd.open, path, first, rd.res)
	if err != nil {
		return nil, err
	}
	f := &file{path: path}
	compactUsage(recs)
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
	case "progress", "file-history-snapshot", "queue-operation", "agent-name", "last-prompt",
		"api-request", "api-request-blob", "api-request-shape", "atis-latch", "cost-state", "tools-used", "mode":
		rd.res.Skip(r.Type)
	case "attachment":
		if instructions(r) {
			// A system message (attachments.go).
		} else if r.Attachment != nil && r.Attachment.Type != "" {
			rd.res.Skip("attachment:" + label(r.Attachment.Type))
		} else {
			rd.res.Skip("attachment")
		}
	default:
		rd.res.Skip("unknown:" + label(r.Type))
	}
}

// compactUsage gives each compact_boundary of recs the usage of the
// model call that made its summary, which no line holds but Claude Code
// (2.1.330) counts in the running totals of its cost-state lines: when
// two cost-state lines of one run (the same startTime) have a
// compact_boundary between them and no assistant line, and their totals
// grew for one model alone, that growth is the call's (a /compact run
// as a turn of its own). A compaction in the middle of a turn, among
// the turn's replies, is left without it.
func compactUsage(recs []*record) {
	var last, boundary *record
	replies := false
	for _, r := range recs {
		switch {
		case r.Type == "assistant":
			replies = true
		case r.Type == "system" && r.Subtype == "compact_boundary":
			boundary = r
		case r.Type == "cost-state":
			if last != nil && boundary != nil && !replies && r.StartTime == last.StartTime {
				boundary.compactModel, boundary.compactUsage = grownBy(last.ModelUsage, r.ModelUsage)
			}
			last, boundary, replies = r, nil, false
		}
	}
}

// grownBy returns the model whose totals grew from before to after, and
// by how much, when one alone did and none shrank.
func grownBy(before, after map[string]modelUsage) (string, *loom.Usage) {
	model := ""
	var u loom.Usage
	for name, a := range after {
		b := before[name]
		d := modelUsage{a.InputTokens - b.InputTokens, a.OutputTokens - b.OutputTokens, a.CacheReadInputTokens - b.CacheReadInputTokens, a.CacheCreationInputTokens - b.CacheCreationInputTokens}
		if d.InputTokens < 0 || d.OutputTokens < 0 || d.CacheReadInputTokens < 0 || d.CacheCreationInputTokens < 0 {
			return "", nil
		}
		if d == (modelUsage{}) {
			continue
		}
		if model != "" {
			return "", nil
		}
		model = name
		u = loom.Usage{InputTokens: d.InputTokens, OutputTokens: d.OutputTokens, CacheReadTokens: d.CacheReadInputTokens, CacheWriteTokens: d.CacheCreationInputTokens, APICalls: 1}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			return "", nil
		}
	}
	if model == "" {
		return "", nil
	}
	return model, &u
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
	s.Added = b.addedIn(msgs)
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
		fk.ForkTurn = importer.ForkTurn(msgs, fmsgs)
		fill(&fk, fmsgs)
		fk.Added = b.addedIn(fmsgs)
		if ti != nil {
			fk.Title = ti.summary(t, path)
		}
		rd.res.Sessions = append(rd.res.Sessions, &fk)
	}
}

// fill sets a session's messages, times and model.
func fill(s *importer.Session, msgs []*loom.Message) {
	uniqueIDs(msgs)
	s.Messages, s.Renamed = msgs, renamed(msgs)
	s.CreatedAt, s.UpdatedAt = span(msgs)
	s.Model = ""
	for i := len(msgs) - 1; i >= 0 && s.Model == ""; i-- {
		if msgs[i].Role == loom.RoleAssistant {
			s.Model = msgs[i].Model
		}
	}
}

// sessionMeta is the working directory the session started in (a cd
// later in it moves its calls, not the session: each call records its
// own), and the latest git branch and Claude Code version the lines
// name.
func sessionMeta(recs []*record) (cwd, branch, version string) {
	for _, r := range recs {
		if r.Cwd != "" {
			cwd = r.Cwd
			break
		}
	}
	for i := len(recs) - 1; i >= 0 && (branch == "" || version == ""); i-- {
		r := recs[i]
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
