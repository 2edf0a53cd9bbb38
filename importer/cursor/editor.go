package cursor

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// The editor keeps its agent's chats (Composer) in the cursorDiskKV
// table of state.vscdb in its global storage: a key composerData:<id>
// holds a chat's JSON, whose fullConversationHeadersOnly lists its
// messages ("bubbles") in order, each kept at bubbleId:<chat>:<bubble>;
// older versions kept the bubbles inline, in the chat's conversation.

// maxValue bounds one value: a larger one is a problem, not read.
const maxValue = 64 << 20

type composer struct {
	ID            string      `json:"composerId"`
	Name          string      `json:"name"`
	CreatedAt     json.Number `json:"createdAt"`
	LastUpdatedAt json.Number `json:"lastUpdatedAt"`
	Headers       []struct {
		BubbleID string `json:"bubbleId"`
		Type     int    `json:"type"`
	} `json:"fullConversationHeadersOnly"`
	Conversation []json.RawMessage `json:"conversation"`
	ModelConfig  struct {
		ModelName string `json:"modelName"`
	} `json:"modelConfig"`
	SubComposerIDs []string `json:"subComposerIds"`
}

type bubble struct {
	BubbleID string `json:"bubbleId"`
	Type     int    `json:"type"`
	Text     string `json:"text"`
	// CreatedAt is a time in RFC 3339 (milliseconds in some versions).
	CreatedAt json.RawMessage `json:"createdAt"`
	Thinking  *struct {
		Text      string `json:"text"`
		Signature string `json:"signature"`
	} `json:"thinking"`
	ToolFormerData *struct {
		Name       string `json:"name"`
		ToolCallID string `json:"toolCallId"`
		Status     string `json:"status"`
		RawArgs    string `json:"rawArgs"`
		Params     string `json:"params"`
		Result     string `json:"result"`
	} `json:"toolFormerData"`
	TokenCount struct {
		InputTokens  int64 `json:"inputTokens"`
		OutputTokens int64 `json:"outputTokens"`
	} `json:"tokenCount"`
	ModelInfo struct {
		ModelName string `json:"modelName"`
	} `json:"modelInfo"`
	TimingInfo struct {
		ClientEndTime float64 `json:"clientEndTime"`
	} `json:"timingInfo"`
	WorkspaceURIs []string `json:"workspaceUris"`
}

// readEditor reads every chat of the editor's database.
func readEditor(ctx context.Context, path string, wal bool) (*importer.Result, error) {
	db, err := importer.OpenSQLiteTables(ctx, Tool, "Cursor", path, wal, "cursorDiskKV")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &editorReader{db: db, path: path, res: &importer.Result{}}
	chats, err := r.composers(ctx)
	if err != nil {
		return nil, err
	}
	parents := map[string]string{}
	for _, c := range chats {
		for _, sub := range c.SubComposerIDs {
			parents[sub] = c.ID
		}
	}
	var mains, subs []*importer.Session
	for _, c := range chats {
		s, err := r.session(ctx, c)
		if err != nil {
			return nil, err
		}
		switch {
		case s == nil:
		case parents[c.ID] != "" && parents[c.ID] != c.ID:
			s.Kind, s.ParentSourceID = loom.KindSubagent, parents[c.ID]
			subs = append(subs, s)
		default:
			mains = append(mains, s)
		}
	}
	r.res.Sessions = append(mains, subs...)
	return r.res, nil
}

type editorReader struct {
	db   *sql.DB
	path string
	res  *importer.Result
}

func (r *editorReader) fail(err error) error { return importer.SQLiteError(Tool, r.path, err) }

// values runs a query of keys and values, keys between from and to.
// checkUTF8 makes a value that decoded but holds bytes that are not
// UTF-8 (kept as U+FFFD) one problem, naming its key.
func (r *editorReader) checkUTF8(key string, value []byte) {
	if !utf8.Valid(value) {
		r.res.Problemf(r.path, 0, importer.Clip(key, 120)+": "+importer.NotUTF8)
	}
}

