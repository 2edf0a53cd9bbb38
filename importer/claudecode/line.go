package claudecode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	// A faster decoder for the bulk of an import's work: one JSON
	// object per line of the session file.
	json "github.com/goccy/go-json"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

// opener opens a file of a bundle: importer.Open, or files in memory in
// tests.
type opener func(name string) (io.ReadCloser, error)

// openFile opens a regular file of at most importer.MaxFile bytes.
func openFile(name string) (io.ReadCloser, error) {
	f, _, err := importer.Open(name, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// rawLine is the shape of one line of a session file: the union of the
// fields of every line type that the reader uses. Fields it does not name
// are skipped while decoding, so a progress line's bulky output is never
// held.
type rawLine struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	UUID              string          `json:"uuid"`
	ParentUUID        string          `json:"parentUuid"`
	LogicalParentUUID string          `json:"logicalParentUuid"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
	IsCompactSummary  bool            `json:"isCompactSummary"`
	IsAPIErrorMessage bool            `json:"isApiErrorMessage"`
	SessionID         string          `json:"sessionId"`
	RequestID         string          `json:"requestId"`
	AgentID           string          `json:"agentId"`
	Cwd               string          `json:"cwd"`
	GitBranch         string          `json:"gitBranch"`
	Version           string          `json:"version"`
	Timestamp         string          `json:"timestamp"`
	Message           *rawMessage     `json:"message"`
	Content           json.RawMessage `json:"content"`
	ToolUseResult     json.RawMessage `json:"toolUseResult"`
	Summary           string          `json:"summary"`
	LeafUUID          string          `json:"leafUuid"`
	CustomTitle       string          `json:"customTitle"`
	AITitle           string          `json:"aiTitle"`
	CompactMetadata   json.RawMessage `json:"compactMetadata"`
	Data              *struct {
		Type    string `json:"type"`
		AgentID string `json:"agentId"`
		// Message is, in an agent_progress line, one line of the
		// sub-agent's transcript (inline.go).
		Message json.RawMessage `json:"message"`
	} `json:"data"`
	ParentToolUseID string `json:"parentToolUseID"`
	// LoomHandoff marks a session loom wrote for Claude Code to
	// continue (handoff.OriginField).
	LoomHandoff *handoff.Origin `json:"loomHandoff"`
	Attachment  *struct {
		Type string `json:"type"`
		// An instructions attachment's files (CLAUDE.md and the like),
		// and a prompt_snapshot's system prompt (attachments.go).
		Files []struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		} `json:"files"`
		SystemPrompt json.RawMessage `json:"systemPrompt"`
	} `json:"attachment"`
	// Rendered is what an attachment put before the model: a list of
	// {content} (attachments.go).
	Rendered json.RawMessage `json:"rendered"`
	// A cost-state line's running totals of the process, by model.
	ModelUsage map[string]modelUsage `json:"modelUsage"`
	StartTime  int64                 `json:"startTime"`
}

// modelUsage is one model's running totals in a cost-state line.
type modelUsage struct {
	InputTokens              int64 `json:"inputTokens"`
	OutputTokens             int64 `json:"outputTokens"`
	CacheReadInputTokens     int64 `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64 `json:"cacheCreationInputTokens"`
}

type rawMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *rawUsage       `json:"usage"`
}

type rawUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	// CacheCreation splits the cache writes by how long the cache is
	// kept; Claude Code writes most to the 1-hour cache.
	CacheCreation *struct {
		Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// block is one element of a message's content array.
type block = importer.Block

// record is one line as the reader keeps it.
type record struct {
	file  string
	n     int // line number, 1-based
	order int // position among the bundle's records
	rawLine
	// id is the line's uuid, or a stable stand-in when it has none.
	id      string
	hasUUID bool
	// compactUsage, on a compact_boundary line, is the usage of the
	// model call that made its summary, read off the cost-state lines
	// around it (see compactUsage); compactModel is that call's model.
	compactUsage *loom.Usage
	compactModel string
	ts           time.Time
	// blocks is message.content; a string content is one text block and
	// stringContent says so.
	blocks        []block
	stringContent bool
	// key names the message the line belongs to (see keyOf); empty for
	// lines that make no message of their own.
	key string
}

// readFile reads the lines of one file. Lines that are not JSON objects
// are problems; everything else becomes a record, even of a type the
// reader does not know, so that the caller counts it.
func readFile(ctx context.Context, open opener, path string, first int, res *importer.Result) ([]*record, error) {
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("claude-code: %w", err)
	}
	defer f.Close()
	var recs []*record
	err = importer.LinesFrom(ctx, f, first, func(n int, line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		if r := parseLine(path, n, line, res); r != nil {
			recs = append(recs, r)
		}
		return nil
	}, res.TooLong(path))
	if err != nil {
		return recs, fmt.Errorf("claude-code: reading %s: %w", path, err)
	}
	// A file with no time at all gets its modification time.
	fallback := time.Unix(0, 0).UTC()
	if osf, ok := f.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := osf.Stat(); err == nil {
			fallback = fi.ModTime().UTC()
		}
	}
	fillTimes(recs, fallback)
	return recs, nil
}

