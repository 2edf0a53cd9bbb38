package clinetasks

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// task is one task directory's files as read.
type task struct {
	id       string
	dir      string
	files    []taskFile
	modified time.Time
}

type taskFile struct {
	name, path string
	data       []byte
}

// apiMessage is one message of api_conversation_history.json: Anthropic's
// message form, with the time Roo Code and Kilo Code add and Roo's mark
// of a compaction's summary.
type apiMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	TS        float64         `json:"ts"`
	IsSummary bool            `json:"isSummary"`
}

// block is one content block of a message.
type block = importer.Block

// uiMessage is one message of ui_messages.json, what the extension
// showed; only the API requests' usage and times are read from it.
type uiMessage struct {
	TS   float64 `json:"ts"`
	Type string  `json:"type"`
	Say  string  `json:"say"`
	Text string  `json:"text"`
}

// apiRequest is the text of an api_req_started message once the request
// ended: its tokens and cost.
type apiRequest struct {
	TokensIn    *float64 `json:"tokensIn"`
	TokensOut   *float64 `json:"tokensOut"`
	CacheWrites float64  `json:"cacheWrites"`
	CacheReads  float64  `json:"cacheReads"`
	Cost        float64  `json:"cost"`
	APIProtocol string   `json:"apiProtocol"`
}

// metadata is task_metadata.json: the models the task used.
type metadata struct {
	ModelUsage []struct {
		ModelID         string `json:"model_id"`
		ModelProviderID string `json:"model_provider_id"`
	} `json:"model_usage"`
}

// historyItem is history_item.json (Roo Code and Kilo Code): the
// task's entry in the extension's history.
type historyItem struct {
	ID           string   `json:"id"`
	TS           float64  `json:"ts"`
	Task         string   `json:"task"`
	Workspace    string   `json:"workspace"`
	ParentTaskID string   `json:"parentTaskId"`
	ChildIDs     []string `json:"childIds"`
}

// request is one API request's usage and time.
type request struct {
	at    time.Time
	usage loom.Usage
}

func (t *task) parse() *importer.Result {
	res := &importer.Result{}
	r := t.read(res)
	if !r.haveAPI {
		res.Skip("task-without-conversation")
		return res
	}
	s := t.session(r)
	b := &builder{res: res, file: r.apiPath, calls: map[string]*loom.Part{}, model: s.Model, provider: s.Provider, children: r.item.ChildIDs}
	b.conversation(s, r.api, r.requests)
	if len(b.msgs) == 0 {
		res.Skip("empty-session")
		return res
	}
	for _, m := range b.msgs {
		if m.CreatedAt.After(s.UpdatedAt) {
			s.UpdatedAt = m.CreatedAt
		}
	}
	if s.UpdatedAt.Before(s.CreatedAt) {
		s.UpdatedAt = s.CreatedAt
	}
	s.Messages = b.msgs
	res.Sessions = []*importer.Session{s}
	return res
}

// taskRead is what a task's files hold.
type taskRead struct {
	api             []apiMessage
	apiPath         string
	haveAPI         bool
	requests        []request
	firstUI, lastUI time.Time
	meta            metadata
	item            historyItem
}

// read decodes the task's files.
func (t *task) read(res *importer.Result) *taskRead {
	r := &taskRead{}
	for _, f := range t.files {
		res.CheckUTF8(f.path, 0, f.data)
		switch f.name {
		case apiFile:
			r.apiPath, r.haveAPI = f.path, true
			r.api = decodeList[apiMessage](res, f.path, f.data)
		case uiFile:
			r.ui(decodeList[uiMessage](res, f.path, f.data))
		case metadataFile:
			if json.Unmarshal(f.data, &r.meta) != nil {
				res.Problemf(f.path, 0, "not task metadata")
			}
		case historyFile:
			if json.Unmarshal(f.data, &r.item) != nil {
				res.Problemf(f.path, 0, "not a history item")
			}
		}
	}
	return r
}

// ui reads the UI's messages: the times of the first and the last, and
// the usage of each API request that finished.
func (r *taskRead) ui(msgs []uiMessage) {
	for _, m := range msgs {
		at := importer.Millis(m.TS)
		if r.firstUI.IsZero() {
			r.firstUI = at
		}
		if at.After(r.lastUI) {
			r.lastUI = at
		}
		if m.Say != "api_req_started" {
			continue
		}
		var q apiRequest
		if json.Unmarshal([]byte(m.Text), &q) != nil || (q.TokensIn == nil && q.TokensOut == nil) {
			continue // a request that never finished
		}
		r.requests = append(r.requests, request{at: at, usage: q.loom()})
	}
}

