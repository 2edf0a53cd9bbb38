// Package traeagent reads the trajectories of Trae Agent (bytedance's
// trae-cli, the Python package trae-agent) for loom's importer.
//
// trae-cli run records each run in one JSON document, rewritten after
// every model call and step: trajectories/trajectory_<YYYYmmdd_HHMMSS>.json
// below the directory it was started in, or the file its
// --trajectory-file names. The document (trae_agent/utils/
// trajectory_recorder.py) holds the task, start_time and end_time (local
// times without a zone), provider, model, max_steps, llm_interactions,
// agent_steps, success, final_result and execution_time. Each of
// llm_interactions is one call to the model: its timestamp, provider,
// model, the input_messages new since the call before (the client keeps
// the rest: the system prompt and the task for the first; tool results,
// as user messages with a tool_result, and a reflection after), and the
// response: content, model, usage (input_tokens, output_tokens,
// cache_read_input_tokens, cache_creation_input_tokens,
// reasoning_tokens) and tool_calls (call_id, name, arguments). The
// agent_steps repeat those per step, and are not read.
//
// A trajectory is a session named for its file. The interactions' input
// messages are loom messages of their roles (system, user; an
// assistant's, a reflection, is an assistant message without usage),
// each tool result completing its call (an error when it did not
// succeed); each response is an assistant message with its calls and
// usage. The task_done call that ends a run is never run, and stays
// running. Times without a zone are taken as UTC.
//
// The format is the one Trae Agent's own TrajectoryRecorder writes, run
// from its source at commit e839e559ac61bdd0e057c375dd1dee391fee797d
// (testdata/real).
package traeagent

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Trae Agent's trajectories. The zero value is ready to
// use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Trae Agent's name in loom.
const Tool = "trae-agent"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": every response names its model.
func (Format) Provider() string { return "" }

// Roots is none: Trae Agent writes its trajectories below the directory
// it runs in, so loom reads the projects it is given.
func (Format) Roots(func(string) string, string) []string { return nil }

// Bundles lists every trajectory_*.json under root, leaving out
// dependency, build and version-control directories; root itself may be
// one file, read whatever its name (a --trajectory-file).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.NamedFiles(ctx, Tool, root, func(name string) bool {
		return strings.HasPrefix(name, "trajectory_") && strings.HasSuffix(name, ".json")
	})
}

// trajectory is a trajectory file.
type trajectory struct {
	Task         *string       `json:"task"`
	StartTime    string        `json:"start_time"`
	Model        string        `json:"model"`
	Interactions []interaction `json:"llm_interactions"`
}

