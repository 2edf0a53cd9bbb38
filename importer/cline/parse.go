package cline

import (
	"encoding/json"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

// A session is two files in sessions/<id>/: <id>.json, its record (the
// row Cline also keeps in db/sessions.db: id, working directory,
// provider, model, parent, title), and <id>.messages.json, its
// messages in Anthropic's form (a role and content blocks: text,
// thinking, tool_use, tool_result), each reply with its model and token
// metrics. Only the fields the reader uses are declared.

type record struct {
	SessionID       string `json:"session_id"`
	Cwd             string `json:"cwd"`
	Provider        string `json:"provider"`
	Model           string `json:"model"`
	ParentSessionID string `json:"parent_session_id"`
	IsSubagent      bool   `json:"is_subagent"`
	StartedAt       string `json:"started_at"`
	Metadata        struct {
		Title  string `json:"title"`
		Origin struct {
			Version string `json:"version"`
		} `json:"sessionHistoryOrigin"`
		// LoomHandoff records the loom session a handed-off session
		// continues (handoff.OriginField).
		LoomHandoff *handoff.Origin `json:"loomHandoff"`
	} `json:"metadata"`
}

type messagesFile struct {
	SessionID string `json:"sessionId"`
	// Agent is "subagent" in a sub-agent's file (<agent id>.messages.json
	// in its parent's directory, its sessionId <parent>__<agent id>).
	Agent  string `json:"agent"`
	Origin struct {
		Version        string `json:"version"`
		ParentThreadID string `json:"parentThreadId"`
	} `json:"origin"`
	Messages []json.RawMessage `json:"messages"`
}

// compactionFile is <id>.compaction.json, the session's latest
// compaction: the messages cline sends the model in place of the first
// source_message_count of the session's own (those not displayOnly),
// whose summary is a message marked as one. The session's messages
// file keeps every message.
type compactionFile struct {
	UpdatedAt     string `json:"updated_at"`
	SourceCount   int    `json:"source_message_count"`
	SourceLastKey string `json:"source_last_message_key"`
	Messages      []struct {
		Metadata struct {
			Kind        string  `json:"kind"`
			Summary     string  `json:"summary"`
			GeneratedAt float64 `json:"generatedAt"`
		} `json:"metadata"`
	} `json:"messages"`
}

type message struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	TS      float64         `json:"ts"`
	// Metadata marks what cline shows but never sends the model (an
	// error it met: displayOnly, displayRole "error").
	Metadata struct {
		DisplayOnly bool   `json:"displayOnly"`
		DisplayRole string `json:"displayRole"`
	} `json:"metadata"`
	ModelInfo struct {
		ID       string `json:"id"`
		Provider string `json:"provider"`
	} `json:"modelInfo"`
	Metrics *struct {
		Input      float64 `json:"inputTokens"`
		Output     float64 `json:"outputTokens"`
		CacheRead  float64 `json:"cacheReadTokens"`
		CacheWrite float64 `json:"cacheWriteTokens"`
		Cost       float64 `json:"cost"`
	} `json:"metrics"`
}

