// Package codebuddy reads the sessions of CodeBuddy Code (Tencent's
// terminal agent, the codebuddy command) for loom's importer.
//
// CodeBuddy keeps its data in ~/.codebuddy ($CODEBUDDY_CONFIG_DIR): a
// directory per project under projects/ holds one <session id>.jsonl
// per session, and a sub-agent's transcript is
// <session id>/subagents/<agent id>.jsonl beside it. Each line is an
// item of the conversation as the agents SDK it runs on records it,
// with its time in milliseconds and the working directory: message
// (role user or assistant, text content), reasoning, function_call
// (name, callId, arguments) and function_call_result (callId, output),
// a reply's model and usage under providerData.
//
// Each message line is a message under its item id (or line number);
// reasoning and calls join the assistant message they follow (a new one
// when the last message is not the assistant's); a result completes its
// call. Usage (input, output, cache read and creation, reasoning
// tokens) is kept on the reply that reports it. Other item types are
// counted as skipped; a line that is not an item is a problem.
//
// The format was learnt from CodeBuddy Code's documentation and the
// program npm ships inside @tencent-ai/agent-sdk (cli/, 2.117.0), and
// from agentsview's reader of WorkBuddy, which writes the same items;
// the program needs a Tencent account to run, so the fixtures in
// testdata are written to that format.
package codebuddy

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

// Format reads CodeBuddy Code's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is CodeBuddy Code's name in loom.
const Tool = "codebuddy"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": every reply names its model.
func (Format) Provider() string { return "" }

// Roots is CodeBuddy's projects directory.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, "CODEBUDDY_CONFIG_DIR", ".codebuddy"), "projects")
}

// Bundles lists each session's and sub-agent's transcript under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".jsonl")
	})
}