// interaction is one call to the model.
type interaction struct {
	Timestamp string `json:"timestamp"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	Input     []struct {
		Role       string      `json:"role"`
		Content    *string     `json:"content"`
		ToolCall   *toolCall   `json:"tool_call"`
		ToolResult *toolResult `json:"tool_result"`
	} `json:"input_messages"`
	Response *struct {
		Content   *string    `json:"content"`
		Model     *string    `json:"model"`
		ToolCalls []toolCall `json:"tool_calls"`
		Usage     *struct {
			Input      *float64 `json:"input_tokens"`
			Output     *float64 `json:"output_tokens"`
			CacheRead  *float64 `json:"cache_read_input_tokens"`
			CacheWrite *float64 `json:"cache_creation_input_tokens"`
			Reasoning  *float64 `json:"reasoning_tokens"`
		} `json:"usage"`
	} `json:"response"`
}

type toolCall struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type toolResult struct {
	CallID  string  `json:"call_id"`
	Success bool    `json:"success"`
	Result  *string `json:"result"`
	Error   *string `json:"error"`
}

// Read reads one trajectory file.
func (Format) Read(_ context.Context, b importer.Bundle) (*importer.Result, error) {
	return importer.ReadWhole(Tool, b, parse)
}

// localTime is a time Python's datetime.isoformat wrote, without a zone
// (taken as UTC) or with one; zero when it is neither.
func localTime(s string) time.Time {
	for _, layout := range []string{"2006-01-02T15:04:05.999999", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// parse reads a trajectory's data; modified is its file's time, that of
// a run whose times cannot be read.
func parse(name string, data []byte, modified time.Time) *importer.Result {
	res := &importer.Result{}
	var t trajectory
	if err := json.Unmarshal(data, &t); err != nil || t.Task == nil {
		reason := "no task"
		if err != nil {
			reason = importer.Excerpt(err.Error())
		}
		res.Unreadablef(name, 0, "not a Trae Agent trajectory: "+reason)
		return res
	}
	res.CheckUTF8(name, 0, data)
	s := &importer.Session{SourceID: strings.TrimSuffix(filepath.Base(name), ".json"), Kind: loom.KindMain, Path: name,
		Model: importer.Clip(t.Model, 256)}
	calls := importer.ToolCalls{}
	at := cmp.Or(localTime(t.StartTime), modified)
	add := func(m *loom.Message) {
		if len(m.Parts) == 0 {
			res.Skip("empty-" + m.Role + "-message")
			return
		}
		s.Messages = append(s.Messages, m)
	}
	for i, it := range t.Interactions {
		if tm := localTime(it.Timestamp); !tm.IsZero() {
			at = tm
		}
		problem := func(reason string) { res.Problemf(name, 0, "interaction "+strconv.Itoa(i)+": "+reason) }
		for j, in := range it.Input {
			mid := "i" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
			msg := &loom.Message{ID: mid, CreatedAt: at, CompletedAt: &at}
			var blocks []importer.ContentBlock
			if in.Content != nil {
				blocks = append(blocks, importer.ContentBlock{Type: "text", Text: *in.Content})
			}
			switch in.Role {
			case "system":
				msg.Role = loom.RoleSystem
			case "user":
				msg.Role = loom.RoleUser
				if in.Content != nil && s.Cwd == "" {
					s.Cwd = projectRoot(*in.Content)
				}
			case "assistant":
				msg.Role = loom.RoleAssistant
			default:
				res.Skip("role:" + importer.TypeName(in.Role))
				continue
			}
			if r := in.ToolResult; r != nil {
				out := cmp.Or(r.Result, new(string))
				if !r.Success && r.Error != nil {
					out = r.Error
				}
				content, _ := json.Marshal(*out)
				blocks = append(blocks, importer.ContentBlock{Type: "tool_result", ToolUseID: r.CallID, Content: content, IsError: !r.Success})
			}
			calls.AddBlocks(res, msg, blocks, at, problem)
			if in.ToolResult != nil && in.Content == nil {
				continue // a tool's result alone completes its call
			}
			add(msg)
		}
		if it.Response == nil {
			res.Skip("interaction-without-response")
			continue
		}
		r := it.Response
		mid := "i" + strconv.Itoa(i) + "-r"
		msg := &loom.Message{ID: mid, Role: loom.RoleAssistant, CreatedAt: at, CompletedAt: &at,
			Model: importer.Clip(cmp.Or(deref(r.Model), it.Model), 256)}
		var blocks []importer.ContentBlock
		if r.Content != nil {
			blocks = append(blocks, importer.ContentBlock{Type: "text", Text: *r.Content})
		}
		for _, c := range r.ToolCalls {
			input := c.Arguments
			if !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			blocks = append(blocks, importer.ContentBlock{Type: "tool_use", ID: c.CallID, Name: c.Name, Input: input})
		}
		calls.AddBlocks(res, msg, blocks, at, problem)
		if u := r.Usage; u != nil {
			msg.Usage = usage(it.Provider, num(u.Input), num(u.Output), num(u.CacheRead), num(u.CacheWrite), num(u.Reasoning))
		}
		s.Model = cmp.Or(msg.Model, s.Model)
		add(msg)
	}
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res
	}
	s.CreatedAt, s.UpdatedAt = s.Messages[0].CreatedAt, s.Messages[len(s.Messages)-1].CreatedAt
	res.Sessions = append(res.Sessions, s)
	return res
}

// usage is a response's usage in loom's terms. Trae Agent's OpenAI-form
// clients take input_tokens from an API whose input counts the cached
// tokens; its Anthropic client, from one whose input does not.
func usage(provider string, in, out, cacheRead, cacheWrite, reasoning int64) loom.Usage {
	u := loom.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: cacheRead, CacheWriteTokens: cacheWrite, ReasoningTokens: reasoning}
	if provider != "anthropic" {
		u.InputTokens = max(u.InputTokens-u.CacheReadTokens, 0)
	}
	if u != (loom.Usage{}) {
		u.APICalls = 1
	}
	return u
}

// projectRoot is the directory TraeAgent.new_task names in the task's
// message ("[Project root path]:\n<dir>\n\n"); "" when there is none.
func projectRoot(content string) string {
	rest, ok := strings.CutPrefix(content, "[Project root path]:\n")
	if !ok {
		return ""
	}
	dir, _, _ := strings.Cut(rest, "\n")
	if !filepath.IsAbs(dir) {
		return ""
	}
	return dir
}

func num(f *float64) int64 {
	if f == nil {
		return 0
	}
	return importer.Tokens(*f)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
