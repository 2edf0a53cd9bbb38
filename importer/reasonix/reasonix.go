// Package reasonix reads the sessions of Reasonix (the reasonix
// command, a coding agent first made for DeepSeek's models) for loom's
// importer.
//
// Reasonix 1.38 keeps each session in a directory of its own,
// ~/.reasonix/projects/<working directory, its separators as
// ->/sessions-v4/<session>/ ($REASONIX_HOME replaces ~/.reasonix): a
// manifest.json naming the session, and events.frames, the session's
// log. The log is a sequence of frames, each the four bytes "RX4F", the
// length of what follows and the length of the record it holds (both
// 32-bit, big-endian), then that record compressed with zstd: one JSON
// record, of recordType batch/begin (the time, for the events up to the
// batch/end), batch/event or batch/end. An event has a sequence number,
// a kind and a payload (JSON in base64):
//
//   - message/complete holds a message as the chat APIs send it: the
//     system prompt, a user message (origin "user" for what was typed,
//     "host" for the session context Reasonix adds before each prompt,
//     which names the working directory), an assistant message
//     (content, reasoning_content, tool_calls of id, name and
//     arguments) or a tool message (tool_call_id, content,
//     tool_run_state "completed" or "failed");
//   - assistant/attempt begins and commits each assistant message: one
//     whose attempt was begun and never committed was thrown away;
//   - model/context-replace (reason "summary") is a compaction: the
//     messages it puts in place of the context hold the summary, a user
//     message wrapped in <compaction-summary>;
//   - session/config names the model ("provider/model");
//   - tool/call, tool/start and tool/result repeat what the messages
//     hold; turn/start and turn/end mark the turns.
//
// Reasonix writes no token usage in the session (only a daily total
// under ~/.reasonix/stats, not tied to a session): none is imported.
//
// Learnt from what Reasonix 1.38.11 (npm's reasonix, its linux-x64
// build) writes, run in loom's tests against a fake model; the files in
// testdata are its own.
package reasonix

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Reasonix's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Reasonix's name in loom.
const Tool = "reasonix"

const (
	// maxLog bounds a session's log, read whole.
	maxLog = 512 << 20
	// maxRecord bounds one record, decompressed.
	maxRecord = 64 << 20
	// magic starts each frame.
	magic = "RX4F"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is DeepSeek's, Reasonix's first; a session names its own.
func (Format) Provider() string { return "deepseek" }

// Roots are $REASONIX_HOME/projects when it is set, else
// ~/.reasonix/projects (and %APPDATA%\reasonix\projects on Windows).
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.EnvPath(env, home)("REASONIX_HOME"); d != "" {
		return []string{filepath.Join(d, "projects")}
	}
	return importer.HomeDirs(env, home, "", []string{".reasonix", "projects"}, []string{"AppData", "Roaming", "reasonix", "projects"})
}

// Bundles lists each session's log under root (the query and recovery
// caches beside the sessions are passed over), one bundle each.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		if d.Name() != "events.frames" {
			return false
		}
		return !strings.HasPrefix(filepath.Base(filepath.Dir(path)), ".")
	})
}

// event is one batch/event record's event.
type event struct {
	Seq     int64  `json:"seq"`
	Kind    string `json:"kind"`
	Payload string `json:"payload"`
}

type record struct {
	Type      string `json:"recordType"`
	CreatedAt string `json:"createdAt"`
	Event     *event `json:"event"`
}

// message is a message as Reasonix keeps it (the chat APIs' form).
type message struct {
	Role             string               `json:"role"`
	ID               string               `json:"id"`
	Origin           string               `json:"origin"`
	Content          json.RawMessage      `json:"content"`
	ReasoningContent string               `json:"reasoning_content"`
	ToolCalls        []importer.NamedCall `json:"tool_calls"`
	ToolCallID       string               `json:"tool_call_id"`
	RunState         string               `json:"tool_run_state"`
	CreatedAt        int64                `json:"createdAt"`
}

// frames decodes a log's records in order. A frame cut short at the end
// (a write under way) ends the log without a problem; one that is not a
// frame is a problem, and ends it.
func frames(ctx context.Context, name string, data []byte, res *importer.Result, fn func(rec []byte)) error {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxRecord))
	if err != nil {
		return err
	}
	defer dec.Close()
	for n, off := 1, 0; off < len(data); n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(data)-off < 12 {
			return nil
		}
		if string(data[off:off+4]) != magic {
			res.Problemf(name, 0, fmt.Sprintf("frame %d (at byte %d) is not a Reasonix frame; the rest of the log is not read", n, off))
			return nil
		}
		size, raw := binary.BigEndian.Uint32(data[off+4:]), binary.BigEndian.Uint32(data[off+8:])
		if uint64(size) > uint64(len(data)-off-12) {
			return nil
		}
		body := data[off+12 : off+12+int(size)]
		off += 12 + int(size)
		if raw > maxRecord {
			res.Problemf(name, 0, fmt.Sprintf("frame %d holds a record of %d bytes, more than loom reads", n, raw))
			continue
		}
		rec := body
		if bytes.HasPrefix(body, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			out, err := dec.DecodeAll(body, make([]byte, 0, raw))
			if err != nil {
				res.Problemf(name, 0, fmt.Sprintf("frame %d: %v", n, err))
				continue
			}
			rec = out
		}
		fn(rec)
	}
	return nil
}

