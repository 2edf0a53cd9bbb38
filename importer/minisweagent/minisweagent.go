// Package minisweagent reads the trajectories of mini-swe-agent (the
// mini command of the Python package mini-swe-agent) for loom's
// importer.
//
// mini writes each run as one JSON document, rewritten after every
// step: by default last_mini_run.traj.json in its global config
// directory ($MSWEA_GLOBAL_CONFIG_DIR, else platformdirs'
// user_config_dir("mini-swe-agent"): $XDG_CONFIG_HOME/mini-swe-agent or
// ~/.config/mini-swe-agent, ~/Library/Application Support/mini-swe-agent
// on macOS), or the file -o names; the benchmark runners write
// <instance>.traj.json. The document (trajectory_format
// mini-swe-agent-1.1) holds info (model_stats, the config of the
// agent, model and environment, mini_version, exit_status, submission)
// and messages in the Chat Completions form the model was sent, each
// with extra: system, user (the task rendered into the instance
// template; or, with extra.interrupt_type, the program's own feedback),
// assistant (content, tool_calls and, in extra, the parsed actions, the
// API response with its usage, and the time in seconds), tool (a
// command's rendered output for tool_call_id, extra.raw_output,
// returncode, exception_info), and exit (the submission and
// exit_status).
//
// A run is a session named for its file and its first reply's time (a
// new run into the same file is a new session). system and user are
// loom messages of their roles; feedback the program sends as user is a
// system message; a reply is an assistant message whose calls a tool
// message completes (with an error when the command raised); exit is
// counted as skipped.
//
// The format is the one mini-swe-agent 2.4.6's own code writes, run
// from its source at commit a83fcae82d2a08f0ee0c688f9d137b3566c097f8
// (testdata/real).
package minisweagent

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads mini-swe-agent's trajectories. The zero value is ready to
// use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is mini-swe-agent's name in loom.
const Tool = "mini-swe-agent"

// configEnv moves mini-swe-agent's global config directory.
const configEnv = "MSWEA_GLOBAL_CONFIG_DIR"

// suffix ends the name of every trajectory file.
const suffix = ".traj.json"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": every reply names its model.
func (Format) Provider() string { return "" }

// Roots is the global config directory: $MSWEA_GLOBAL_CONFIG_DIR, else
// $XDG_CONFIG_HOME/mini-swe-agent (~/.config when unset), and macOS's
// ~/Library/Application Support/mini-swe-agent.
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.Getenv(env)(configEnv); d != "" {
		return []string{d}
	}
	return importer.ConfigDirs(env, home, "mini-swe-agent")
}

// Bundles lists each trajectory file under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), suffix) && len(d.Name()) > len(suffix)
	})
}

// trajectory is a trajectory file.
type trajectory struct {
	Info struct {
		Config struct {
			Model struct {
				ModelName string `json:"model_name"`
			} `json:"model"`
			Environment struct {
				Cwd string `json:"cwd"`
			} `json:"environment"`
		} `json:"config"`
	} `json:"info"`
	Messages         []json.RawMessage `json:"messages"`
	TrajectoryFormat string            `json:"trajectory_format"`
}

