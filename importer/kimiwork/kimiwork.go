// Package kimiwork reads the conversations of Kimi Work (the Kimi
// desktop app's agent, its "daimon" runtime) for loom's importer.
//
// Kimi Work runs the Kimi Code kernel and keeps its sessions as the
// kernel does: under the app's data directory,
// daimon-share/daimon/runtime/kimi-code/home/sessions/, a directory per
// workspace (wd_<name>_<hash>), in it one per session, and in each
// session's agents/<agent>/ a wire.jsonl, one JSON record a line. Only
// the conv-* sessions are conversations the user had; the app's own
// (ctitle-* titles, sklsum-* skill summaries, dvlt-*) are passed over.
//
// The records, each with its time (timestamp in seconds, or time or
// created_at in milliseconds):
//
//   - config.update names the model (modelAlias) and the working
//     directory (cwd);
//   - turn.prompt and turn.steer hold what the user typed, input's text
//     parts;
//   - context.append_loop_event holds an event of the agent's loop:
//     content.part (a text part, or a think part: reasoning), tool.call
//     (toolCallId, name, args), tool.result (toolCallId, result with
//     output, message and isError), step.begin and step.end (the model
//     call's model, finishReason and usage: inputOther, inputCacheRead,
//     inputCacheCreation, output);
//   - usage.record gives the usage of a step whose end came before it.
//
// A step's text, reasoning and calls are one reply, with the step's
// usage (one model call); each call is completed by its result.
//
// Learnt from agentsview's reader of Kimi's wire logs (wesm/agentsview
// at a5de5daca0005d2794f6fe8e0412795cb2873e4b, internal/parser/kimi.go,
// and its registry's note on Kimi Work in internal/parser/types.go);
// Kimi Work is a desktop app that cannot run here, and the files in
// testdata are built to that format.
package kimiwork

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Kimi Work's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Kimi Work's name in loom.
const Tool = "kimi-work"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Moonshot AI's, whose Kimi models it calls.
func (Format) Provider() string { return "moonshot" }

// sessions is where, under the app's data directory, the kernel keeps
// its sessions.
var kernelSessions = []string{"daimon-share", "daimon", "runtime", "kimi-code", "home", "sessions"}

// Roots are $LOOM_KIMI_WORK_DIR when set, else the sessions of the
// kimi-desktop app's data directory on Linux, macOS and Windows.
func (Format) Roots(env func(string) string, home string) []string {
	var dirs [][]string
	for _, app := range [][]string{
		{".config", "kimi-desktop"}, {".local", "share", "kimi-desktop"},
		{"Library", "Application Support", "kimi-desktop"}, {"AppData", "Roaming", "kimi-desktop"},
	} {
		dirs = append(dirs, append(append([]string(nil), app...), kernelSessions...))
	}
	return importer.HomeDirs(env, home, "LOOM_KIMI_WORK_DIR", dirs...)
}

// Bundles lists each agent's wire.jsonl of each conversation under
// root, one bundle each.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		if !IsWire(path) {
			return false
		}
		return strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(path)))), "conv-")
	})
}

type record struct {
	Type       string          `json:"type"`
	Timestamp  *float64        `json:"timestamp"`
	Time       *float64        `json:"time"`
	CreatedAt  *float64        `json:"created_at"`
	ModelAlias string          `json:"modelAlias"`
	Model      string          `json:"model"`
	Cwd        string          `json:"cwd"`
	Input      json.RawMessage `json:"input"`
	Usage      *usage          `json:"usage"`
	Event      *loopEvent      `json:"event"`
}

// loopEvent is a context.append_loop_event record's event.
type loopEvent struct {
	Type string `json:"type"`
	Part struct {
		Type  string `json:"type"`
		Text  string `json:"text"`
		Think string `json:"think"`
	} `json:"part"`
	Name       string          `json:"name"`
	Args       json.RawMessage `json:"args"`
	ToolCallID string          `json:"toolCallId"`
	Result     struct {
		IsError bool            `json:"isError"`
		Output  json.RawMessage `json:"output"`
		Message string          `json:"message"`
	} `json:"result"`
	Model string `json:"model"`
	Usage *usage `json:"usage"`
}

type usage struct {
	InputOther         float64 `json:"inputOther"`
	InputCacheRead     float64 `json:"inputCacheRead"`
	InputCacheCreation float64 `json:"inputCacheCreation"`
	Output             float64 `json:"output"`
}

func (u *usage) loom() loom.Usage {
	return loom.Usage{InputTokens: importer.Tokens(u.InputOther), CacheReadTokens: importer.Tokens(u.InputCacheRead),
		CacheWriteTokens: importer.Tokens(u.InputCacheCreation), OutputTokens: importer.Tokens(u.Output), APICalls: 1}
}

func (r *record) at() time.Time {
	switch {
	case r.Timestamp != nil:
		return importer.Millis(*r.Timestamp * 1000)
	case r.Time != nil:
		return importer.Millis(*r.Time)
	case r.CreatedAt != nil:
		return importer.Millis(*r.CreatedAt)
	}
	return time.Time{}
}

// Read reads one agent's wire log.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	return ReadWire(ctx, Tool, b.Name())
}