func (r *editorReader) values(ctx context.Context, from, to string, fn func(key string, value []byte)) error {
	rows, err := r.db.QueryContext(ctx, `SELECT key, CASE WHEN octet_length(value) > ? THEN NULL ELSE value END, octet_length(value)
		FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY key`, maxValue, from, to)
	if err != nil {
		return r.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, 3)
		if err != nil {
			return r.fail(err)
		}
		key := importer.SQLiteString(v[0])
		if importer.SQLiteFloat(v[2]) > maxValue {
			r.res.Problemf(r.path, 0, importer.Clip(key, 120)+": larger than "+strconv.Itoa(maxValue>>20)+" MiB")
			continue
		}
		fn(key, []byte(importer.SQLiteString(v[1])))
	}
	if err := rows.Err(); err != nil {
		return r.fail(err)
	}
	return nil
}

func (r *editorReader) composers(ctx context.Context) ([]*composer, error) {
	var out []*composer
	err := r.values(ctx, "composerData:", "composerData;", func(key string, value []byte) {
		var c composer
		if err := json.Unmarshal(value, &c); err != nil {
			r.res.Problemf(r.path, 0, importer.Clip(key, 120)+": "+importer.Excerpt(err.Error()))
			return
		}
		r.checkUTF8(key, value)
		c.ID = cmp.Or(c.ID, strings.TrimPrefix(key, "composerData:"))
		if c.ID == "" || strings.ContainsAny(c.ID, "\r\n:") {
			r.res.Problemf(r.path, 0, "a chat without a usable id")
			return
		}
		out = append(out, &c)
	})
	return out, err
}

