// Package deepseekharness reads the sessions of DeepSeek Harness (dsh,
// deepseek-ai/deepseek-harness) for loom's importer.
//
// dsh keeps each session as an event log, sessions/<project>/<session>/
// session.jsonl (or session.jsonl.zstd, the same lines compressed) in
// its home directory (~/.dsh, $DSH_HOME): <project> is the working
// directory made a name ("--home-u-shop--", "_no-cwd" when there is
// none), <session> the session's id with every character outside
// [A-Za-z0-9._-] written ~XXXX. Its first line is the session's header
// (type "session": version, id, createdAt in milliseconds, cwd,
// parentSession, seedLength, origin "subagent"); each other line an
// event: type, seq, time (milliseconds) and data. The conversation is
// told by its surface events, those appended (surfaceOp "append"):
// user/message (a message whose source is the user, or a plugin that
// injects context: instructions, catalogs, snapshots), assistant/message
// (a reply of one step of a turn: its content blocks of text,
// reasoning and tool calls, the model that wrote it, its tokens) and
// tool/result (a call's result and whether it failed). Around them:
// the stream the reply was made of (assistant/chunk: blocks started,
// deltas, blocks ended, usage, the finish), packed runs of deltas
// (text-chunks, reasoning-chunks, tool-call-chunks), turns and steps,
// the request's header (its model), the session's title, approvals,
// hooks, compaction. Earlier versions wrote the reply's blocks and the
// result's call beside their data rather than in a message; both are
// read.
//
// What becomes what: a user's message a user message, a plugin's
// injected one a system message (what the agent was told, not said); a
// reply an assistant message of its reasoning, text and calls, each call
// completed by its result, with its tokens and model; a step whose reply
// was never written whole (the program stopped while it streamed) is the
// reply its stream's blocks make. A session a sub-agent ran in (origin
// "subagent") is a sub-agent session of its parent; the events a forked
// session copied from its parent (the first seedLength) are not read
// again. The title is the last session/title.
//
// Learnt from its source (deepseek-ai/deepseek-harness at
// b150a551b8d465e31e418e1b2eaf5e79bbb7d28e: packages/session/
// session-persistence-jsonl/src/format.ts, its places and header;
// packages/core/session/src/types.ts, its events; packages/llm/llm/src/
// message.ts and types.ts, messages, blocks and chunks;
// packages/session/session-persistence-sqlite/src/codec.ts, packed
// runs) and agentsview's reader of it (kenn-io/agentsview at
// 538600744d1b87614d3746d36a0966c1f2ac1cad, internal/parser/
// deepseek_harness.go, deepseek_harness_format.go). The fixtures in
// testdata are built to that format (testdata/README.md).
package deepseekharness

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads dsh's session logs. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is DeepSeek Harness's name in loom.
const Tool = "deepseek-harness"

const (
	plainName      = "session.jsonl"
	compressedName = "session.jsonl.zstd"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is DeepSeek's, whose models dsh runs unless told otherwise;
// a reply names its own.
func (Format) Provider() string { return "deepseek" }

// Roots are $DSH_HOME/sessions when $DSH_HOME is set, else
// ~/.dsh/sessions.
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.EnvPath(env, home)("DSH_HOME"); d != "" {
		return []string{filepath.Join(d, "sessions")}
	}
	return importer.HomeDirs(env, home, "", []string{".dsh", "sessions"})
}

// Bundles lists each session log under root, one bundle each; of a
// session that has both (dsh compressing it), the plain one.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		switch d.Name() {
		case plainName:
			return true
		case compressedName:
			_, err := os.Lstat(filepath.Join(filepath.Dir(path), plainName))
			return err != nil
		}
		return false
	})
}

// Limits on a compressed log, so that a small hostile file cannot fill
// memory: the decoder's window, and how much a file may expand to.
const (
	zstdMaxWindow    = 64 << 20
	zstdMinExpansion = 256 << 20
	zstdExpansion    = 64
)

// header is a log's first line.
type header struct {
	Type          string `json:"type"`
	ID            string `json:"id"`
	CreatedAt     int64  `json:"createdAt"`
	Cwd           string `json:"cwd"`
	ParentSession string `json:"parentSession"`
	SeedLength    int64  `json:"seedLength"`
	Origin        string `json:"origin"`
}

// event is one line after the header: an event, or a packed run of
// deltas (seq0, time0).
type event struct {
	Type      string          `json:"type"`
	Seq       *int64          `json:"seq"`
	Time      int64           `json:"time"`
	Seq0      *int64          `json:"seq0"`
	Time0     int64           `json:"time0"`
	Data      json.RawMessage `json:"data"`
	SurfaceOp json.RawMessage `json:"surfaceOp"`
}

