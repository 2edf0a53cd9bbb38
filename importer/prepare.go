package importer

import (
	"context"
	"encoding/json"

	"github.com/loomhq/loom"
)

// NoResult is the error of an imported tool call whose result is not in
// its source file: the tool was killed, or has not written it yet (the
// next import completes the call in place when it does).
const NoResult = "no result in the source file"

// sourceSessionKey is the metadata key under which an agent part keeps
// the source id of a sub-agent session not imported yet (in another
// file), until that session comes in and the part names it.
const sourceSessionKey = "source_session_id"

// prepare completes a message as the importer stores it: agent parts
// name loom sessions (one not imported yet keeps its source id in its
// metadata), a tool call without its result is an error (a stored call
// is completed or error, never running), and usage has its cost and
// model call.
func (im *Importer) prepare(ctx context.Context, f Format, s *Session, m *loom.Message, ids map[string]string) error {
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type == loom.PartAgent && p.SessionID != "" {
			src := p.SessionID
			id, err := im.parent(ctx, f.Tool(), src, ids)
			if err != nil {
				return err
			}
			p.SessionID = id
			if id == "" {
				p.Metadata = withMeta(p.Metadata, sourceSessionKey, src)
			}
		}
		if p.Type == loom.PartTool && p.Status != loom.ToolCompleted && p.Status != loom.ToolError {
			p.Status = loom.ToolError
			if p.Error == "" {
				p.Error = NoResult
			}
		}
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = s.CreatedAt
	}
	if m.Role == loom.RoleAssistant && m.Provider == "" {
		m.Provider = pick(s.Provider, f.Provider())
	}
	u := &m.Usage
	tokens := u.InputTokens + u.OutputTokens + u.ReasoningTokens + u.CacheReadTokens + u.CacheWriteTokens
	if tokens == 0 {
		return nil
	}
	if u.APICalls == 0 && m.Role == loom.RoleAssistant {
		u.APICalls = 1
	}
	if u.CostUSD == 0 && im.Price != nil {
		provider, model := pick(m.Provider, f.Provider()), pick(m.Model, s.Model)
		if c, ok := im.Price(provider, model, *u); ok {
			u.CostUSD = c
		}
	}
	return nil
}

// withMeta is metadata meta (a JSON object, or none) with key set to
// value.
func withMeta(meta json.RawMessage, key, value string) json.RawMessage {
	m := map[string]any{}
	if len(meta) > 0 && json.Unmarshal(meta, &m) != nil {
		m = map[string]any{"metadata": meta}
	}
	m[key] = value
	b, _ := json.Marshal(m)
	return b
}

// linkFromParent makes the agent parts of parent that wait for the
// sub-agent session with source id src (written before it, from another
// file) name its loom id.
//
// The parent's messages are read a page at a time, oldest first: a
// parent of millions of messages (a session file of gigabytes) is never
// held whole.
func (im *Importer) linkFromParent(ctx context.Context, parentKey, parentID, src, id string) error {
	var after int64
	for {
		msgs, err := im.Store.Messages(ctx, parentID, loom.MessageQuery{After: after, Limit: linkPage, Oldest: true})
		if err != nil {
			return err
		}
		for _, m := range msgs {
			after = max(after, m.Seq)
			im.linkParts(parentKey, parentID, src, id, m)
		}
		if len(msgs) < linkPage {
			return nil
		}
	}
}

// linkPage is how many of a parent's messages linkFromParent reads at
// a time (a test makes it small).
var linkPage = 1000

// linkParts makes the agent parts of m, a message of parent, that wait
// for the sub-agent session with source id src name its loom id.
func (im *Importer) linkParts(parentKey, parentID, src, id string, m *loom.Message) {
	for _, p := range m.Parts {
		if p.Type != loom.PartAgent || p.SessionID != "" || len(p.Metadata) == 0 {
			continue
		}
		var meta map[string]any
		if json.Unmarshal(p.Metadata, &meta) != nil || meta[sourceSessionKey] != src {
			continue
		}
		delete(meta, sourceSessionKey)
		p.SessionID, p.Metadata = id, nil
		if len(meta) > 0 {
			p.Metadata, _ = json.Marshal(meta)
		}
		im.pending.change(parentKey, loom.ImportChange{SessionID: parentID, Seq: m.Seq, Part: &p})
	}
}

func pick(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