var workspace = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Current workspace: ("(?:[^"\\]|\\.)*")`) })

// Read reads one session's log.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	data, err := importer.ReadSmall(name, maxLog)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	if len(data) > 0 && !bytes.HasPrefix(data, []byte(magic)) {
		return nil, fmt.Errorf("%s: %s: not a Reasonix session log", Tool, name)
	}
	res := &importer.Result{}
	evs, times, err := readEvents(ctx, name, data, res)
	if err != nil {
		return nil, err
	}
	r := &reader{name: name, res: res, t: &importer.Transcript{Res: res}}
	payloads := r.payloads(evs)
	for i, ev := range evs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := payloads[i]
		if p == nil {
			continue
		}
		at := times[ev.Seq]
		if r.created.IsZero() || !at.IsZero() && at.Before(r.created) {
			r.created = at
		}
		if at.After(r.updated) {
			r.updated = at
		}
		r.event(ev, p, at)
	}
	s := &importer.Session{SourceID: importer.LineID(sessionID(name)), Kind: loom.KindMain, Path: name, Messages: r.t.Msgs,
		Cwd: r.cwd, Model: r.model, Provider: r.provider, CreatedAt: r.created, UpdatedAt: r.updated}
	// Its system prompt and session contexts, the only system messages
	// it makes, were none to readers before (importer.Session.Added).
	for _, m := range s.Messages {
		if m.Role == loom.RoleSystem {
			if s.Added == nil {
				s.Added = map[string]bool{}
			}
			s.Added[m.ID] = true
		}
	}
	res.Keep(s, "session")
	return res, nil
}

// readEvents is the events of a log's batch/event records, in order, and
// the time of each one's batch, by its sequence.
func readEvents(ctx context.Context, name string, data []byte, res *importer.Result) ([]event, map[int64]time.Time, error) {
	var evs []event
	times := map[int64]time.Time{} // an event's sequence → its batch's time
	var batchAt time.Time
	err := frames(ctx, name, data, res, func(raw []byte) {
		var r record
		if err := json.Unmarshal(raw, &r); err != nil {
			res.Problemf(name, 0, "a record that is not JSON: "+err.Error())
			return
		}
		switch r.Type {
		case "batch/begin":
			batchAt = importer.ISOTime(r.CreatedAt)
		case "batch/event":
			if r.Event != nil {
				evs = append(evs, *r.Event)
				times[r.Event.Seq] = batchAt
			}
		}
	})
	return evs, times, err
}

// sessionID is the session's id its manifest.json names, else the name
// of the log's folder.
func sessionID(name string) string {
	id := filepath.Base(filepath.Dir(name))
	var man struct{ SessionID string }
	if mdata, err := importer.ReadSmall(filepath.Join(filepath.Dir(name), "manifest.json"), 1<<20); err == nil {
		if json.Unmarshal(mdata, &man) == nil && man.SessionID != "" {
			id = man.SessionID
		}
	}
	return id
}

// reader makes a session of a log's events.
type reader struct {
	name string
	res  *importer.Result
	t    *importer.Transcript
	// An assistant message whose attempt was begun is kept once it is
	// committed.
	begun, committed     map[string]bool
	cwd, model, provider string
	created, updated     time.Time
}

// payloads decodes each event's payload (nil for one that is not
// base64, a problem), and notes the attempts begun and committed.
func (r *reader) payloads(evs []event) [][]byte {
	r.begun, r.committed = map[string]bool{}, map[string]bool{}
	payloads := make([][]byte, len(evs))
	for i, ev := range evs {
		p, err := base64.StdEncoding.DecodeString(ev.Payload)
		if err != nil {
			r.res.Problemf(r.name, 0, fmt.Sprintf("event %d (%s): a payload that is not base64", ev.Seq, importer.TypeName(ev.Kind)))
			continue
		}
		payloads[i] = p
		if ev.Kind == "assistant/attempt" {
			var a struct{ Action, MessageID string }
			if json.Unmarshal(p, &a) == nil {
				switch a.Action {
				case "begin":
					r.begun[a.MessageID] = true
				case "commit":
					r.committed[a.MessageID] = true
				}
			}
		}
	}
	return payloads
}