// session reads one chat's messages: nil when it has none.
func (r *editorReader) session(ctx context.Context, c *composer) (*importer.Session, error) {
	created := msTime(c.CreatedAt)
	s := &importer.Session{
		SourceID:  c.ID,
		Kind:      loom.KindMain,
		Title:     strings.TrimSpace(c.Name),
		Path:      r.path,
		CreatedAt: created,
		UpdatedAt: msTime(c.LastUpdatedAt),
	}
	model := c.ModelConfig.ModelName
	if model == "default" {
		model = ""
	}
	var bubbles []bubble
	if len(c.Headers) > 0 {
		prefix := "bubbleId:" + c.ID + ":"
		byID := map[string]bubble{}
		err := r.values(ctx, prefix, "bubbleId:"+c.ID+";", func(key string, value []byte) {
			var b bubble
			if err := json.Unmarshal(value, &b); err != nil {
				r.res.Problemf(r.path, 0, importer.Clip(key, 120)+": "+importer.Excerpt(err.Error()))
				return
			}
			r.checkUTF8(key, value)
			byID[strings.TrimPrefix(key, prefix)] = b
		})
		if err != nil {
			return nil, err
		}
		for _, h := range c.Headers {
			b, ok := byID[h.BubbleID]
			if !ok {
				r.res.Skip("missing-bubble")
				continue
			}
			b.BubbleID = h.BubbleID
			b.Type = cmp.Or(b.Type, h.Type)
			bubbles = append(bubbles, b)
		}
	} else {
		for i, raw := range c.Conversation {
			var b bubble
			if err := json.Unmarshal(raw, &b); err != nil {
				r.res.Problemf(r.path, 0, "chat "+c.ID+": bubble "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
				continue
			}
			bubbles = append(bubbles, b)
		}
	}
	seen := map[string]bool{}
	last := created
	for _, b := range bubbles {
		if b.BubbleID == "" || strings.ContainsAny(b.BubbleID, "\r\n/") || seen[b.BubbleID] {
			r.res.Skip("bubble-without-id")
			continue
		}
		seen[b.BubbleID] = true
		m := bubbleMessage(r.res, b, model, last)
		if m == nil {
			continue
		}
		last = m.CreatedAt
		if s.Cwd == "" {
			s.Cwd = workspace(b.WorkspaceURIs)
		}
		s.Messages = append(s.Messages, m)
	}
	if len(s.Messages) == 0 {
		r.res.Skip("empty-chat")
		return nil, nil
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = s.Messages[0].CreatedAt
	}
	if end := *s.Messages[len(s.Messages)-1].CompletedAt; end.After(s.UpdatedAt) {
		s.UpdatedAt = end
	}
	return s, nil
}

// bubbleMessage maps one bubble: type 1 is the user's, 2 the agent's
// (text, thinking, one tool call, usage). before is the time of the
// message before, for a bubble without one of its own.
func bubbleMessage(res *importer.Result, b bubble, model string, before time.Time) *loom.Message {
	m := &loom.Message{ID: b.BubbleID, CreatedAt: cmp.Or(bubbleTime(b.CreatedAt), before)}
	id := func() string { return m.ID + "/" + strconv.Itoa(len(m.Parts)) }
	switch b.Type {
	case 1:
		m.Role = loom.RoleUser
	case 2:
		m.Role = loom.RoleAssistant
		m.Model = cmp.Or(b.ModelInfo.ModelName, model)
		if m.Model == "default" {
			m.Model = ""
		}
		m.Usage = loom.Usage{InputTokens: max(b.TokenCount.InputTokens, 0), OutputTokens: max(b.TokenCount.OutputTokens, 0)}
	default:
		res.Skip("unknown:bubble-type-" + strconv.Itoa(b.Type))
		return nil
	}
	if b.Thinking != nil && b.Thinking.Text != "" && m.Role == loom.RoleAssistant {
		p := loom.Part{ID: id(), Type: loom.PartReasoning, Text: b.Thinking.Text}
		if b.Thinking.Signature != "" {
			p.Metadata = importer.Meta("signature", b.Thinking.Signature)
		}
		m.Parts = append(m.Parts, p)
	}
	if strings.TrimSpace(b.Text) != "" {
		m.Parts = append(m.Parts, loom.Part{ID: id(), Type: loom.PartText, Text: b.Text})
	}
	if t := b.ToolFormerData; t != nil && t.Name != "" && m.Role == loom.RoleAssistant {
		p := loom.Part{ID: id(), Type: loom.PartTool, CallID: cmp.Or(t.ToolCallID, m.ID+"/call"), Name: t.Name, Input: json.RawMessage(`{}`)}
		for _, args := range []string{t.RawArgs, t.Params} {
			if in := importer.CompactJSON(json.RawMessage(args)); in != nil && in[0] == '{' {
				p.Input = in
				break
			}
		}
		if t.Result != "" {
			p.Output = mustJSON(t.Result)
			if r := importer.CompactJSON(json.RawMessage(t.Result)); r != nil {
				p.Output = r
			}
		}
		switch t.Status {
		case "completed", "":
			p.Status = loom.ToolCompleted
		case "error":
			p.Status, p.Error = loom.ToolError, cmp.Or(t.Result, "error")
		case "cancelled", "rejected", "aborted":
			p.Status, p.Error = loom.ToolError, t.Status
		default:
			p.Status = loom.ToolRunning
		}
		m.Parts = append(m.Parts, p)
	}
	if len(m.Parts) == 0 {
		res.Skip("empty-bubble")
		return nil
	}
	end := m.CreatedAt
	if t := importer.UnixTime(b.TimingInfo.ClientEndTime); t.After(end) {
		end = t
	}
	m.CompletedAt = &end
	return m
}

// bubbleTime reads a bubble's createdAt: RFC 3339, or milliseconds.
func bubbleTime(raw json.RawMessage) time.Time {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}
		}
		return t.UTC()
	}
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return importer.UnixTime(n)
	}
	return time.Time{}
}

func msTime(n json.Number) time.Time {
	f, err := n.Float64()
	if err != nil {
		return time.Time{}
	}
	return importer.UnixTime(f)
}

// workspace is the directory of the first file: URI of a bubble's
// workspace.
func workspace(uris []string) string {
	for _, u := range uris {
		p, err := url.Parse(u)
		if err == nil && p.Scheme == "file" && p.Path != "" {
			return p.Path
		}
	}
	return ""
}