// IsWire reports whether path is an agent's wire log of the Kimi Code
// kernel's layout: <session>/agents/<agent>/wire.jsonl.
func IsWire(path string) bool {
	return filepath.Base(path) == "wire.jsonl" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "agents"
}

// ReadWire reads the kernel's wire log name for tool (Kimi Work's, and
// Kimi Code's own sessions in ~/.kimi-code).
func ReadWire(ctx context.Context, tool, name string) (*importer.Result, error) {
	f, _, err := importer.Open(name, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	defer f.Close()
	res := &importer.Result{}
	w := &wire{name: name, res: res, t: &importer.Transcript{Res: res}}
	if _, err := importer.SessionLines(ctx, name, f, res, w.line); err != nil {
		return nil, err
	}
	// The agent's directory, under its session's: <session>/agents/<agent>.
	agentDir := filepath.Dir(name)
	session := filepath.Base(filepath.Dir(filepath.Dir(agentDir)))
	id := importer.LineID(session + "/" + filepath.Base(agentDir))
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: name, Messages: w.t.Msgs, Cwd: w.cwd, Model: w.model,
		Provider: "moonshot", CreatedAt: w.created, UpdatedAt: w.updated}
	res.Keep(s, "session")
	return res, nil
}

// wire reads a wire log's records in order.
type wire struct {
	name                 string
	res                  *importer.Result
	t                    *importer.Transcript
	model, cwd           string
	reply                *loom.Message // the step's reply, while it is made
	unpriced             *loom.Message // a reply whose usage a usage.record brings
	created, updated, at time.Time
}

// line reads record n.
func (w *wire) line(n int, line []byte) {
	var r record
	if !w.res.DecodeLine(w.name, n, line, &r) {
		return
	}
	if ts := r.at(); !ts.IsZero() {
		w.at = ts
		if w.created.IsZero() {
			w.created = ts
		}
		w.updated = ts
	}
	mid := "line-" + strconv.Itoa(n)
	switch r.Type {
	case "metadata":
	case "config.update":
		w.model, w.cwd = cmp.Or(r.ModelAlias, w.model), cmp.Or(r.Cwd, w.cwd)
	case "turn.prompt", "turn.steer":
		w.reply = nil
		parts := importer.TextParts(mid, loom.PartText, r.Input)
		w.t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: w.at, Parts: parts})
	case "usage.record":
		if r.Usage != nil && w.unpriced != nil {
			w.unpriced.Usage = r.Usage.loom()
			w.unpriced.Model = cmp.Or(r.Model, w.unpriced.Model)
			w.unpriced = nil
		}
	case "context.append_loop_event":
		if r.Event == nil {
			w.res.Skip("empty-event")
			return
		}
		w.event(mid, r.Event)
	default:
		w.res.Skip(importer.TypeName(r.Type))
	}
}

// event reads an event of the agent's loop, record mid's.
func (w *wire) event(mid string, ev *loopEvent) {
	switch ev.Type {
	case "content.part":
		switch {
		case ev.Part.Type == "text" && strings.TrimSpace(ev.Part.Text) != "":
			w.part(mid, loom.Part{Type: loom.PartText, Text: ev.Part.Text})
		case ev.Part.Type == "think" && strings.TrimSpace(cmp.Or(ev.Part.Think, ev.Part.Text)) != "":
			w.part(mid, loom.Part{Type: loom.PartReasoning, Text: cmp.Or(ev.Part.Think, ev.Part.Text)})
		default:
			w.res.Skip("part:" + importer.TypeName(ev.Part.Type))
		}
	case "tool.call":
		w.part(mid, importer.ToolCall("", ev.ToolCallID, ev.Name, ev.Args))
	case "tool.result":
		out := toolOutput(ev.Result.Output)
		w.t.Complete(importer.LineID(ev.ToolCallID), cmp.Or(out, ev.Result.Message), ev.Result.IsError, w.at)
	case "step.begin":
		w.reply = nil
	case "step.end":
		if w.reply != nil {
			w.reply.Model = cmp.Or(ev.Model, w.reply.Model)
			if ev.Usage != nil {
				w.reply.Usage = ev.Usage.loom()
			} else {
				w.unpriced = w.reply
			}
		}
		w.reply = nil
	default:
		w.res.Skip("event:" + importer.TypeName(ev.Type))
	}
}

// part adds p to the step's reply, which it starts as message mid when
// there is none (or another message came after it).
func (w *wire) part(mid string, p loom.Part) {
	if w.reply == nil || w.t.Last() != w.reply {
		p.ID = mid + "/0"
		w.reply = &loom.Message{ID: mid, Role: loom.RoleAssistant, CreatedAt: w.at, Model: w.model, Parts: []loom.Part{p}}
		w.t.Add(w.reply)
		return
	}
	p.ID = strconv.Itoa(len(w.reply.Parts))
	w.t.Join(mid, loom.RoleAssistant, w.at, p)
}

// toolOutput is a result's output: a string, or the text of a list of
// text parts, else its JSON.
func toolOutput(raw json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var texts []string
		for _, p := range parts {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return importer.JSONText(raw)
}