// message is one of a trajectory's messages.
type message struct {
	Role             string                  `json:"role"`
	Content          json.RawMessage         `json:"content"`
	ReasoningContent string                  `json:"reasoning_content"`
	ToolCallID       string                  `json:"tool_call_id"`
	ToolCalls        []importer.ChatToolCall `json:"tool_calls"`
	Extra            struct {
		Timestamp     float64 `json:"timestamp"`
		InterruptType string  `json:"interrupt_type"`
		ExceptionInfo string  `json:"exception_info"`
		Response      struct {
			Model string `json:"model"`
			Usage *struct {
				Prompt     float64 `json:"prompt_tokens"`
				Completion float64 `json:"completion_tokens"`
				Details    *struct {
					Cached float64 `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		} `json:"response"`
	} `json:"extra"`
}

// Read reads one trajectory file.
func (Format) Read(_ context.Context, b importer.Bundle) (*importer.Result, error) {
	return importer.ReadWhole(Tool, b, parse)
}

// parse reads a trajectory's data; modified is its file's time, the
// time of messages before the first that records one.
func parse(name string, data []byte, modified time.Time) *importer.Result {
	res := &importer.Result{}
	var t trajectory
	if err := json.Unmarshal(data, &t); err != nil || !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		reason := "not a JSON object"
		if err != nil {
			reason = importer.Excerpt(err.Error())
		}
		res.Unreadablef(name, 0, "not a mini-swe-agent trajectory: "+reason)
		return res
	}
	res.CheckUTF8(name, 0, data)
	msgs := make([]message, len(t.Messages))
	first := time.Time{}
	for i, raw := range t.Messages {
		if err := json.Unmarshal(raw, &msgs[i]); err != nil {
			res.Problemf(name, 0, "message "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
			msgs[i] = message{Role: "unreadable"}
			continue
		}
		if at := importer.UnixTime(msgs[i].Extra.Timestamp); first.IsZero() && !at.IsZero() {
			first = at
		}
	}
	id := strings.TrimSuffix(filepath.Base(name), suffix)
	if !first.IsZero() {
		id += "-" + strconv.FormatInt(first.Unix(), 10)
	} else {
		first = modified
	}
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: name, Cwd: t.Info.Config.Environment.Cwd,
		Model: importer.Clip(t.Info.Config.Model.ModelName, 256)}
	calls := importer.ToolCalls{}
	at := first
	for i, m := range msgs {
		if tm := importer.UnixTime(m.Extra.Timestamp); !tm.IsZero() {
			at = tm
		}
		if msg := readMessage(res, calls, name, i, &m, at); msg != nil {
			s.Messages = append(s.Messages, msg)
		}
	}
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res
	}
	s.CreatedAt, s.UpdatedAt = s.Messages[0].CreatedAt, s.Messages[len(s.Messages)-1].CreatedAt
	res.Sessions = append(res.Sessions, s)
	return res
}

// readMessage is message i as a loom message; nil when it is a tool's
// output (which completes its call), the exit, or cannot be read.
func readMessage(res *importer.Result, calls importer.ToolCalls, name string, i int, m *message, at time.Time) *loom.Message {
	problem := func(reason string) { res.Problemf(name, 0, "message "+strconv.Itoa(i)+": "+reason) }
	blocks, ok := importer.ContentBlocks(m.Content)
	if !ok && m.Role != "unreadable" && !importer.IsNull(m.Content) {
		problem("content is neither text nor parts")
		return nil
	}
	mid := "m" + strconv.Itoa(i)
	msg := &loom.Message{ID: mid, CreatedAt: at, CompletedAt: &at}
	switch {
	case m.Role == "unreadable":
		return nil
	case m.Role == "system", m.Role == "user" && m.Extra.InterruptType != "":
		msg.Role = loom.RoleSystem
	case m.Role == "user":
		msg.Role = loom.RoleUser
	case m.Role == "assistant":
		msg.Role, msg.Usage = loom.RoleAssistant, usage(m)
		msg.Model = importer.Clip(m.Extra.Response.Model, 256)
		if strings.TrimSpace(m.ReasoningContent) != "" {
			msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/0", Type: loom.PartReasoning, Text: m.ReasoningContent})
		}
		for _, c := range m.ToolCalls {
			input := json.RawMessage(c.Function.Arguments)
			if !json.Valid(input) {
				input, _ = json.Marshal(c.Function.Arguments)
			}
			blocks = append(blocks, importer.ContentBlock{Type: "tool_use", ID: c.ID, Name: c.Function.Name, Input: input})
		}
	case m.Role == "tool":
		content, _ := json.Marshal(text(blocks))
		calls.AddBlocks(res, msg, []importer.ContentBlock{{Type: "tool_result", ToolUseID: m.ToolCallID,
			Content: content, IsError: m.Extra.ExceptionInfo != ""}}, at, problem)
		return nil
	default:
		res.Skip("role:" + importer.TypeName(m.Role))
		return nil
	}
	calls.AddBlocks(res, msg, blocks, at, problem)
	if len(msg.Parts) == 0 {
		res.Skip("empty-" + msg.Role + "-message")
		return nil
	}
	return msg
}

// usage is a reply's usage from its API response: the prompt tokens
// count the cached ones, which loom keeps apart.
func usage(m *message) loom.Usage {
	u := m.Extra.Response.Usage
	if u == nil {
		return loom.Usage{}
	}
	out := loom.Usage{InputTokens: importer.Tokens(u.Prompt), OutputTokens: importer.Tokens(u.Completion)}
	if u.Details != nil {
		out.CacheReadTokens = importer.Tokens(u.Details.Cached)
	}
	out.InputTokens = max(out.InputTokens-out.CacheReadTokens, 0)
	if out != (loom.Usage{}) {
		out.APICalls = 1
	}
	return out
}

// text is the text of a tool message's content parts, joined.
func text(blocks []importer.ContentBlock) string {
	texts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}
