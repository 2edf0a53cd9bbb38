// Package grok reads the sessions of Grok Build (xAI's coding agent,
// the grok command of @xai-official/grok) for loom's importer.
//
// Grok keeps each session in a directory of its own,
// ~/.grok/sessions/<URL-encoded working directory>/<session id>/
// ($GROK_HOME replaces ~/.grok), as its documentation lays out:
// summary.json is the index entry (title, model, times, the session a
// fork or restore came from), chat_history.jsonl the raw chat messages
// sent to the model, one a line (system, user, reasoning, assistant
// with tool_calls, tool_result), and updates.jsonl the session's update
// stream, whose usage updates give each turn's tokens.
//
// What becomes what: each chat line a message under its line number; a
// reply's reasoning, text and calls one assistant message; a tool
// result completes its call; a user message Grok made itself (a
// synthetic_reason other than an interjection) is a system message. The
// working directory is the group directory's name decoded (or its .cwd
// file); summary.json's title, model and parent_session_id (a fork of
// that session) name the session; the n-th usage update (input less
// cached, cached, output, reasoning tokens) is the n-th turn's last
// reply's usage. The other files (plan, rewind points, signals,
// compaction checkpoints) are not read.
//
// The layout is Grok's own documentation, shipped in the program npm
// installs (@xai-official/grok 1.0.41); the lines were learnt from
// agentsview's reader. The program needs an xAI account, so the
// fixtures in testdata are written to that format.
package grok

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Grok's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Grok Build's name in loom.
const Tool = "grok"

const (
	historyFile = "chat_history.jsonl"
	summaryFile = "summary.json"
	updatesFile = "updates.jsonl"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is xAI's.
func (Format) Provider() string { return "xai" }

// Roots is Grok's sessions directory.
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.ToolDir(env, home, "GROK_HOME", ".grok"); d != "" {
		return []string{filepath.Join(d, "sessions")}
	}
	return nil
}

// Bundles finds each session's chat history, with its summary and
// update stream when they are there.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if n := filepath.Base(root); n == summaryFile || n == updatesFile {
		root = filepath.Join(filepath.Dir(root), historyFile)
	}
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool { return d.Name() == historyFile })
	for i := range bs {
		dir := filepath.Dir(bs[i].Name())
		for _, n := range []string{summaryFile, updatesFile} {
			if p := filepath.Join(dir, n); importer.RegularFile(p) == nil {
				bs[i].Files = append(bs[i].Files, p)
			}
		}
	}
	return bs, err
}