// block is a content block: text, reasoning, a tool call, a tool
// result, an image.
type block struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	ToolCallID string          `json:"toolCallId"`
	Content    json.RawMessage `json:"content"`
	IsError    bool            `json:"isError"`
}

type source struct {
	Kind     string `json:"kind"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	CallID   string `json:"callId"`
	Form     string `json:"form"`
}

type usage struct {
	Input      int64 `json:"inputTokens"`
	Output     int64 `json:"outputTokens"`
	CacheRead  int64 `json:"cacheReadTokens"`
	CacheWrite int64 `json:"cacheWriteTokens"`
	Reasoning  int64 `json:"reasoningTokens"`
}

func (u *usage) loom() loom.Usage {
	if u == nil {
		return loom.Usage{}
	}
	return loom.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead,
		CacheWriteTokens: u.CacheWrite, ReasoningTokens: u.Reasoning, APICalls: 1}
}

// message is a message as dsh keeps it (the data of a user/message,
// the message of an assistant/message or tool/result).
type message struct {
	ID      string  `json:"id"`
	Content []block `json:"content"`
	Source  *source `json:"source"`
}

// surface is the data of a surface event, current and earlier: the
// user's message is the data itself; a reply's and a result's are in
// message, or (earlier) beside turn and step.
type surface struct {
	message
	Turn       int64    `json:"turn"`
	Step       int64    `json:"step"`
	Message    *message `json:"message"`
	Usage      *usage   `json:"usage"`
	Provenance *source  `json:"provenance"`
	CallID     string   `json:"callId"`
	IsError    bool     `json:"isError"`
}

// chunkData is an assistant/chunk's data, or a packed run's.
type chunkData struct {
	Turn  int64 `json:"turn"`
	Step  int64 `json:"step"`
	Chunk *struct {
		Type           string `json:"type"`
		Index          int    `json:"index"`
		Text           string `json:"text"`
		ID             string `json:"id"`
		Name           string `json:"name"`
		ArgumentsDelta string `json:"argumentsDelta"`
		Block          *block `json:"block"`
		Usage          *usage `json:"usage"`
	} `json:"chunk"`
	Index int      `json:"index"`
	Texts []string `json:"texts"`
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Args  []string `json:"args"`
}

// passed are the events that say nothing of the conversation loom
// keeps, passed over without a count.
var passed = map[string]bool{
	"turn/start": true, "turn/end": true, "step/start": true, "step/end": true,
	"tool/call": true, "request/context": true, "session/end-seed": true,
	"session/title-llm-request": true, "llm/retry": true, "llm/retry-started": true,
}

// partial is a reply being streamed: its blocks by index, its usage.
type partial struct {
	key    [2]int64
	id     string
	at     time.Time
	order  []int
	blocks map[int]*block
	usage  *usage
	model  string
	prov   string
}

func (p *partial) block(i int, typ string) *block {
	b, ok := p.blocks[i]
	if !ok {
		b = &block{Type: typ}
		p.blocks[i] = b
		p.order = append(p.order, i)
	}
	if b.Type == "" {
		b.Type = typ
	}
	return b
}

// reader is the state of one log's reading.
type reader struct {
	name  string
	res   *importer.Result
	t     *importer.Transcript
	hdr   header
	title string
	// model and provider are the last request header's.
	model, provider string
	// partials are the replies streamed and not (yet) written whole,
	// in the order they began.
	partials []*partial
	written  map[[2]int64]bool
	ordinal  int64
}

// Read reads one session log.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path, f, info, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".zstd") {
		dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(zstdMaxWindow))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", Tool, path, err)
		}
		defer dec.Close()
		r = &importer.CapReader{R: dec, Left: min(max(zstdMinExpansion, zstdExpansion*info.Size()), importer.MaxFile)}
	}
	return read(ctx, path, r)
}

func read(ctx context.Context, path string, r io.Reader) (*importer.Result, error) {
	res := &importer.Result{}
	rd := &reader{name: path, res: res, t: &importer.Transcript{Res: res}, written: map[[2]int64]bool{}}
	_, err := importer.SessionLines(ctx, path, r, res, func(n int, line []byte) {
		var e event
		if !res.DecodeLine(path, n, line, &e) {
			rd.t.Break()
			return
		}
		if e.Type == "session" {
			var h header
			if json.Unmarshal(line, &h) == nil {
				rd.hdr = h
			}
			return
		}
		rd.event(n, e)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", Tool, path, err)
	}
	rd.flush()
	id := cmp.Or(importer.LineID(rd.hdr.ID), importer.LineID(decodeSegment(filepath.Base(filepath.Dir(path)))))
	s := rd.t.Session(id, path)
	if s == nil {
		return res, nil
	}
	s.Title, s.Cwd = importer.Clip(strings.TrimSpace(rd.title), 200), rd.hdr.Cwd
	if rd.hdr.CreatedAt > 0 {
		s.CreatedAt = time.UnixMilli(rd.hdr.CreatedAt).UTC()
	}
	if p := importer.LineID(rd.hdr.ParentSession); p != "" && p != id && rd.hdr.Origin == "subagent" {
		s.Kind, s.ParentSourceID = loom.KindSubagent, p
	}
	if m := importer.LastModelReply(s.Messages); m != nil {
		s.Model, s.Provider = m.Model, m.Provider
	}
	res.Keep(s, "session")
	return res, nil
}

// event reads one event of line n.
func (rd *reader) event(n int, e event) {
	seq := rd.ordinal
	switch {
	case e.Seq != nil:
		seq = *e.Seq
	case e.Seq0 != nil:
		seq = *e.Seq0
	}
	rd.ordinal = seq + 1
	if e.Seq0 != nil {
		var d chunkData
		if json.Unmarshal(e.Data, &d) == nil {
			rd.ordinal = seq + int64(max(len(d.Texts), len(d.Args), 1))
		}
	}
	if rd.hdr.SeedLength > 0 && seq < rd.hdr.SeedLength {
		rd.res.Skip("seed")
		return
	}
	at := time.Time{}
	if t := cmp.Or(e.Time, e.Time0); t > 0 {
		at = time.UnixMilli(t).UTC()
	}
	mid := "s" + strconv.FormatInt(seq, 10)
	if e.Seq == nil && e.Seq0 == nil {
		mid = "line-" + strconv.Itoa(n)
	}
	switch e.Type {
	case "user/message", "assistant/message", "tool/result":
		if op := string(bytes.TrimSpace(e.SurfaceOp)); op != "" && op != `"append"` {
			rd.res.Skip(e.Type + ":replace")
			return
		}
		var d surface
		if json.Unmarshal(e.Data, &d) != nil {
			rd.res.Skip("unknown:" + e.Type)
			return
		}
		switch e.Type {
		case "user/message":
			rd.flush()
			rd.user(mid, d, at)
		case "assistant/message":
			rd.reply(mid, d, at)
		case "tool/result":
			rd.flush()
			rd.result(d, at)
		}
	case "assistant/chunk", "text-chunks", "reasoning-chunks", "tool-call-chunks":
		var d chunkData
		if json.Unmarshal(e.Data, &d) != nil {
			rd.res.Skip("unknown:" + e.Type)
			return
		}
		rd.chunk(e.Type, d, mid, at)
	case "step/end", "turn/end":
		rd.flush()
	case "session/title":
		var d struct {
			Title string `json:"title"`
		}
		if json.Unmarshal(e.Data, &d) == nil && strings.TrimSpace(d.Title) != "" {
			rd.title = d.Title
		}
	case "request/header":
		var d struct {
			Header struct {
				Config struct {
					Provider string `json:"provider"`
					Model    string `json:"model"`
				} `json:"config"`
			} `json:"header"`
		}
		if json.Unmarshal(e.Data, &d) == nil {
			rd.model = cmp.Or(d.Header.Config.Model, rd.model)
			rd.provider = cmp.Or(providerOf(d.Header.Config.Provider), rd.provider)
		}
	default:
		if !passed[e.Type] {
			rd.res.Skip(importer.TypeName(e.Type))
		}
	}
}

// user adds a user/message: the user's, or a plugin's injected context
// (a system message).
func (rd *reader) user(mid string, d surface, at time.Time) {
	m := d.message
	if d.Message != nil {
		m = *d.Message
	}
	role := loom.RoleUser
	if m.Source != nil && m.Source.Kind != "" && m.Source.Kind != "user" {
		role = loom.RoleSystem
	}
	id := cmp.Or(importer.LineID(m.ID), mid)
	msg := &loom.Message{ID: id, Role: role, CreatedAt: at}
	for i, b := range m.Content {
		pid := id + "/" + strconv.Itoa(i)
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: b.Text})
			}
		default:
			rd.res.Skip(importer.TypeName("block:" + b.Type))
		}
	}
	rd.t.Add(msg)
}

// reply adds an assistant/message, written whole: the stream it was
// made of is dropped.
func (rd *reader) reply(mid string, d surface, at time.Time) {
	key := [2]int64{d.Turn, d.Step}
	rd.written[key] = true
	for i, p := range rd.partials {
		if p.key == key {
			rd.partials = append(rd.partials[:i], rd.partials[i+1:]...)
			break
		}
	}
	rd.flush()
	content, src := d.Content, d.Provenance
	id := mid
	if d.Message != nil {
		content, src, id = d.Message.Content, cmp.Or(d.Message.Source, src), cmp.Or(importer.LineID(d.Message.ID), mid)
	}
	msg := &loom.Message{ID: id, Role: loom.RoleAssistant, CreatedAt: at, Model: rd.model, Provider: rd.provider, Usage: d.Usage.loom()}
	if src != nil {
		msg.Model, msg.Provider = cmp.Or(src.Model, msg.Model), cmp.Or(providerOf(src.Provider), msg.Provider)
	}
	rd.addReply(msg, content)
}

// addReply gives msg the parts of blocks and adds it.
func (rd *reader) addReply(msg *loom.Message, blocks []block) {
	for i, b := range blocks {
		pid := msg.ID + "/" + strconv.Itoa(i)
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: b.Text})
			}
		case "reasoning":
			if strings.TrimSpace(b.Text) != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: b.Text})
			}
		case "tool-call":
			msg.Parts = append(msg.Parts, importer.ToolCall(pid, b.ID, b.Name, b.Arguments))
		default:
			rd.res.Skip(importer.TypeName("block:" + b.Type))
		}
	}
	rd.t.Add(msg)
}

// result completes a call with a tool/result.
func (rd *reader) result(d surface, at time.Time) {
	callID, content, failed := d.CallID, d.Content, d.IsError
	if d.Message != nil {
		for _, b := range d.Message.Content {
			if b.Type == "tool-result" {
				callID, failed = cmp.Or(b.ToolCallID, callID), b.IsError
				var inner []block
				if json.Unmarshal(b.Content, &inner) == nil {
					content = inner
				} else {
					content = []block{{Type: "text", Text: importer.JSONText(b.Content)}}
				}
			}
		}
		if callID == "" && d.Message.Source != nil {
			callID = d.Message.Source.CallID
		}
	}
	var out []string
	for _, b := range content {
		if b.Type == "text" {
			out = append(out, b.Text)
		}
	}
	rd.t.Complete(callID, strings.Join(out, "\n"), failed, at)
}

// chunk adds a piece of a reply's stream.
func (rd *reader) chunk(typ string, d chunkData, mid string, at time.Time) {
	key := [2]int64{d.Turn, d.Step}
	if rd.written[key] {
		return
	}
	var p *partial
	for _, q := range rd.partials {
		if q.key == key {
			p = q
		}
	}
	if p == nil {
		p = &partial{key: key, id: mid, at: at, blocks: map[int]*block{}, model: rd.model, prov: rd.provider}
		rd.partials = append(rd.partials, p)
	}
	switch typ {
	case "text-chunks":
		b := p.block(d.Index, "text")
		b.Text += strings.Join(d.Texts, "")
		return
	case "reasoning-chunks":
		b := p.block(d.Index, "reasoning")
		b.Text += strings.Join(d.Texts, "")
		return
	case "tool-call-chunks":
		b := p.block(d.Index, "tool-call")
		b.ID, b.Name = cmp.Or(b.ID, d.ID), cmp.Or(b.Name, d.Name)
		b.Arguments = append(b.Arguments, strings.Join(d.Args, "")...)
		return
	}
	c := d.Chunk
	if c == nil {
		return
	}
	switch c.Type {
	case "block-start":
		p.block(c.Index, "")
	case "text-delta":
		p.block(c.Index, "text").Text += c.Text
	case "reasoning-delta":
		p.block(c.Index, "reasoning").Text += c.Text
	case "tool-call-delta":
		b := p.block(c.Index, "tool-call")
		b.ID, b.Name = cmp.Or(b.ID, c.ID), cmp.Or(b.Name, c.Name)
		b.Arguments = append(b.Arguments, c.ArgumentsDelta...)
	case "block-end":
		if c.Block != nil {
			b := p.block(c.Index, c.Block.Type)
			*b = *c.Block
		}
	case "usage":
		p.usage = c.Usage
	}
}

// flush adds the replies streamed and never written whole, each the
// reply its blocks make.
func (rd *reader) flush() {
	for _, p := range rd.partials {
		msg := &loom.Message{ID: p.id, Role: loom.RoleAssistant, CreatedAt: p.at, Model: p.model, Provider: p.prov, Usage: p.usage.loom()}
		var blocks []block
		for _, i := range p.order {
			blocks = append(blocks, *p.blocks[i])
		}
		rd.written[p.key] = true
		rd.addReply(msg, blocks)
	}
	rd.partials = nil
}

// providerOf is loom's name of a dsh provider ("deepseek-official" is
// DeepSeek's).
func providerOf(p string) string {
	if strings.HasPrefix(p, "deepseek") {
		return "deepseek"
	}
	return p
}

// decodeSegment is a session's id from its directory's name: each
// ~XXXX the UTF-16 unit it stands for.
func decodeSegment(s string) string {
	var units []uint16
	var b strings.Builder
	flush := func() {
		if len(units) > 0 {
			b.WriteString(string(utf16.Decode(units)))
			units = nil
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && i+5 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
				units = append(units, uint16(v))
				i += 4
				continue
			}
		}
		flush()
		b.WriteByte(s[i])
	}
	flush()
	return b.String()
}