// event reads event ev, its payload p, at the time of its batch.
func (r *reader) event(ev event, p []byte, at time.Time) {
	switch ev.Kind {
	case "message/complete":
		r.message(ev, p, at)
	case "model/context-replace":
		r.contextReplace(ev, p, at)
	case "session/config":
		var c struct{ ModelRef string }
		if json.Unmarshal(p, &c) == nil && c.ModelRef != "" {
			r.provider, r.model, _ = strings.Cut(c.ModelRef, "/")
			if r.model == "" {
				r.provider, r.model = "", c.ModelRef
			}
		}
	case "assistant/attempt", "tool/call", "tool/start", "tool/result", "turn/start", "turn/end":
		// The messages hold what these repeat.
	default:
		r.res.Skip(importer.TypeName(ev.Kind))
	}
}

// message reads a completed message; the host's first user message
// names the workspace.
func (r *reader) message(ev event, p []byte, at time.Time) {
	var w struct{ Message message }
	if err := json.Unmarshal(p, &w); err != nil {
		r.res.Problemf(r.name, 0, fmt.Sprintf("event %d: a message that is not Reasonix's: %v", ev.Seq, err))
		return
	}
	m := w.Message
	if m.Role == "user" && m.Origin == "host" {
		if c := workspace().FindStringSubmatch(importer.JSONText(m.Content)); c != nil {
			var dir string
			if json.Unmarshal([]byte(c[1]), &dir) == nil {
				r.cwd = dir
			}
		}
	}
	if m.Role == "assistant" && r.begun[m.ID] && !r.committed[m.ID] {
		r.res.Skip("discarded-attempt")
		return
	}
	addMessage(r.t, m, ev.Seq, at, r.model, r.provider)
}

// contextReplace reads a context replaced by a compaction: its summary.
func (r *reader) contextReplace(ev event, p []byte, at time.Time) {
	var w struct {
		Reason   string
		Messages []message
	}
	if err := json.Unmarshal(p, &w); err != nil {
		r.res.Problemf(r.name, 0, fmt.Sprintf("event %d: a context that is not Reasonix's: %v", ev.Seq, err))
		return
	}
	summary := ""
	for _, m := range w.Messages {
		if s, ok := compactionSummary(importer.JSONText(m.Content)); ok && m.Role == "user" {
			summary = s
		}
	}
	if summary == "" {
		r.res.Skip("context-replace")
		return
	}
	mid := "compaction-" + strconv.FormatInt(ev.Seq, 10)
	r.t.Add(&loom.Message{ID: mid, Role: loom.RoleSummary, CreatedAt: at, Usage: loom.Usage{Compactions: 1},
		Parts: []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: summary}}})
}

// compactionSummary is the summary a compaction put in the context, the
// text inside its <compaction-summary> tags less the line that
// introduces it.
func compactionSummary(text string) (string, bool) {
	inner, ok := strings.CutPrefix(strings.TrimSpace(text), "<compaction-summary>")
	if !ok {
		return "", false
	}
	inner, _, _ = strings.Cut(inner, "</compaction-summary>")
	inner = strings.TrimSpace(inner)
	if first, rest, ok := strings.Cut(inner, "\n"); ok && strings.HasPrefix(first, "Summary of earlier conversation") {
		inner = strings.TrimSpace(rest)
	}
	return inner, inner != ""
}

// addMessage adds one message/complete's message to t.
func addMessage(t *importer.Transcript, m message, seq int64, at time.Time, model, provider string) {
	mid := cmp.Or(importer.LineID(m.ID), "event-"+strconv.FormatInt(seq, 10))
	if m.CreatedAt > 0 {
		at = importer.Millis(float64(m.CreatedAt))
	}
	switch m.Role {
	case "system":
		// Its system prompt: what it was told, kept, not the
		// conversation.
		t.Add(&loom.Message{ID: mid, Role: loom.RoleSystem, CreatedAt: at, Parts: importer.TextParts(mid, loom.PartText, m.Content)})
	case "user":
		if m.Origin == "host" {
			// The session context Reasonix adds before each prompt.
			t.Add(&loom.Message{ID: mid, Role: loom.RoleSystem, CreatedAt: at, Parts: importer.TextParts(mid, loom.PartText, m.Content)})
			return
		}
		t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at, Parts: importer.TextParts(mid, loom.PartText, m.Content)})
	case "assistant":
		msg := &loom.Message{ID: mid, Role: loom.RoleAssistant, CreatedAt: at, Model: model, Provider: provider}
		if strings.TrimSpace(m.ReasoningContent) != "" {
			msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/r", Type: loom.PartReasoning, Text: m.ReasoningContent})
		}
		msg.Parts = append(msg.Parts, importer.TextParts(mid, loom.PartText, m.Content)...)
		for i, c := range m.ToolCalls {
			msg.Parts = append(msg.Parts, importer.ToolCall(mid+"/t"+strconv.Itoa(i), c.ID, c.Name, c.Arguments))
		}
		t.Add(msg)
	case "tool":
		t.Complete(importer.LineID(m.ToolCallID), importer.JSONText(m.Content), m.RunState == "failed", at)
	default:
		t.Res.Skip("unknown:" + importer.TypeName(m.Role))
	}
}
