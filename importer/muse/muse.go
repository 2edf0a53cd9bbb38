// Package muse reads the sessions of Muse Code (Meta's coding agent)
// for loom's importer.
//
// Muse Code keeps an append-only event log per session at
// ~/.local/share/muse/sessions/<year>/<month>/<day>/<session id>/session.jsonl
// ($XDG_DATA_HOME replaces ~/.local/share); a sub-agent's log is
// subagent/<agent id>/session.jsonl inside its session's directory.
// Each line is a record: its stream (the session's id), a sequence
// number, the time in microseconds, a payload_type and its payload. The
// session's metadata (runtime.session.metadata) names its workspace
// root; the conversation is in runtime.session records of kind run:
// started (the prompt), assistant_message_committed (a reply's text),
// assistant_tool_calls_committed (calls: name, call_id, args) and
// tool_result_batch_committed (each call's result text).
//
// What becomes what: the prompt a user message, a reply's text and its
// calls one assistant message, a result the output of its call; the
// workspace root is the working directory, and a sub-agent's log a
// sub-agent of its session. Other records (model and token telemetry,
// diagnostics) are counted as skipped: Muse does not tie a model
// call's tokens to a reply, so no usage is imported.
//
// Muse Code is not on npm: the fixtures in testdata are written to the
// event schema its upstream documents, as cass's reader of it reads it.
package muse

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Muse Code's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Muse Code's name in loom.
const Tool = "muse"

const logName = "session.jsonl"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Meta's, whose models Muse Code calls.
func (Format) Provider() string { return "meta" }

// Roots is Muse's sessions directory.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, "XDG_DATA_HOME", ".local", "share"), "muse", "sessions")
}

// Bundles lists each session's and sub-agent's log under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool { return d.Name() == logName })
}

type record struct {
	Stream struct {
		ID string `json:"id"`
	} `json:"stream"`
	RecordedAt  float64 `json:"recorded_at"`
	PayloadType string  `json:"payload_type"`
	Payload     struct {
		Kind   string `json:"kind"`
		Record struct {
			WorkspaceRoot string `json:"workspace_root"`
		} `json:"record"`
		Event struct {
			Kind      string `json:"kind"`
			Prompt    string `json:"prompt"`
			Text      string `json:"text"`
			ToolCalls []struct {
				Name   string          `json:"name"`
				CallID string          `json:"call_id"`
				Args   json.RawMessage `json:"args"`
			} `json:"tool_calls"`
			Results []struct {
				ToolCallID string `json:"tool_call_id"`
				Text       string `json:"text"`
				IsError    bool   `json:"is_error"`
			} `json:"results"`
		} `json:"event"`
	} `json:"payload"`
}

// Read reads one log.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &importer.Result{}
	t := &importer.Transcript{Res: res}
	at, id, cwd := fi.ModTime().UTC(), "", ""
	err = importer.Lines(ctx, f, func(n int, line []byte) error {
		var r record
		if !res.DecodeLine(name, n, line, &r) {
			return nil
		}
		if tm := importer.Millis(r.RecordedAt / 1000); !tm.IsZero() {
			at = tm
		}
		id = cmp.Or(id, importer.LineID(r.Stream.ID))
		mid := strconv.Itoa(n)
		ev := r.Payload.Event
		switch {
		case r.PayloadType == "runtime.session.metadata":
			cwd = cmp.Or(cwd, r.Payload.Record.WorkspaceRoot)
			res.Skip("metadata")
		case r.PayloadType != "runtime.session" || r.Payload.Kind != "run":
			res.Skip(importer.TypeName(cmp.Or(r.PayloadType, "untyped")))
		case ev.Kind == "started":
			t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at, Parts: importer.TextParts(mid, loom.PartText, quote(ev.Prompt))})
		case ev.Kind == "assistant_message_committed":
			t.Join(mid, loom.RoleAssistant, at, importer.TextParts(mid, loom.PartText, quote(ev.Text))...)
		case ev.Kind == "assistant_tool_calls_committed":
			var calls []loom.Part
			for i, c := range ev.ToolCalls {
				calls = append(calls, importer.ToolCall(mid+"/call/"+strconv.Itoa(i), c.CallID, c.Name, c.Args))
			}
			t.Join(mid, loom.RoleAssistant, at, calls...)
		case ev.Kind == "tool_result_batch_committed":
			for _, r := range ev.Results {
				t.Complete(r.ToolCallID, r.Text, r.IsError, at)
			}
		default:
			res.Skip("run:" + importer.TypeName(ev.Kind))
		}
		return nil
	}, res.TooLong(name))
	if err != nil {
		return nil, fmt.Errorf("muse: %s: %w", name, err)
	}
	dir := filepath.Dir(name)
	parent := ""
	if filepath.Base(filepath.Dir(dir)) == "subagent" {
		parent = filepath.Base(filepath.Dir(filepath.Dir(dir)))
	}
	id = cmp.Or(id, filepath.Base(dir))
	if parent != "" && !strings.HasPrefix(id, parent) {
		id = parent + "/" + filepath.Base(dir)
	}
	if s := t.Session(id, name); s != nil {
		s.Cwd = cwd
		if parent != "" {
			s.Kind, s.ParentSourceID = loom.KindSubagent, parent
		}
		res.Sessions = append(res.Sessions, s)
	}
	return res, nil
}

// quote is s as a JSON string, for TextParts.
func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
