package pi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

// entry is one line of a session file: the header (type "session") or an
// entry of the session's tree. Only the fields loom reads are decoded.
type entry struct {
	Type      string  `json:"type"`
	ID        *string `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`
	Cwd       string  `json:"cwd"`
	// ParentSession is the file a session was forked from (--fork,
	// /fork, /clone), in the header.
	ParentSession string `json:"parentSession"`
	// LoomHandoff is the loom session a handed-off file continues
	// (handoff.OriginField), in the header.
	LoomHandoff *handoff.Origin `json:"loomHandoff"`
	Message     *message        `json:"message"`
	// compaction, branch_summary
	Summary          string          `json:"summary"`
	FirstKeptEntryID string          `json:"firstKeptEntryId"`
	TokensBefore     json.Number     `json:"tokensBefore"`
	FromID           string          `json:"fromId"`
	Details          json.RawMessage `json:"details"`
	FromHook         bool            `json:"fromHook"`
	// custom_message
	CustomType string  `json:"customType"`
	Content    content `json:"content"`
	// session_info
	Name *string `json:"name"`
	// model_change
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// message is an entry's AgentMessage.
type message struct {
	Role         string  `json:"role"`
	Content      content `json:"content"`
	Provider     string  `json:"provider"`
	Model        string  `json:"model"`
	Usage        *usage  `json:"usage"`
	StopReason   string  `json:"stopReason"`
	ErrorMessage string  `json:"errorMessage"`
	Timestamp    float64 `json:"timestamp"`
	// toolResult
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Details    json.RawMessage `json:"details"`
	IsError    bool            `json:"isError"`
	// bashExecution
	Command   string       `json:"command"`
	Output    string       `json:"output"`
	ExitCode  *json.Number `json:"exitCode"`
	Cancelled bool         `json:"cancelled"`
	// custom, branchSummary, compactionSummary
	CustomType string `json:"customType"`
	Summary    string `json:"summary"`
}

type usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	// Reasoning is what Oh My Pi and OpenClaw write of the output's
	// reasoning tokens.
	Reasoning int64 `json:"reasoningTokens"`
	Cost      *struct {
		Total float64 `json:"total"`
	} `json:"cost"`
}

// block is one content block: text, thinking, image or toolCall.
type block struct {
	Type              string          `json:"type"`
	Text              string          `json:"text"`
	Thinking          string          `json:"thinking"`
	ThinkingSignature string          `json:"thinkingSignature"`
	Redacted          bool            `json:"redacted"`
	Data              string          `json:"data"`
	MimeType          string          `json:"mimeType"`
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	Arguments         json.RawMessage `json:"arguments"`
}

// node is an entry of the tree, kept between reading and building.
type node struct {
	n      int // line
	id     string
	parent int // index of the parent node, -1 for a root
	kids   int
	ts     time.Time
	e      entry
	msg    *message // decoded Message of a "message" entry
}

// Bounds on abandoned branches: each is a session holding its whole
// branch, shared messages included, so that a file of many branches off
// a long chain cannot ask for memory far beyond its size.
const (
	maxForks        = 1000
	maxForkMessages = 200_000
)

// reader reads one session file.
type reader struct {
	path   string
	res    *importer.Result
	header *entry
	nodes  []*node
	byID   map[string]int
	title  string
	titled bool
	// segment says the lines read are a segment of the file after its
	// start (segment.go): a parent named but not read is in an earlier
	// segment.
	segment bool
}

// read reads one session file from r.
func read(ctx context.Context, path string, r io.Reader) (*importer.Result, error) {
	return newReader(path).read(ctx, r, 1)
}

func newReader(path string) *reader {
	return &reader{path: path, res: &importer.Result{}, byID: map[string]int{}}
}

// read reads the lines of r, numbered from first on, and builds what
// they hold.
func (rd *reader) read(ctx context.Context, r io.Reader, first int) (*importer.Result, error) {
	path := rd.path
	lines, err := importer.SessionLinesFrom(ctx, path, r, first, rd.res, rd.line)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if rd.header == nil {
			return nil, fmt.Errorf("pi: %s: %w", path, err)
		}
		rd.res.Problemf(path, 0, "reading stopped: "+err.Error())
	}
	if rd.header == nil {
		if lines == 0 {
			return rd.res, nil
		}
		return nil, fmt.Errorf("pi: %s: not a pi session file (no session header)", path)
	}
	rd.build()
	return rd.res, nil
}

