package qwen

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

// record is one line of a chat file. Only the fields loom reads are
// decoded.
type record struct {
	UUID       string  `json:"uuid"`
	ParentUUID *string `json:"parentUuid"`
	SessionID  string  `json:"sessionId"`
	Timestamp  string  `json:"timestamp"`
	Type       string  `json:"type"`
	Subtype    string  `json:"subtype"`
	Cwd        string  `json:"cwd"`
	Version    string  `json:"version"`
	GitBranch  string  `json:"gitBranch"`
	Model      string  `json:"model"`
	AgentID    string  `json:"agentId"`
	Message    *struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	} `json:"message"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	ToolCallResult *toolCallResult `json:"toolCallResult"`
	SystemPayload  json.RawMessage `json:"systemPayload"`
	// LoomHandoff is the loom session a handed-off chat continues
	// (handoff.OriginField), in its first record.
	LoomHandoff *handoff.Origin `json:"loomHandoff"`
}

// part is a Gemini API part, which Qwen Code records whatever API it
// speaks.
type part struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	FunctionCall     *call   `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FileData *struct {
		MimeType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData"`
}

type call struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type usageMetadata struct {
	Prompt     int64 `json:"promptTokenCount"`
	Candidates int64 `json:"candidatesTokenCount"`
	Thoughts   int64 `json:"thoughtsTokenCount"`
	Cached     int64 `json:"cachedContentTokenCount"`
}

type toolCallResult struct {
	CallID string `json:"callId"`
	Status string `json:"status"`
}

// node is a record kept between reading and building.
type node struct {
	n      int // line
	r      *record
	parent int // index of the parent node, -1 for a root
	ts     time.Time
}

// chat is one chat file read into its records.
type chat struct {
	path  string
	res   *importer.Result
	nodes []*node
	byID  map[string]int
}

// readChat reads a chat file (agentID "") or a sub-agent's transcript
// into a session without its links; nil when it holds no message.
func readChat(ctx context.Context, res *importer.Result, path string, r io.Reader, agentID string) (*importer.Session, error) {
	c := &chat{path: path, res: res, byID: map[string]int{}}
	lines, kept, err := importer.RecordLines(ctx, Tool, path, r, res, c.line)
	if err != nil {
		return nil, err
	}
	if lines > 0 && kept == 0 {
		return nil, fmt.Errorf("qwen: %s: not a Qwen Code chat file (no record with a uuid and a type)", path)
	}
	return c.build(agentID), nil
}

// line reads one non-blank line and reports whether it is a record.
func (c *chat) line(n int, b []byte) bool {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		c.res.Problemf(c.path, n, "not a chat record: "+err.Error())
		return false
	}
	c.res.CheckUTF8(c.path, n, b)
	if r.UUID == "" || r.Type == "" {
		c.res.Problemf(c.path, n, "a record without a uuid or a type")
		return false
	}
	nd := &node{n: n, r: &r, parent: -1, ts: importer.ISOTime(r.Timestamp)}
	if r.ParentUUID != nil && *r.ParentUUID != "" {
		j, ok := c.byID[*r.ParentUUID]
		switch {
		case ok:
			nd.parent = j
		case c.res.LostBefore(c.path, n):
			// Its parent is a line that could not be read: it hangs
			// on the last record read, in its place, and what came
			// before it stays on the path.
			nd.parent = len(c.nodes) - 1
		default:
			c.res.Problemf(c.path, n, "parentUuid "+importer.Clip(*r.ParentUUID, 64)+" names no earlier record")
		}
	}
	if _, dup := c.byID[r.UUID]; dup {
		c.res.Problemf(c.path, n, "uuid "+importer.Clip(r.UUID, 64)+" repeated")
		r.UUID += "#" + strconv.Itoa(n)
	}
	c.byID[r.UUID] = len(c.nodes)
	c.nodes = append(c.nodes, nd)
	return true
}