// lineID is the id of line n of file path when the line has no uuid:
// the file's name and the line's number, the same at every reading of
// the file and in no other session. An earlier reader named it by its
// number alone ("line-12"), which every session's line 12 shared: see
// renamed.
func lineID(path string, n int) string {
	return cleanID(strings.TrimSuffix(filepath.Base(path), ".jsonl")) + lineMark + strconv.Itoa(n)
}

// lineMark joins a file's name and a line's number in lineID.
const lineMark = ":line-"

// renamed maps the ids of msgs that lineID made (and those uniqueIDs
// made of them) to the ids the earlier reader gave the same messages,
// for importer.Session.Renamed; nil when there are none.
func renamed(msgs []*loom.Message) map[string]string {
	var out map[string]string
	for _, m := range msgs {
		if i := strings.Index(m.ID, lineMark); i >= 0 {
			if out == nil {
				out = map[string]string{}
			}
			out[m.ID] = m.ID[i+1:]
		}
	}
	return out
}

// parseLine decodes one line. A value of the wrong type in a field is a
// problem, but the line is kept with what could be read.
func parseLine(path string, n int, line []byte, res *importer.Result) *record {
	r := &record{file: path, n: n}
	if line = bytes.TrimSpace(line); line[0] != '{' {
		res.Problemf(path, n, "not a JSON object")
		return nil
	}
	if err := json.Unmarshal(line, &r.rawLine); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			res.Problemf(path, n, "not a JSON object: "+shortErr(err))
			return nil
		}
		res.Problemf(path, n, fmt.Sprintf("field %q has a %s where a %s belongs", te.Field, te.Value, te.Type))
	}
	res.CheckUTF8(path, n, line)
	if r.Type == "" {
		res.Problemf(path, n, "line has no type")
		return nil
	}
	r.id, r.hasUUID = r.UUID, r.UUID != ""
	if !r.hasUUID {
		r.id = lineID(path, n)
	}
	if r.Timestamp != "" {
		t, err := time.Parse(time.RFC3339Nano, r.Timestamp)
		if err != nil {
			res.Problemf(path, n, "timestamp "+strconv.Quote(importer.Clip(r.Timestamp, 40))+" is not RFC 3339")
		} else {
			r.ts = t.UTC()
		}
	}
	if r.Message != nil {
		r.blocks, r.stringContent = parseContent(path, n, r.Message.Content, res)
		r.Message.Content = nil
	}
	return r
}

// parseContent decodes message.content: a string or an array of blocks.
// A block that cannot be decoded is a problem; the others are kept.
func parseContent(path string, n int, raw json.RawMessage, res *importer.Result) ([]block, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			res.Problemf(path, n, "message content: "+shortErr(err))
			return nil, false
		}
		return []block{{Type: "text", Text: s}}, true
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			res.Problemf(path, n, "message content: "+shortErr(err))
			return nil, false
		}
		blocks := make([]block, 0, len(items))
		for i, it := range items {
			var b block
			if err := json.Unmarshal(it, &b); err != nil {
				res.Problemf(path, n, fmt.Sprintf("content block %d: %s", i, shortErr(err)))
				b = block{Type: "invalid"}
			}
			blocks = append(blocks, b)
		}
		return blocks, false
	}
	res.Problemf(path, n, "message content is neither a string nor an array")
	return nil, false
}

// fillTimes gives lines without a timestamp the time of the line before
// them (or, at the start of the file, after them; in a file without
// times, fallback), so that every message has a time and leaves compare
// sensibly.
func fillTimes(recs []*record, fallback time.Time) {
	var last time.Time
	for _, r := range recs {
		if r.ts.IsZero() {
			r.ts = last
		} else {
			last = r.ts
		}
	}
	next := fallback
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].ts.IsZero() {
			recs[i].ts = next
		} else {
			next = recs[i].ts
		}
	}
}

// label is a type name from a file as a key of the skipped counts: short
// and on one line.
func label(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, importer.Clip(s, 64))
}

// cleanID is an id from a file made fit for a SourceID: one line, without
// the "/" and "@" that join ids.
func cleanID(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '/' || r == '@' || r == '\\' {
			return '_'
		}
		return r
	}, importer.Clip(s, 200))
}

func shortErr(err error) string { return importer.Clip(err.Error(), 200) }

// text is the text of a user line's content: its text blocks joined.
func (r *record) text() string {
	var parts []string
	for _, b := range r.blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// systemText is a system line's content when it is a string.
func (r *record) systemText() string {
	var s string
	if json.Unmarshal(r.Content, &s) == nil {
		return s
	}
	return ""
}