// line reads one non-blank line.
func (rd *reader) line(n int, b []byte) {
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		rd.res.Problemf(rd.path, n, "not a session entry: "+err.Error())
		return
	}
	rd.res.CheckUTF8(rd.path, n, b)
	if e.Type == "session" {
		if rd.header == nil {
			rd.header = &e
		} else {
			rd.res.Skip("session:duplicate")
		}
		return
	}
	if rd.header == nil && e.Type != "" && rd.res.LostBefore(rd.path, n) {
		// The header is a line that could not be read: the entries
		// after it are the session's still, named by the file.
		rd.header = &entry{Type: "session"}
	}
	if rd.header == nil {
		// pi writes the header first; a file that does not start with
		// one is not pi's.
		if e.Type == "" {
			rd.res.Problemf(rd.path, n, "line without a type")
		} else {
			rd.res.Problemf(rd.path, n, "entry before the session header")
		}
		return
	}
	nd := &node{n: n, e: e, parent: -1, ts: importer.RFC3339Time(e.Timestamp)}
	switch e.Type {
	case "":
		rd.res.Problemf(rd.path, n, "line without a type")
		return
	case "message":
		if e.Message == nil {
			rd.res.Problemf(rd.path, n, "message entry without a message")
			return
		}
		nd.msg, nd.e.Message = e.Message, nil
	case "compaction", "branch_summary", "custom_message", "session_info",
		"model_change", "thinking_level_change", "label", "custom":
	default:
		rd.res.Skip("unknown:" + importer.TypeName(e.Type))
		return
	}
	// Tree links. Version 1 files have no ids: each entry follows the
	// one before it, as pi's own migration makes them.
	i := len(rd.nodes)
	if e.ID != nil && *e.ID != "" {
		nd.id = *e.ID
	} else {
		nd.id = "line" + strconv.Itoa(n)
	}
	switch {
	case e.ID == nil && e.ParentID == nil:
		nd.parent = i - 1
	case e.ParentID != nil && *e.ParentID != "":
		j, ok := rd.byID[*e.ParentID]
		switch {
		case ok:
			nd.parent = j
		case rd.segment:
			// Read by an earlier segment: this part of the tree starts
			// here.
		case rd.res.LostBefore(rd.path, n):
			// Its parent is a line that could not be read: it hangs
			// on the last entry read, in its place (the first is a
			// root).
			nd.parent = i - 1
		default:
			// pi writes a parent before its children: a parent not seen
			// yet is missing, and the entry starts a tree of its own.
			rd.res.Problemf(rd.path, n, "parentId "+importer.Clip(*e.ParentID, 64)+" names no earlier entry")
		}
	}
	if nd.parent >= 0 {
		rd.nodes[nd.parent].kids++
	}
	// A later entry with the same id is the one pi finds by it.
	rd.byID[nd.id] = i
	rd.nodes = append(rd.nodes, nd)
	if e.Type == "session_info" && e.Name != nil {
		rd.title, rd.titled = strings.TrimSpace(*e.Name), true
	}
}

// build makes the session: the path from the root to the last entry (the
// leaf pi resumes at), and a fork for every other leaf.
func (rd *reader) build() {
	h := rd.header
	sid := ""
	if h.ID != nil {
		sid = cleanID(*h.ID)
	}
	if sid == "" {
		// The file's name is <time>_<session id>.jsonl.
		base := strings.TrimSuffix(filepath.Base(rd.path), ".jsonl")
		if _, after, ok := strings.Cut(base, "_"); ok {
			base = after
		}
		sid = cleanID(base)
	}
	if sid == "" {
		sid = "unknown"
	}
	s := &importer.Session{SourceID: sid, Kind: loom.KindMain, Cwd: h.Cwd, Path: rd.path}
	if rd.titled {
		s.Title = rd.title
	}
	s.Origin = h.LoomHandoff
	for _, nd := range rd.nodes {
		if nd.msg == nil && nd.e.Type != "compaction" && nd.e.Type != "branch_summary" && nd.e.Type != "custom_message" {
			rd.res.Skip(importer.TypeName(nd.e.Type))
		}
	}
	if len(rd.nodes) == 0 {
		return
	}
	last := len(rd.nodes) - 1
	mainPath := rd.path2(last)
	msgs := rd.messages(mainPath, true)
	if len(msgs) == 0 {
		return
	}
	fill(s, msgs, h)
	if parent := parentID(h.ParentSession); parent != "" && parent != sid {
		// A copy of another session's entries that goes on on its own:
		// a fork of that session, at the turns it copied.
		s.Kind, s.ParentSourceID = loom.KindFork, parent
		s.ForkTurn = copiedTurns(msgs, importer.RFC3339Time(h.Timestamp))
	}
	rd.res.Sessions = append(rd.res.Sessions, s)

	onMain := make(map[int]bool, len(mainPath))
	for _, i := range mainPath {
		onMain[i] = true
	}
	have := make(map[string]bool, len(msgs))
	for _, m := range msgs {
		have[m.ID] = true
	}
	forks, forkMsgs, dropped := 0, 0, 0
	for i, nd := range rd.nodes {
		if nd.kids > 0 || onMain[i] {
			continue
		}
		own := rd.own(i)
		if !rd.holdsContent(i, own) {
			continue // the branch adds no message (a label, a model change)
		}
		path := rd.path2(i)
		if forks >= maxForks || forkMsgs+len(path) > maxForkMessages {
			dropped++
			continue
		}
		// Counted whether kept or not: building it is the cost bounded.
		forkMsgs += len(path)
		fmsgs := rd.messages(path, false)
		if !slices.ContainsFunc(fmsgs, func(m *loom.Message) bool { return !have[m.ID] }) {
			continue // its entries make no message (blank text)
		}
		forks++
		fk := &importer.Session{
			SourceID:       sid + "@" + cleanID(rd.nodes[own].id),
			Kind:           loom.KindFork,
			ParentSourceID: sid,
			ForkTurn:       importer.ForkTurn(msgs, fmsgs),
			Cwd:            h.Cwd,
			Path:           rd.path,
		}
		fill(fk, fmsgs, h)
		rd.res.Sessions = append(rd.res.Sessions, fk)
	}
	if dropped > 0 {
		rd.res.Problemf(rd.path, 0, strconv.Itoa(dropped)+" abandoned branches not imported: more than the bound of "+
			strconv.Itoa(maxForks)+" branches or "+strconv.Itoa(maxForkMessages)+" messages in them")
	}
}

