// Package qwenpaw reads the sessions of QwenPaw (CoPaw before it was
// renamed: the personal assistant of agentscope-ai, which talks to its
// user over a console and chat channels) for loom's importer.
//
// QwenPaw keeps each agent's workspace in
// ~/.qwenpaw/workspaces/<agent>/ (~/.copaw when an earlier install left
// one; $QWENPAW_WORKING_DIR, or the earlier $COPAW_WORKING_DIR, replaces
// the directory), and each session of it as one JSON document,
// sessions/<channel>/<session>.json: the state agentscope's session
// saves, whose agent.memory.content (memories in some versions) is the
// conversation, each entry a message or a pair of a message and its
// marks. A message is agentscope's Msg: id, name, role (user,
// assistant, system), content (text, or blocks: text, thinking,
// tool_use with id, name and input, tool_result with id, name and
// output), timestamp ("2006-01-02 15:04:05.000", local time) and
// metadata.
//
// Each message is a message; thinking is reasoning; a tool_use is a
// call that the tool_result of a later message completes (a message of
// results only adds no message); a system message of other content is
// counted as skipped. QwenPaw keeps token usage apart from its sessions
// (by day, not by session): none is imported.
//
// Learnt from QwenPaw's source (agentscope-ai/QwenPaw at
// dcbc89443fd4b4bfcea557e46fa13f0a38bfd1b0: src/qwenpaw/constant.py for
// the directory, src/qwenpaw/agent_stats/service.py and
// src/qwenpaw/app/runner/session.py for the sessions' files) and
// agentscope's Msg (agentscope-ai/agentscope at
// 06cec93da6903ab062072f104157a32f6555662a,
// src/agentscope/message/_message_base.py); QwenPaw is a Python program,
// not on npm, and the files in testdata are built to that source.
package qwenpaw

import (
	"bytes"
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

// Format reads QwenPaw's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is QwenPaw's name in loom.
const Tool = "qwenpaw"

// maxSession bounds a session document, read whole.
const maxSession = 256 << 20

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Qwen's, QwenPaw's first.
func (Format) Provider() string { return "qwen" }

// Roots are the workspaces of $QWENPAW_WORKING_DIR (or
// $COPAW_WORKING_DIR) when set, else of ~/.qwenpaw and ~/.copaw.
func (Format) Roots(env func(string) string, home string) []string {
	for _, v := range []string{"QWENPAW_WORKING_DIR", "COPAW_WORKING_DIR"} {
		if d := importer.EnvPath(env, home)(v); d != "" {
			return []string{filepath.Join(d, "workspaces")}
		}
	}
	return importer.HomeDirs(env, home, "", []string{".qwenpaw", "workspaces"}, []string{".copaw", "workspaces"})
}

// Bundles lists each session document (sessions/<channel>/*.json of a
// workspace) under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".json") && filepath.Base(filepath.Dir(filepath.Dir(path))) == "sessions"
	})
}

type msg struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Timestamp string          `json:"timestamp"`
}

type block struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	Output   json.RawMessage `json:"output"`
}

// entries is the memory's list: messages, or [message, marks] pairs.
func entries(state map[string]json.RawMessage) []json.RawMessage {
	var agent struct {
		Memory struct {
			Content  []json.RawMessage `json:"content"`
			Memories []json.RawMessage `json:"memories"`
		} `json:"memory"`
	}
	if json.Unmarshal(state["agent"], &agent) != nil {
		return nil
	}
	if len(agent.Memory.Memories) > 0 {
		return agent.Memory.Memories
	}
	return agent.Memory.Content
}

// Read reads one session document.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	data, err := importer.ReadSmall(name, maxSession)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal(data, &state); err != nil {
		return nil, fmt.Errorf("%s: %s: not QwenPaw's session: %w", Tool, name, err)
	}
	res := &importer.Result{}
	res.CheckUTF8(name, 0, data)
	t := &importer.Transcript{Res: res}
	for i, raw := range entries(state) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] == '[' {
			var pair []json.RawMessage
			if json.Unmarshal(raw, &pair) != nil || len(pair) == 0 {
				res.Problemf(name, 0, "memory entry "+strconv.Itoa(i)+": neither a message nor a message and its marks")
				continue
			}
			raw = pair[0]
		}
		var m msg
		if err := json.Unmarshal(raw, &m); err != nil {
			res.Problemf(name, 0, "memory entry "+strconv.Itoa(i)+": "+err.Error())
			continue
		}
		add(t, name, m, i)
	}
	session := strings.TrimSuffix(filepath.Base(name), ".json")
	channel := filepath.Base(filepath.Dir(name))
	s := &importer.Session{SourceID: importer.LineID(channel + "/" + session), Kind: loom.KindMain, Path: name,
		Messages: t.Msgs, Provider: "qwen"}
	if len(t.Msgs) > 0 {
		s.CreatedAt, s.UpdatedAt = t.Msgs[0].CreatedAt, t.Msgs[len(t.Msgs)-1].CreatedAt
	}
	res.Keep(s, "session")
	return res, nil
}

// add adds message m, the i-th of the memory of the file name, to t.
func add(t *importer.Transcript, name string, m msg, i int) {
	mid := cmp.Or(importer.LineID(m.ID), "entry-"+strconv.Itoa(i))
	at := importer.ISOTime(strings.Replace(strings.TrimSpace(m.Timestamp), " ", "T", 1))
	var blocks []block
	var text string
	if json.Unmarshal(m.Content, &text) != nil && json.Unmarshal(m.Content, &blocks) != nil {
		t.Res.Problemf(name, 0, "message "+mid+": content that is neither text nor blocks")
		return
	}
	if text != "" {
		blocks = []block{{Type: "text", Text: text}}
	}
	out := &loom.Message{ID: mid, CreatedAt: at}
	switch m.Role {
	case "user":
		out.Role = loom.RoleUser
	case "assistant":
		out.Role = loom.RoleAssistant
	case "system":
		out.Role = loom.RoleSystem
	default:
		t.Res.Skip("unknown:" + importer.TypeName(m.Role))
		return
	}
	for j, bl := range blocks {
		pid := mid + "/" + strconv.Itoa(j)
		switch bl.Type {
		case "text":
			if strings.TrimSpace(bl.Text) != "" {
				out.Parts = append(out.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: bl.Text})
			}
		case "thinking":
			if strings.TrimSpace(bl.Thinking) != "" {
				out.Parts = append(out.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: bl.Thinking})
			}
		case "tool_use":
			out.Parts = append(out.Parts, importer.ToolCall(pid, bl.ID, bl.Name, importer.CompactJSON(bl.Input)))
		case "tool_result":
			t.Complete(importer.LineID(bl.ID), output(bl.Output), false, at)
		default:
			t.Res.Skip("block:" + importer.TypeName(bl.Type))
		}
	}
	if len(out.Parts) == 0 {
		// A message of results only.
		return
	}
	if out.Role == loom.RoleSystem {
		t.Res.Skip("system-message")
		return
	}
	t.Add(out)
}

// output is a tool result's output: text, or the text of its blocks.
func output(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []block
	if json.Unmarshal(raw, &bs) == nil {
		var texts []string
		for _, b := range bs {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return importer.JSONText(raw)
}