// item is one line of a transcript.
type item struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Timestamp float64         `json:"timestamp"`
	Cwd       string          `json:"cwd"`
	Name      string          `json:"name"`
	CallID    string          `json:"callId"`
	Arguments json.RawMessage `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Status    string          `json:"status"`
	Summary   json.RawMessage `json:"summary"`
	// RawContent is a reasoning item's text as CodeBuddy 2.117 writes
	// it (reasoning_text blocks), its content left empty.
	RawContent json.RawMessage `json:"rawContent"`
	Provider   struct {
		Model string `json:"model"`
		// Agent is who spoke: "cli" (the session), a sub-agent's type,
		// or "compact" for /compact's instruction and its summary.
		Agent string `json:"agent"`
		Usage struct {
			Input      float64 `json:"inputTokens"`
			Output     float64 `json:"outputTokens"`
			CacheRead  float64 `json:"cacheReadInputTokens"`
			CacheWrite float64 `json:"cacheCreationInputTokens"`
			Reasoning  float64 `json:"reasoningTokens"`
			// The details, as the agents SDK's usage lists them: the
			// input's cached tokens (counted in Input) and the output's
			// reasoning tokens.
			InputDetails []struct {
				Cached float64 `json:"cached_tokens"`
			} `json:"inputTokensDetails"`
			OutputDetails []struct {
				Reasoning float64 `json:"reasoning_tokens"`
			} `json:"outputTokensDetails"`
		} `json:"usage"`
		ToolResult struct {
			SubAgent struct {
				SessionID string `json:"sessionId"`
			} `json:"subAgent"`
		} `json:"toolResult"`
	} `json:"providerData"`
}

// compactAgent is the agent of /compact's instruction and summary.
const compactAgent = "compact"

// Read reads one transcript.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &importer.Result{}
	r := &reader{name: name, res: res, t: &importer.Transcript{Res: res}, at: fi.ModTime().UTC(), subs: map[string]string{}}
	if err := importer.Lines(ctx, f, r.line, res.TooLong(name)); err != nil {
		return nil, fmt.Errorf("codebuddy: %s: %w", name, err)
	}
	id := strings.TrimSuffix(filepath.Base(name), ".jsonl")
	parent := ""
	if dir := filepath.Dir(name); filepath.Base(dir) == "subagents" {
		parent = filepath.Base(filepath.Dir(dir))
		id = parent + "/" + id
	}
	if s := r.t.Session(id, name); s != nil {
		s.Cwd = r.cwd
		// A sub-agent's transcript is <session>/subagents/<agent>.jsonl.
		for _, m := range s.Messages {
			for _, p := range m.Parts {
				if sub := r.subs[p.CallID]; p.Type == loom.PartTool && sub != "" {
					importer.AddAgentPart(m, p, id+"/"+sub)
				}
			}
		}
		if parent != "" {
			s.Kind, s.ParentSourceID = loom.KindSubagent, parent
		}
		res.Sessions = append(res.Sessions, s)
	}
	return res, nil
}

// reader reads a transcript's items in order.
type reader struct {
	name string
	res  *importer.Result
	t    *importer.Transcript
	at   time.Time
	cwd  string
	subs map[string]string // the sub-agent each call ran, by call id
}

// line reads item n.
func (r *reader) line(n int, line []byte) error {
	var it item
	if !r.res.DecodeLine(r.name, n, line, &it) {
		return nil
	}
	if tm := importer.Millis(it.Timestamp); !tm.IsZero() {
		r.at = tm
	}
	r.cwd = cmp.Or(r.cwd, it.Cwd)
	mid := cmp.Or(importer.LineID(it.ID), strconv.Itoa(n))
	switch it.Type {
	case "message":
		r.message(mid, it)
	case "reasoning":
		parts := importer.TextParts(mid+"/r", loom.PartReasoning, it.Summary)
		if len(parts) == 0 {
			parts = importer.TextParts(mid+"/r", loom.PartReasoning, it.Content)
		}
		if len(parts) == 0 {
			parts = importer.TextParts(mid+"/r", loom.PartReasoning, it.RawContent)
		}
		r.t.Join(mid, loom.RoleAssistant, r.at, parts...)
	case "function_call":
		m := r.t.Join(mid, loom.RoleAssistant, r.at, importer.ToolCall(mid+"/call", it.CallID, it.Name, it.Arguments))
		m.Usage.Add(usage(it))
	case "function_call_result":
		out := importer.JSONText(it.Output)
		var o struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(it.Output, &o) == nil && o.Text != "" {
			out = o.Text
		}
		if sub := importer.LineID(it.Provider.ToolResult.SubAgent.SessionID); sub != "" {
			r.subs[it.CallID] = sub
		}
		r.t.Complete(it.CallID, out, it.Status == "incomplete" || it.Status == "error", r.at)
	default:
		r.res.Skip("unknown:" + importer.TypeName(it.Type))
	}
	return nil
}

// message reads a message item: /compact's summary, or a message by
// its role.
func (r *reader) message(mid string, it item) {
	m := &loom.Message{ID: mid, CreatedAt: r.at}
	switch {
	case it.Provider.Agent == compactAgent && it.Role == "user":
		// /compact's instruction to the model, not the user's.
		r.res.Skip("compact-instruction")
		return
	case it.Provider.Agent == compactAgent && it.Role == "assistant":
		m.Role, m.Model = loom.RoleSummary, it.Provider.Model
		m.Parts = importer.TextParts(mid, loom.PartText, it.Content)
		m.Usage = usage(it)
		m.Usage.Compactions = 1
		r.t.Add(m)
		return
	}
	switch it.Role {
	case "user":
		m.Role = loom.RoleUser
	case "assistant":
		m.Role, m.Model = loom.RoleAssistant, it.Provider.Model
	case "system", "developer":
		m.Role = loom.RoleSystem
	default:
		r.res.Skip("unknown:" + importer.TypeName(it.Role))
		return
	}
	m.Parts = importer.TextParts(mid, loom.PartText, it.Content)
	m.Usage = usage(it)
	r.t.Add(m)
}

// usage is what a reply's item reports of its model call.
func usage(it item) loom.Usage {
	u := it.Provider.Usage
	out := loom.Usage{InputTokens: importer.Tokens(u.Input), OutputTokens: importer.Tokens(u.Output), CacheReadTokens: importer.Tokens(u.CacheRead),
		CacheWriteTokens: importer.Tokens(u.CacheWrite), ReasoningTokens: importer.Tokens(u.Reasoning)}
	if out.CacheReadTokens == 0 {
		// The SDK's details: cached tokens are part of the input.
		for _, d := range u.InputDetails {
			out.CacheReadTokens += importer.Tokens(d.Cached)
		}
		out.InputTokens = max(out.InputTokens-out.CacheReadTokens, 0)
	}
	if out.ReasoningTokens == 0 {
		for _, d := range u.OutputDetails {
			out.ReasoningTokens += importer.Tokens(d.Reasoning)
		}
	}
	if out != (loom.Usage{}) {
		out.APICalls = 1
	}
	return out
}