// build makes the session of the path from the root to the last record,
// which Qwen Code resumes at; records off it (a turn rewound away) are
// counted as skipped.
func (c *chat) build(agentID string) *importer.Session {
	if len(c.nodes) == 0 {
		return nil
	}
	var path []*node
	on := make([]bool, len(c.nodes))
	for i := len(c.nodes) - 1; i >= 0; i = c.nodes[i].parent {
		path = append(path, c.nodes[i])
		on[i] = true
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	for i, nd := range c.nodes {
		if !on[i] {
			c.res.Skip("rewound:" + importer.TypeName(nd.r.Type))
		}
	}
	first := c.nodes[0].r
	sid := importer.LineID(first.SessionID)
	if sid == "" {
		sid = importer.LineID(strings.TrimSuffix(filepath.Base(c.path), ".jsonl"))
	}
	if sid == "" {
		sid = "unknown"
	}
	s := &importer.Session{SourceID: sid, Kind: loom.KindMain, Path: c.path, Cwd: first.Cwd, GitBranch: first.GitBranch, Version: first.Version,
		Origin: first.LoomHandoff}
	conv := &converter{chat: c, calls: map[string]*loom.Part{}}
	for _, nd := range path {
		conv.record(nd, s)
	}
	conv.finish()
	if len(conv.msgs) == 0 {
		return nil
	}
	s.Messages = conv.msgs
	for _, m := range s.Messages {
		if s.CreatedAt.IsZero() || m.CreatedAt.Before(s.CreatedAt) {
			s.CreatedAt = m.CreatedAt
		}
		if m.CreatedAt.After(s.UpdatedAt) {
			s.UpdatedAt = m.CreatedAt
		}
		if m.Role == loom.RoleAssistant && m.Model != "" {
			s.Model = m.Model
		}
	}
	if r := path[len(path)-1].r; r.Version != "" {
		s.Version = r.Version
	}
	if agentID != "" {
		s.Kind, s.ParentSourceID, s.SourceID = loom.KindSubagent, sid, sid+"/"+importer.LineID(agentID)
	}
	return s
}

// meta is what loom reads of a sub-agent's .meta.json.
type meta struct {
	AgentID     string `json:"agentId"`
	AgentType   string `json:"agentType"`
	Description string `json:"description"`
	ToolUseID   string `json:"toolUseId"`
}

// maxMeta bounds a sub-agent's metadata file.
const maxMeta = 1 << 20

func readMeta(res *importer.Result, path string) (meta, bool) {
	data, err := importer.ReadSmall(path, maxMeta)
	if err != nil {
		res.Problemf(path, 0, err.Error())
		return meta{}, false
	}
	var m meta
	if err := json.Unmarshal(data, &m); err != nil {
		res.Problemf(path, 0, "not a sub-agent's metadata: "+err.Error())
		return meta{}, false
	}
	res.CheckUTF8(path, 0, data)
	return m, true
}

// readSubagent reads a sub-agent's transcript and links it from the tool
// call in parent that ran it (its metadata's toolUseId); a transcript
// no call names is linked from the session alone.
func readSubagent(ctx context.Context, res *importer.Result, path string, parent *importer.Session, m meta) (*importer.Session, error) {
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	agentID := m.AgentID
	if agentID == "" {
		agentID = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "agent-"), ".jsonl")
	}
	s, err := readChat(ctx, res, path, f, agentID)
	if err != nil || s == nil {
		return nil, err
	}
	s.ParentSourceID = parent.SourceID
	s.SourceID = parent.SourceID + "/" + importer.LineID(agentID)
	if m.Description != "" {
		s.Title = m.Description
	}
	name := m.AgentType
	if name == "" {
		name = "agent"
	}
	for _, msg := range parent.Messages {
		for i, p := range msg.Parts {
			if p.Type == loom.PartTool && m.ToolUseID != "" && p.CallID == m.ToolUseID {
				agent := loom.Part{ID: p.ID + "/agent", Type: loom.PartAgent, Name: name, SessionID: s.SourceID}
				msg.Parts = append(msg.Parts[:i+1], append([]loom.Part{agent}, msg.Parts[i+1:]...)...)
				return s, nil
			}
		}
	}
	return s, nil
}