// userInput is how Cline wraps what the user typed before the model
// sees it: <user_input mode="act">…</user_input>.
var userInput = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^\s*<user_input(?: [^>]*)?>(.*)</user_input>\s*$`)
})

type parser struct {
	path  string
	res   *importer.Result
	calls importer.ToolCalls
	ids   map[string]bool
}

// parse reads a session's messages file (data, at path), its record and
// its compaction (each nil when there is none); fi is the messages
// file's, whose time a message without one takes.
func parse(path string, data, rec, compaction []byte, fi fs.FileInfo) (*importer.Result, error) {
	p := &parser{path: path, res: &importer.Result{}, calls: importer.ToolCalls{}, ids: map[string]bool{}}
	var mf messagesFile
	if err := json.Unmarshal(data, &mf); err != nil {
		p.res.Problemf(path, 0, "not a Cline messages file: "+importer.Excerpt(err.Error()))
		return p.res, nil
	}
	p.res.CheckUTF8(path, 0, data)
	id := strings.TrimSuffix(fileBase(path), messagesSuffix)
	s := &importer.Session{SourceID: importer.Clip(id, 128), Path: path, Version: importer.Clip(mf.Origin.Version, 64)}
	if mf.Agent == "subagent" {
		// A sub-agent's file names its session and its parent's.
		if sid := strings.TrimSpace(mf.SessionID); sid != "" && !strings.ContainsAny(sid, "\n\r") {
			s.SourceID = importer.Clip(sid, 128)
		}
		if parent := strings.TrimSpace(mf.Origin.ParentThreadID); parent != "" && parent != s.SourceID && !strings.ContainsAny(parent, "\n\r") {
			s.Kind, s.ParentSourceID = loom.KindSubagent, importer.Clip(parent, 128)
		}
	}
	if len(rec) > 0 {
		var r record
		if err := json.Unmarshal(rec, &r); err != nil {
			p.res.Problemf(strings.TrimSuffix(path, messagesSuffix)+".json", 0, "not a Cline session record: "+importer.Excerpt(err.Error()))
		} else {
			p.res.CheckUTF8(strings.TrimSuffix(path, messagesSuffix)+".json", 0, rec)
			s.Title, s.Cwd, s.Model, s.Provider = r.Metadata.Title, r.Cwd, r.Model, r.Provider
			s.Origin = r.Metadata.LoomHandoff
			if r.ParentSessionID != "" && r.ParentSessionID != id {
				s.Kind, s.ParentSourceID = loom.KindSubagent, importer.Clip(r.ParentSessionID, 128)
			}
			if s.Version == "" {
				s.Version = importer.Clip(r.Metadata.Origin.Version, 64)
			}
		}
	}
	sum := p.compaction(compaction)
	sent := 0 // the messages before this one that cline sends the model
	if sum != nil && sum.after == 0 {
		s.Messages = append(s.Messages, sum.msg)
	}
	for i, raw := range mf.Messages {
		m, shown := p.message(i, raw)
		if m != nil {
			s.Messages = append(s.Messages, m)
		}
		if !shown {
			sent++
			if sum != nil && sent == sum.after {
				if !lastKeyMatches(raw, sum.key) {
					// The history changed under the compaction (cline
					// no longer applies it).
					p.res.Skip("compaction:stale")
				} else {
					s.Messages = append(s.Messages, sum.msg)
				}
				sum = nil
			}
		}
	}
	if sum != nil && sum.after > 0 {
		p.res.Skip("compaction:stale")
	}
	if len(s.Messages) == 0 {
		p.res.Skip("empty-session")
		return p.res, nil
	}
	// A message without a time of its own takes the next one's.
	next := fi.ModTime().UTC()
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.CreatedAt.IsZero() {
			m.CreatedAt = next
		} else {
			next = m.CreatedAt
		}
		m.CompletedAt = &m.CreatedAt
	}
	s.CreatedAt, s.UpdatedAt = s.Messages[0].CreatedAt, s.Messages[len(s.Messages)-1].CreatedAt
	p.res.Sessions = []*importer.Session{s}
	return p.res, nil
}

// message reads the i-th message; shown reports that it is one cline
// shows and never sends the model (displayOnly).
func (p *parser) message(i int, raw json.RawMessage) (msg *loom.Message, shown bool) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		p.res.Problemf(p.path, 0, "message "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
		return nil, false
	}
	shown = m.Metadata.DisplayOnly
	blocks, ok := importer.ContentBlocks(m.Content)
	if !ok {
		p.res.Problemf(p.path, 0, "message "+strconv.Itoa(i)+": content is neither text nor blocks")
		return nil, shown
	}
	id := importer.Clip(strings.TrimSpace(m.ID), 128)
	if id == "" || p.ids[id] {
		id = "message-" + strconv.Itoa(i)
	}
	p.ids[id] = true
	msg = &loom.Message{ID: id, CreatedAt: millis(m.TS)}
	switch {
	case shown:
		// Shown to the user, never sent to the model: a system message.
		msg.Role = loom.RoleSystem
	case m.Role == "user":
		msg.Role = loom.RoleUser
	case m.Role == "assistant":
		msg.Role = loom.RoleAssistant
		msg.Model, msg.Provider = importer.Clip(m.ModelInfo.ID, 256), importer.Clip(m.ModelInfo.Provider, 64)
		if u := m.Metrics; u != nil {
			// Cline's input counts the cached tokens (as the OpenAI
			// Chat Completions API does); loom's does not.
			msg.Usage = loom.Usage{InputTokens: max(0, importer.Tokens(u.Input)-importer.Tokens(u.CacheRead)), OutputTokens: importer.Tokens(u.Output),
				CacheReadTokens: importer.Tokens(u.CacheRead), CacheWriteTokens: importer.Tokens(u.CacheWrite), CostUSD: importer.Dollars(u.Cost)}
		}
	default:
		p.res.Skip("role:" + importer.TypeName(m.Role))
		return nil, shown
	}
	p.calls.AddBlocks(p.res, msg, blocks, msg.CreatedAt, func(reason string) {
		p.res.Problemf(p.path, 0, "message "+strconv.Itoa(i)+": "+reason)
	})
	if msg.Role == loom.RoleUser {
		for k := range msg.Parts {
			if sub := userInput().FindStringSubmatch(msg.Parts[k].Text); msg.Parts[k].Type == loom.PartText && sub != nil {
				msg.Parts[k].Text = sub[1]
			}
		}
	}
	if len(msg.Parts) == 0 {
		if msg.Role != loom.RoleUser {
			p.res.Skip("empty-message")
		}
		// A user message of tool results only: they went to their calls.
		return nil, shown
	}
	return msg, shown
}

// summary is a compaction's summary message, to stand after the first
// after messages cline sends the model, the last of them keyed key.
type summary struct {
	msg   *loom.Message
	after int
	key   string
}

// compaction reads a session's compaction file (nil: none) for its
// summary; nil when it holds none.
func (p *parser) compaction(data []byte) *summary {
	if len(data) == 0 {
		return nil
	}
	file := strings.TrimSuffix(p.path, messagesSuffix) + compactionSuffix
	var c compactionFile
	if err := json.Unmarshal(data, &c); err != nil {
		p.res.Problemf(file, 0, "not a Cline compaction: "+importer.Excerpt(err.Error()))
		return nil
	}
	p.res.CheckUTF8(file, 0, data)
	for _, m := range c.Messages {
		text := strings.TrimSpace(m.Metadata.Summary)
		if m.Metadata.Kind != "compaction_summary" || text == "" {
			continue
		}
		if c.SourceCount < 0 {
			break
		}
		at := millis(m.Metadata.GeneratedAt)
		if at.IsZero() {
			at, _ = time.Parse(time.RFC3339Nano, c.UpdatedAt)
			at = at.UTC()
		}
		key := importer.Clip(strings.TrimSpace(c.SourceLastKey), 256)
		id := "compaction@" + strconv.Itoa(c.SourceCount)
		if k, ok := strings.CutPrefix(key, "id:"); ok {
			id = importer.Clip("compaction@"+k, 128)
		}
		for p.ids[id] {
			id += "+"
		}
		p.ids[id] = true
		return &summary{after: c.SourceCount, key: key, msg: &loom.Message{ID: id, Role: loom.RoleSummary, CreatedAt: at,
			Parts: []loom.Part{{ID: id + "/0", Type: loom.PartText, Text: text}}, Usage: loom.Usage{Compactions: 1}}}
	}
	p.res.Skip("compaction:no-summary")
	return nil
}

// lastKeyMatches reports whether raw, a message cline sends the model,
// is the one key names by its id ("id:…"); a key of another form (or
// none) is taken on trust.
func lastKeyMatches(raw json.RawMessage, key string) bool {
	if !strings.HasPrefix(key, "id:") {
		return true
	}
	var m struct {
		ID string `json:"id"`
	}
	return json.Unmarshal(raw, &m) == nil && "id:"+m.ID == key
}

// linkSubagents adds to a session's replies an agent part for each
// sub-agent its spawn_agent calls ran: the sub-agent whose first prompt
// is the call's task, in order. Sessions[0] is the parent.
func linkSubagents(sessions []*importer.Session) {
	if len(sessions) < 2 {
		return
	}
	used := map[*importer.Session]bool{}
	for _, m := range sessions[0].Messages {
		for _, call := range m.Parts {
			if call.Type != loom.PartTool || call.Name != "spawn_agent" {
				continue
			}
			var in struct {
				Task string `json:"task"`
			}
			if json.Unmarshal(call.Input, &in) != nil || strings.TrimSpace(in.Task) == "" {
				continue
			}
			for _, sub := range sessions[1:] {
				if !used[sub] && firstPrompt(sub) == strings.TrimSpace(in.Task) {
					used[sub] = true
					importer.AddAgentPart(m, call, sub.SourceID)
					break
				}
			}
		}
	}
}

// firstPrompt is the text of a session's first user message.
func firstPrompt(s *importer.Session) string {
	for _, m := range s.Messages {
		if m.Role == loom.RoleUser {
			return strings.TrimSpace(m.Text())
		}
	}
	return ""
}

func fileBase(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}

// millis is a time in milliseconds since the epoch; the zero time for
// anything out of range.
func millis(f float64) time.Time {
	if !(f > 0 && f < 95_617_584_000_000) {
		return time.Time{}
	}
	return time.UnixMilli(int64(f)).UTC()
}
