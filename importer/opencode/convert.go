package opencode

import (
	"bytes"
	"cmp"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// source is one session as read from either store, before mapping: its
// info, and its messages each with its parts. Ids come from file names
// or key columns, never from the JSON, as opencode itself does when it
// moves the tree into the database.
type source struct {
	ID   string
	File string // the session file or the database, for Session.Path
	Info sessionInfo
	// Messages in any order; mapping sorts them.
	Messages []sourceMessage
}

type sourceMessage struct {
	ID   string
	File string // where a problem with it is reported
	Info messageInfo
	// Parts in any order; mapping sorts them by id, which opencode
	// makes ascending in time.
	Parts []sourcePart
}

type sourcePart struct {
	ID   string
	File string
	Info partInfo
}

// Part types opencode writes that loom keeps nothing of: file snapshots
// and patches (the working tree's state, not the conversation), the
// marker asking for a compaction (the summary that follows is kept), an
// @agent mention and a command run as a sub-task (the task tool call
// that follows them is kept, with its child session), and a provider
// retry.
var bookkeeping = map[string]bool{
	"snapshot":   true,
	"patch":      true,
	"compaction": true,
	"agent":      true,
	"subtask":    true,
	"retry":      true,
}

// defaultTitle matches the title opencode gives a session before it has
// named it.
var defaultTitle = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(new|child) session - \d{4}-\d{2}-\d{2}T[0-9:.]+Z$`)
})

// syntheticSuffix names the system message that holds what opencode
// added to a user message: a file's content, an instruction to the
// model.
const syntheticSuffix = "/synthetic"

// session maps one source session to the importer's terms.
func (src *source) session(res *importer.Result) *importer.Session {
	info := &src.Info
	s := &importer.Session{
		SourceID:  src.ID,
		Kind:      loom.KindMain,
		Cwd:       info.Directory,
		Version:   info.Version,
		Path:      src.File,
		CreatedAt: millis(info.Time.Created),
		UpdatedAt: millis(info.Time.Updated),
		Origin:    info.Metadata.LoomHandoff,
	}
	if !defaultTitle().MatchString(info.Title) {
		s.Title = info.Title
	}
	if info.ParentID != "" && info.ParentID != src.ID {
		s.Kind, s.ParentSourceID = loom.KindSubagent, info.ParentID
	}
	slices.SortStableFunc(src.Messages, func(a, b sourceMessage) int {
		return cmp.Or(cmp.Compare(a.Info.Time.Created, b.Info.Time.Created), cmp.Compare(a.ID, b.ID))
	})
	for i := range src.Messages {
		m := &src.Messages[i]
		s.Messages = append(s.Messages, m.messages(res)...)
		if m.Info.Role == "assistant" {
			if s.Cwd == "" {
				s.Cwd = m.Info.Path.Cwd
			}
			if m.Info.ModelID != "" {
				s.Model, s.Provider = m.Info.ModelID, m.Info.ProviderID
			}
		}
	}
	if s.CreatedAt.IsZero() && len(s.Messages) > 0 {
		s.CreatedAt = s.Messages[0].CreatedAt
	}
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = s.CreatedAt
	}
	return s
}

// messages maps one source message: none when it holds nothing to keep,
// two when a user message carries text opencode added to it.
func (m *sourceMessage) messages(res *importer.Result) []*loom.Message {
	slices.SortStableFunc(m.Parts, func(a, b sourcePart) int { return cmp.Compare(a.ID, b.ID) })
	switch m.Info.Role {
	case "user":
		return m.user(res)
	case "assistant":
		return []*loom.Message{m.assistant(res)}
	}
	res.Skip("unknown:" + m.Info.Role)
	for range m.Parts {
		res.Skip("orphan-part")
	}
	return nil
}

// user maps a user message. Text parts opencode marks synthetic (a read
// file's content, "call the task tool with subagent: …", "Continue if
// you have next steps") are not what the user typed: they go into a
// system message of their own, after the user's.
func (m *sourceMessage) user(res *importer.Result) []*loom.Message {
	var typed, added []loom.Part
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Info.Type == "text" && p.Info.Synthetic {
			added = append(added, loom.Part{ID: p.ID, Type: loom.PartText, Text: p.Info.Text})
			continue
		}
		typed = append(typed, p.parts(res)...)
	}
	created := millis(m.Info.Time.Created)
	var out []*loom.Message
	if len(typed) > 0 {
		out = append(out, &loom.Message{ID: m.ID, Role: loom.RoleUser, Parts: typed, CreatedAt: created})
	}
	if len(added) > 0 {
		id := m.ID
		if len(typed) > 0 {
			id += syntheticSuffix
		}
		out = append(out, &loom.Message{ID: id, Role: loom.RoleSystem, Parts: added, CreatedAt: created})
	}
	if len(out) == 0 {
		// A compaction request or a sub-task command: its parts were
		// counted as skipped.
		res.Skip("empty-user-message")
	}
	return out
}

// assistant maps an assistant message; the one opencode marks as a
// summary holds a compaction's result.
func (m *sourceMessage) assistant(res *importer.Result) *loom.Message {
	msg := &loom.Message{
		ID:          m.ID,
		Role:        loom.RoleAssistant,
		Model:       m.Info.ModelID,
		Provider:    m.Info.ProviderID,
		Error:       messageError(m.Info.Error),
		CreatedAt:   millis(m.Info.Time.Created),
		CompletedAt: millisPtr(m.Info.Time.Completed),
	}
	var steps loom.Usage
	for i := range m.Parts {
		for _, p := range m.Parts[i].parts(res) {
			if p.Usage != nil {
				steps.Add(*p.Usage)
			}
			msg.Parts = append(msg.Parts, p)
		}
	}
	// The message's tokens are those of its last step only (opencode
	// overwrites them at each step); the steps' parts hold them all.
	if steps.APICalls > 0 {
		msg.Usage = steps
	} else if m.Info.Tokens != nil {
		msg.Usage = usage(m.Info.Tokens, m.Info.Cost)
		if !msg.Usage.IsZero() {
			msg.Usage.APICalls = 1
		}
	}
	if bytes.Equal(bytes.TrimSpace(m.Info.Summary), []byte("true")) {
		msg.Role = loom.RoleSummary
		msg.Usage.Compactions = 1
	}
	return msg
}

// parts maps one source part to loom's: none for bookkeeping, two for a
// task tool call (the call and the agent part naming its child session)
// and more for a tool's attached files.
func (p *sourcePart) parts(res *importer.Result) []loom.Part {
	in := &p.Info
	switch in.Type {
	case "text":
		return []loom.Part{{ID: p.ID, Type: loom.PartText, Text: in.Text}}
	case "reasoning":
		if in.Text == "" {
			// Reasoning a provider keeps encrypted: nothing in clear.
			res.Skip("empty-reasoning")
			return nil
		}
		return []loom.Part{{ID: p.ID, Type: loom.PartReasoning, Text: in.Text}}
	case "tool":
		return p.tool(res)
	case "file":
		return []loom.Part{filePart(p.ID, in)}
	case "step-start":
		return []loom.Part{{ID: p.ID, Type: loom.PartStepStart}}
	case "step-finish":
		u := loom.Usage{APICalls: 1}
		if in.Tokens != nil {
			u = usage(in.Tokens, in.Cost)
			u.APICalls = 1
		}
		return []loom.Part{{ID: p.ID, Type: loom.PartStepFinish, Usage: &u}}
	case "":
		res.Problemf(p.File, 0, "part "+p.ID+" has no type")
		return nil
	}
	if bookkeeping[in.Type] {
		res.Skip(in.Type)
	} else {
		res.Skip("unknown:" + in.Type)
	}
	return nil
}

// tool maps a tool part: call and result are already one record in
// opencode.
func (p *sourcePart) tool(res *importer.Result) []loom.Part {
	in := &p.Info
	if in.Tool == "" {
		res.Problemf(p.File, 0, "tool part "+p.ID+" has no tool name")
		return nil
	}
	st := in.State
	if st == nil {
		st = &toolState{Status: loom.ToolPending}
	}
	part := loom.Part{
		ID:        p.ID,
		Type:      loom.PartTool,
		CallID:    cmp.Or(in.CallID, p.ID),
		Name:      in.Tool,
		Input:     object(st.Input),
		Title:     st.Title,
		Metadata:  value(st.Metadata),
		StartedAt: millisPtr(st.Time.Start),
	}
	switch st.Status {
	case loom.ToolCompleted:
		part.Status = loom.ToolCompleted
		part.Output = text(st.Output)
		part.EndedAt = millisPtr(st.Time.End)
	case loom.ToolError:
		part.Status = loom.ToolError
		part.Error = cmp.Or(loom.JSONText(st.Error), "error")
		part.EndedAt = millisPtr(st.Time.End)
	case loom.ToolPending, loom.ToolRunning:
		part.Status = st.Status
	default:
		res.Problemf(p.File, 0, "tool part "+p.ID+" has unknown status "+strconv.Quote(st.Status))
		part.Status = loom.ToolRunning
	}
	out := []loom.Part{part}
	if child := childSession(in.Tool, st.Metadata); child != "" {
		out = append(out, loom.Part{
			ID:        p.ID + "/agent",
			Type:      loom.PartAgent,
			Name:      cmp.Or(subagentType(st.Input), in.Tool),
			SessionID: child,
		})
	}
	for i := range st.Attachments {
		out = append(out, filePart(p.ID+"/"+strconv.Itoa(i), &st.Attachments[i]))
	}
	return out
}

// childSession is the session a task tool call ran its sub-agent in:
// opencode records it in the call's metadata as soon as the child
// exists.
func childSession(tool string, metadata json.RawMessage) string {
	if tool != "task" || len(metadata) == 0 {
		return ""
	}
	var md struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(metadata, &md) != nil {
		return ""
	}
	return md.SessionID
}

// subagentType is the agent a task tool call asked for.
func subagentType(input json.RawMessage) string {
	var in struct {
		SubagentType string `json:"subagent_type"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	return in.SubagentType
}