type chatLine struct {
	Type            string          `json:"type"`
	Role            string          `json:"role"`
	Content         json.RawMessage `json:"content"`
	Summary         json.RawMessage `json:"summary"`
	SyntheticReason string          `json:"synthetic_reason"`
	ModelID         string          `json:"model_id"`
	ToolCallID      string          `json:"tool_call_id"`
	IsError         bool            `json:"is_error"`
	ToolCalls       []struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Function  struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type summary struct {
	Title   string `json:"generated_title"`
	Summary string `json:"summary"`
	Model   string `json:"current_model_id"`
	ModelID string `json:"model_id"`
	Created string `json:"created_at"`
	Updated string `json:"updated_at"`
	Parent  string `json:"parent_session_id"`
	Branch  string `json:"head_branch"`
	Cwd     string `json:"cwd"`
	GitRoot string `json:"git_root_dir"`
}

// Read reads one session.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	res := &importer.Result{}
	var sum summary
	var usages []loom.Usage
	for _, p := range b.Files[1:] {
		switch filepath.Base(p) {
		case summaryFile:
			if data, err := importer.ReadSmall(p, 16<<20); err != nil || json.Unmarshal(data, &sum) != nil {
				res.Problemf(p, 0, "not Grok's session summary")
			}
		case updatesFile:
			usages = readUsage(ctx, p, res)
		}
	}
	f, fi, err := importer.Open(name, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("grok: %w", err)
	}
	defer f.Close()
	at := cmp.Or(importer.ISOTime(sum.Created), fi.ModTime().UTC())
	t := &importer.Transcript{Res: res}
	err = importer.Lines(ctx, f, func(n int, line []byte) error {
		var l chatLine
		if !res.DecodeLine(name, n, line, &l) {
			return nil
		}
		mid := strconv.Itoa(n)
		switch cmp.Or(l.Type, l.Role) {
		case "system":
			t.Add(&loom.Message{ID: mid, Role: loom.RoleSystem, CreatedAt: at, Parts: importer.TextParts(mid, loom.PartText, l.Content)})
		case "user":
			role := loom.RoleUser
			if l.SyntheticReason != "" && l.SyntheticReason != "interjection" {
				role = loom.RoleSystem
			}
			t.Add(&loom.Message{ID: mid, Role: role, CreatedAt: at, Parts: importer.TextParts(mid, loom.PartText, l.Content)})
		case "reasoning":
			text := l.Summary
			if len(text) == 0 {
				text = l.Content
			}
			t.Join(mid, loom.RoleAssistant, at, importer.TextParts(mid+"/r", loom.PartReasoning, text)...)
		case "assistant":
			parts := importer.TextParts(mid, loom.PartText, l.Content)
			for i, c := range l.ToolCalls {
				args := c.Arguments
				if len(args) == 0 {
					args = c.Function.Arguments
				}
				parts = append(parts, importer.ToolCall(mid+"/call/"+strconv.Itoa(i), c.ID, cmp.Or(c.Name, c.Function.Name), args))
			}
			if m := t.Join(mid, loom.RoleAssistant, at, parts...); m != nil {
				m.Model = cmp.Or(strings.TrimSpace(l.ModelID), m.Model)
			}
		case "tool_result", "tool":
			t.Complete(l.ToolCallID, importer.Text(importer.TextParts("", loom.PartText, l.Content)), l.IsError, at)
		default:
			res.Skip("unknown:" + importer.TypeName(cmp.Or(l.Type, l.Role)))
		}
		return nil
	}, res.TooLong(name))
	if err != nil {
		return nil, fmt.Errorf("grok: %s: %w", name, err)
	}
	dir := filepath.Dir(name)
	s := t.Session(filepath.Base(dir), name)
	if s == nil {
		return res, nil
	}
	s.Title, s.GitBranch = strings.TrimSpace(cmp.Or(sum.Title, sum.Summary)), sum.Branch
	s.Model, s.Provider = cmp.Or(sum.Model, sum.ModelID), "xai"
	s.Cwd = cmp.Or(sum.Cwd, groupDir(filepath.Dir(dir)), sum.GitRoot)
	if p := importer.LineID(sum.Parent); p != "" && p != s.SourceID {
		s.Kind, s.ParentSourceID = loom.KindFork, p
	}
	turnUsage(s.Messages, usages)
	res.Sessions = append(res.Sessions, s)
	return res, nil
}

// groupDir is the working directory a group directory is named for:
// its name URL-decoded, or the .cwd file of a name too long for that.
func groupDir(group string) string {
	if data, err := importer.ReadSmall(filepath.Join(group, ".cwd"), 64<<10); err == nil {
		return strings.TrimSpace(string(data))
	}
	if d, err := url.PathUnescape(filepath.Base(group)); err == nil && filepath.IsAbs(d) {
		return d
	}
	return ""
}

// readUsage reads each usage update of the update stream at path.
func readUsage(ctx context.Context, path string, res *importer.Result) []loom.Usage {
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		if !os.IsNotExist(err) {
			res.Problemf(path, 0, err.Error())
		}
		return nil
	}
	defer f.Close()
	var out []loom.Usage
	_ = importer.Lines(ctx, f, func(n int, line []byte) error {
		var u struct {
			Params struct {
				Update struct {
					Usage *struct {
						Input     float64 `json:"inputTokens"`
						Output    float64 `json:"outputTokens"`
						Cached    float64 `json:"cachedReadTokens"`
						Reasoning float64 `json:"reasoningTokens"`
					} `json:"usage"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &u) != nil || u.Params.Update.Usage == nil {
			return nil
		}
		x := u.Params.Update.Usage
		cached := importer.Tokens(x.Cached)
		out = append(out, loom.Usage{InputTokens: max(importer.Tokens(x.Input)-cached, 0), CacheReadTokens: cached,
			OutputTokens: importer.Tokens(x.Output), ReasoningTokens: importer.Tokens(x.Reasoning), APICalls: 1})
		return nil
	}, func(int) {})
	return out
}

// turnUsage puts the n-th turn's usage on its last reply.
func turnUsage(msgs []*loom.Message, usages []loom.Usage) {
	turn := -1
	var last *loom.Message
	flush := func() {
		if last != nil && turn >= 0 && turn < len(usages) {
			last.Usage = usages[turn]
		}
		last = nil
	}
	for _, m := range msgs {
		switch m.Role {
		case loom.RoleUser:
			flush()
			turn++
		case loom.RoleAssistant:
			last = m
		}
	}
	flush()
}