// holdsContent reports whether the entries from leaf up to own, the
// part of a branch no other branch shares, hold one that makes a
// message. Those parts of different leaves are apart, so that looking
// at every leaf's reads each entry once.
func (rd *reader) holdsContent(leaf, own int) bool {
	for j := leaf; j >= 0; j = rd.nodes[j].parent {
		switch rd.nodes[j].e.Type {
		case "message", "compaction", "branch_summary", "custom_message":
			return true
		}
		if j == own {
			break
		}
	}
	return false
}

// parentID is the session id in the name of the file a session was
// forked from (<time>_<id>.jsonl), "" when there is none.
func parentID(path string) string {
	if strings.TrimSpace(path) == "" {
		return ""
	}
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if _, after, ok := strings.Cut(base, "_"); ok {
		base = after
	}
	return cleanID(base)
}

// copiedTurns is the number of turns a forked session's file holds
// whole from its parent: pi copies the entries with their times, so
// they are those from before the file's header.
func copiedTurns(msgs []*loom.Message, forked time.Time) int {
	if forked.IsZero() {
		return 0
	}
	turns, d := 0, 0
	for d < len(msgs) && !msgs[d].CreatedAt.After(forked) {
		if msgs[d].Role == loom.RoleUser {
			turns++
		}
		d++
	}
	if turns > 0 && d < len(msgs) && msgs[d].Role != loom.RoleUser {
		turns--
	}
	return turns
}

// path2 is the nodes from the root down to i. Parents come before their
// children in the file, so the walk ends.
func (rd *reader) path2(i int) []int {
	var p []int
	for ; i >= 0; i = rd.nodes[i].parent {
		p = append(p, i)
	}
	for a, b := 0, len(p)-1; a < b; a, b = a+1, b-1 {
		p[a], p[b] = p[b], p[a]
	}
	return p
}

// own is the first node of the part of leaf's branch no other branch
// shares: it names the branch, and does not change as the file grows
// (pi appends to the leaf it is on).
func (rd *reader) own(leaf int) int {
	n := leaf
	for p := rd.nodes[n].parent; p >= 0 && rd.nodes[p].kids == 1; p = rd.nodes[n].parent {
		n = p
	}
	return n
}

// fill sets a session's messages, times, model and provider.
func fill(s *importer.Session, msgs []*loom.Message, h *entry) {
	s.Messages = msgs
	s.CreatedAt = importer.RFC3339Time(h.Timestamp)
	for _, m := range msgs {
		if s.CreatedAt.IsZero() || m.CreatedAt.Before(s.CreatedAt) {
			s.CreatedAt = m.CreatedAt
		}
		if m.CreatedAt.After(s.UpdatedAt) {
			s.UpdatedAt = m.CreatedAt
		}
		if m.CompletedAt != nil && m.CompletedAt.After(s.UpdatedAt) {
			s.UpdatedAt = *m.CompletedAt
		}
		if m.Role == loom.RoleAssistant && m.Model != "" {
			s.Model, s.Provider = m.Model, m.Provider
		}
	}
}

// msTime is a time in Unix milliseconds, the zero time when it is none
// or out of range.
func msTime(ms float64) time.Time {
	if ms <= 0 || ms > 1e15 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// cleanID makes a source id fit for a key: one line, bounded.
func cleanID(id string) string {
	id = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return -1
		}
		return r
	}, id)
	return importer.Clip(strings.TrimSpace(id), 128)
}

var errEmpty = errors.New("pi: empty bundle")