// session is the task's session, without its messages.
func (t *task) session(r *taskRead) *importer.Session {
	item := r.item
	id := cmp.Or(strings.TrimSpace(item.ID), t.id)
	if strings.ContainsAny(id, "\n\r") || id == "" || id == "." {
		id = t.id
	}
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: r.apiPath, Title: strings.TrimSpace(item.Task), Cwd: item.Workspace}
	if p := strings.TrimSpace(item.ParentTaskID); p != "" && p != id && !strings.ContainsAny(p, "\n\r") {
		s.Kind, s.ParentSourceID = loom.KindSubagent, p
	}
	if n := len(r.meta.ModelUsage); n > 0 {
		s.Model, s.Provider = r.meta.ModelUsage[n-1].ModelID, r.meta.ModelUsage[n-1].ModelProviderID
	}
	s.CreatedAt = importer.Millis(item.TS)
	if s.CreatedAt.IsZero() {
		// Cline names a task by the time it started, in milliseconds.
		if n, err := strconv.ParseInt(t.id, 10, 64); err == nil {
			s.CreatedAt = importer.Millis(float64(n))
		}
	}
	s.CreatedAt = cmp.Or(s.CreatedAt, r.firstUI, t.modified)
	s.UpdatedAt = cmp.Or(r.lastUI, t.modified)
	return s
}

// decodeList decodes a JSON array, element by element: an element that
// is not a T is a problem and the rest is read; a file that is no array
// is a problem of its own.
func decodeList[T any](res *importer.Result, path string, data []byte) []T {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		res.Problemf(path, 0, "not a JSON array: "+importer.Excerpt(err.Error()))
		return nil
	}
	out := make([]T, 0, len(raw))
	for i, r := range raw {
		var v T
		if err := json.Unmarshal(r, &v); err != nil {
			res.Problemf(path, 0, "element "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
			continue
		}
		out = append(out, v)
	}
	return out
}

// blocks is a message's content as blocks: a string is one text block.
func blocks(raw json.RawMessage) []block {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []block{{Type: "text", Text: s}}
		}
		return nil
	}
	var raws []json.RawMessage
	if json.Unmarshal(raw, &raws) != nil {
		return nil
	}
	out := make([]block, 0, len(raws))
	for _, r := range raws {
		var bl block
		if json.Unmarshal(r, &bl) != nil {
			bl = block{Type: "not-an-object"}
		}
		out = append(out, bl)
	}
	return out
}

// plain is a tool result's content as text: the string, or its text
// blocks joined.
func plain(raw json.RawMessage) string {
	var parts []string
	for _, bl := range blocks(raw) {
		if bl.Type == "text" && bl.Text != "" {
			parts = append(parts, bl.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// unwrap takes off the tag the extensions put around what the user
// typed (<task>, <feedback>, <user_message>, <answer>).
func unwrap(text string) string {
	for _, tag := range []string{"task", "feedback", "user_message", "answer"} {
		open, end := "<"+tag+">", "</"+tag+">"
		if strings.HasPrefix(text, open) && strings.HasSuffix(text, end) {
			return strings.TrimSpace(text[len(open) : len(text)-len(end)])
		}
	}
	return text
}

func image(pid string, bl block) (loom.Part, bool) {
	src := bl.Source
	if src == nil {
		return loom.Part{}, false
	}
	switch {
	case src.Type == "base64" && src.Data != "":
		return loom.Part{ID: pid, Type: loom.PartFile, Mime: src.MediaType, URL: "data:" + src.MediaType + ";base64," + src.Data}, true
	case src.URL != "":
		return loom.Part{ID: pid, Type: loom.PartFile, Mime: src.MediaType, URL: src.URL}, true
	}
	return loom.Part{}, false
}

func (r apiRequest) loom() loom.Usage {
	u := loom.Usage{
		InputTokens:      importer.Tokens(deref(r.TokensIn)),
		OutputTokens:     importer.Tokens(deref(r.TokensOut)),
		CacheReadTokens:  importer.Tokens(r.CacheReads),
		CacheWriteTokens: importer.Tokens(r.CacheWrites),
		APICalls:         1,
	}
	if r.Cost > 0 && r.Cost < 1e9 {
		u.CostUSD = r.Cost
	}
	if r.APIProtocol == "openai" {
		// OpenAI's prompt tokens count the cached ones; loom's input
		// does not.
		u.InputTokens = max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	}
	return u
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}
