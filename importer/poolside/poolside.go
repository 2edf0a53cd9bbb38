// Package poolside reads the trajectories of Poolside's agent CLI
// (pool) for loom's importer.
//
// pool keeps each session as a trajectory, trajectories/trajectory-
// <kind>_<id>.ndjson in its state directory (~/.local/state/poolside on
// Linux, ~/Library/Application Support/poolside on macOS,
// %APPDATA%\poolside on Windows): a JSON event a line, each an id, an
// optional step_id, a timestamp and a type with its body under the
// type's name in snake case: session.start (workspace,
// working_directories), session.input (the user's prompt),
// thought.end (the model's thought), assistant_message.end (its text),
// tool_call.parsed (a call: id, name, args), tool_call.result (id,
// observation, is_error), tool_call.inference.start (the model of a
// request) and tool_call.inference.end (its tokens), session.exit and
// session.error.
//
// What becomes what: a prompt a user message; the thoughts, texts and
// calls after it one assistant message, each call completed by its
// result; an inference's tokens the usage of the reply they went to
// (the next one, or the last when none follows) and its model the
// reply's; the starts of messages and thoughts carry nothing and are
// passed over; exits and errors are counted as skipped.
//
// Learnt from agentsview's reader of it (kenn-io/agentsview at
// 538600744d1b87614d3746d36a0966c1f2ac1cad, internal/parser/poolside.go,
// its tests' trajectories in poolside_test.go, and its registry's
// places in types.go); Poolside's CLI needs its service, so it was not
// run. The fixtures in testdata are built to that format
// (testdata/README.md).
package poolside

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads pool's trajectories. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Poolside's agent's name in loom.
const Tool = "poolside"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Poolside's, which serves its models.
func (Format) Provider() string { return "poolside" }

// Roots are $LOOM_POOLSIDE_DIR when set, else pool's state directory
// on Linux, macOS and Windows.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_POOLSIDE_DIR",
		[]string{".local", "state", "poolside"},
		[]string{"Library", "Application Support", "poolside"},
		[]string{"AppData", "Roaming", "poolside"})
}

// Bundles lists each trajectory under root, one bundle each.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasPrefix(d.Name(), "trajectory-") && strings.HasSuffix(d.Name(), ".ndjson")
	})
}

type event struct {
	ID        string `json:"id"`
	StepID    string `json:"step_id"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Start     *struct {
		Workspace   string   `json:"workspace"`
		Directories []string `json:"working_directories"`
	} `json:"session_start"`
	Input *struct {
		Prompt string `json:"prompt"`
	} `json:"session_input"`
	Message *struct {
		Text string `json:"assistant_message"`
	} `json:"assistant_message_end"`
	Thought *struct {
		Text string `json:"thought"`
	} `json:"thought_end"`
	Call *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"tool_call_parsed"`
	Result *struct {
		ID          string `json:"id"`
		Observation string `json:"observation"`
		IsError     bool   `json:"is_error"`
	} `json:"tool_call_result"`
	Inference *struct {
		Request *struct {
			Model string `json:"model"`
		} `json:"chat_completion_request"`
	} `json:"tool_call_inference_start"`
	Tokens *struct {
		Input      int64 `json:"input_tokens"`
		Output     int64 `json:"output_tokens"`
		CacheRead  int64 `json:"cache_read_input_tokens"`
		CacheWrite int64 `json:"cache_write_input_tokens"`
	} `json:"tool_call_inference_end"`
}

// Read reads one trajectory.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	f, _, err := importer.Open(name, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	defer f.Close()
	res := &importer.Result{}
	t := &importer.Transcript{Res: res}
	var cwd string
	models := map[string]string{} // by step
	model := ""
	var pending loom.Usage // tokens of inferences no reply has taken yet
	reply := func(mid string, e event, p loom.Part) {
		at := importer.ISOTime(e.Timestamp)
		// Under the reply's id: Join puts it there when the reply goes
		// on, a new reply's first part is its /0.
		p.ID = mid
		if last := t.Last(); last == nil || last.Role != loom.RoleAssistant {
			p.ID = mid + "/0"
		}
		m := t.Join(mid, loom.RoleAssistant, at, p)
		if m == nil || m.Role != loom.RoleAssistant {
			return
		}
		m.Model = cmp.Or(models[e.StepID], m.Model, model)
		m.Usage.Add(pending)
		pending = loom.Usage{}
	}
	lines := 0
	err = importer.Lines(ctx, f, func(n int, raw []byte) error {
		lines = n
		var e event
		if !res.DecodeLine(name, n, raw, &e) {
			return nil
		}
		mid := cmp.Or(importer.LineID(e.ID), fmt.Sprint(n))
		at := importer.ISOTime(e.Timestamp)
		switch {
		case e.Type == "session.start" && e.Start != nil:
			if len(e.Start.Directories) > 0 {
				cwd = e.Start.Directories[0]
			}
			cwd = cmp.Or(cwd, e.Start.Workspace)
		case e.Type == "session.input" && e.Input != nil:
			if strings.TrimSpace(e.Input.Prompt) == "" {
				res.Skip("empty-input")
				return nil
			}
			t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: e.Input.Prompt}}})
		case e.Type == "thought.end" && e.Thought != nil:
			if strings.TrimSpace(e.Thought.Text) != "" {
				reply(mid, e, loom.Part{Type: loom.PartReasoning, Text: e.Thought.Text})
			}
		case e.Type == "assistant_message.end" && e.Message != nil:
			if strings.TrimSpace(e.Message.Text) != "" {
				reply(mid, e, loom.Part{Type: loom.PartText, Text: e.Message.Text})
			}
		case e.Type == "tool_call.parsed" && e.Call != nil:
			reply(mid, e, importer.ToolCall(mid, e.Call.ID, e.Call.Name, e.Call.Args))
		case e.Type == "tool_call.result" && e.Result != nil:
			t.Complete(e.Result.ID, e.Result.Observation, e.Result.IsError, at)
		case e.Type == "tool_call.inference.start" && e.Inference != nil && e.Inference.Request != nil:
			model = cmp.Or(e.Inference.Request.Model, model)
			if e.StepID != "" {
				models[e.StepID] = model
			}
		case e.Type == "tool_call.inference.end" && e.Tokens != nil:
			pending.Add(loom.Usage{InputTokens: e.Tokens.Input, OutputTokens: e.Tokens.Output,
				CacheReadTokens: e.Tokens.CacheRead, CacheWriteTokens: e.Tokens.CacheWrite, APICalls: 1})
		case e.Type == "assistant_message.start", e.Type == "thought.start":
			// Their ends carry what they began.
		default:
			res.Skip(importer.TypeName(e.Type))
		}
		return nil
	}, res.TooLong(name))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", Tool, name, err)
	}
	res.LinesRead(name, 0, lines)
	if last := lastReply(t.Msgs); last != nil {
		last.Usage.Add(pending)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), "trajectory-"), ".ndjson")
	s := t.Session(importer.LineID(id), name)
	if s == nil {
		return res, nil
	}
	s.Cwd, s.Provider = cwd, "poolside"
	if last := lastReply(s.Messages); last != nil {
		s.Model = last.Model
	}
	res.Keep(s, "session")
	return res, nil
}

// lastReply is the last assistant message of msgs, nil when none.
func lastReply(msgs []*loom.Message) *loom.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == loom.RoleAssistant {
			return msgs[i]
		}
	}
	return nil
}