// filePart maps a file part: an attached file, a symbol, an image.
func filePart(id string, in *partInfo) loom.Part {
	p := loom.Part{ID: id, Type: loom.PartFile, Mime: in.Mime, Filename: in.Filename, URL: in.URL}
	if src := in.Source; src != nil {
		p.Source = &loom.FileSource{
			Type:  src.Type,
			Path:  cmp.Or(src.Path, src.URI),
			Text:  src.Text.Value,
			Start: int(importer.Tokens(src.Text.Start)),
			End:   int(importer.Tokens(src.Text.End)),
		}
	}
	return p
}

// usage maps opencode's token counts and cost. opencode's input
// excludes cached tokens, as loom's does; its output excludes the
// reasoning tokens it counts apart, which loom's includes. A fork of an
// earlier opencode (NanoCode 1.2.28) counts them in its output as well
// as apart: its total is then the sum without them, and its output is
// taken as it is.
func usage(t *tokens, cost float64) loom.Usage {
	out := importer.Tokens(t.Output) + importer.Tokens(t.Reasoning)
	if t.Reasoning > 0 && t.Total == t.Input+t.Output+t.Cache.Read+t.Cache.Write {
		out = importer.Tokens(t.Output)
	}
	return loom.Usage{
		InputTokens:      importer.Tokens(t.Input),
		OutputTokens:     out,
		CostUSD:          importer.Dollars(cost),
		ReasoningTokens:  importer.Tokens(t.Reasoning),
		CacheReadTokens:  importer.Tokens(t.Cache.Read),
		CacheWriteTokens: importer.Tokens(t.Cache.Write),
	}
}

// messageError maps an assistant message's error, which opencode stores
// as {name, data: {message}}.
func messageError(raw json.RawMessage) *loom.MessageError {
	raw = value(raw)
	if raw == nil {
		return nil
	}
	var e struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return &loom.MessageError{Message: loom.JSONText(raw)}
	}
	return &loom.MessageError{Message: cmp.Or(e.Data.Message, e.Message, e.Name, string(raw)), Type: e.Name}
}

// value is raw without insignificant space (the tree's files are
// indented, the database's columns are not), or nil when it is absent
// or null.
func value(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// object is a tool's input: {} when there is none.
func object(raw json.RawMessage) json.RawMessage {
	if raw = value(raw); raw == nil {
		return json.RawMessage(`{}`)
	}
	return raw
}

// text is a tool's output as a JSON string: opencode's output is one
// already; anything else is turned into one.
func text(raw json.RawMessage) json.RawMessage {
	raw = value(raw)
	if raw == nil || raw[0] == '"' {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}
