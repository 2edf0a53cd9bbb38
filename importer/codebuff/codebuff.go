// Package codebuff reads the chats of Codebuff (the codebuff command;
// Freebuff, its free edition, keeps the same files) for loom's
// importer.
//
// Codebuff keeps each chat in a directory of its own,
// ~/.config/manicode/projects/<project's directory name>/chats/<chat>/,
// the chat named by the time it started (ISO 8601, its colons as -):
// chat-messages.json is the chat as its terminal shows it, run-state.json
// the agent's state for resuming it. chat-messages.json is a list of
// messages, each with an id, a variant (user; ai or agent for Codebuff's
// replies; error), its content, an ISO timestamp, and blocks: text
// (textType reasoning for the model's thinking), tool (toolCallId,
// toolName, input and its output as text), agent (a sub-agent Codebuff
// spawned: agentId, agentType, its initialPrompt, status and blocks of
// its own), plan, and blocks only the terminal shows (mode-divider,
// agent-list, ask-user, gate-state, image).
//
// Each message is a message; an agent block is a sub-agent session,
// its prompt and its blocks, linked from its parent by an agent part.
// Codebuff counts credits, not tokens: no usage is imported.
//
// Learnt from Codebuff's source, CodebuffAI/codebuff: the file's name
// and place in cli/src/utils/run-state-storage.ts (at
// 0b40fb03a07ada18f04c5ef41366be62b2029b16) and
// cli/src/project-files.ts (at
// 0794d3f34118296b0af0920f3cc3b0c9413a6c30), the message and block
// types in cli/src/types/chat.ts (at
// 03cb53dc0a314c2a7a01a30d08472d45015481cd); Codebuff's npm package
// downloads its program from elsewhere at install, which cannot be done
// here, and the files in testdata are built to that source.
package codebuff

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

// Format reads Codebuff's chats. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Codebuff's name in loom.
const Tool = "codebuff"

// maxChat bounds a chat's file, read whole.
const maxChat = 256 << 20

// maxDepth bounds how deep sub-agents nest.
const maxDepth = 16

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Codebuff's own service's.
func (Format) Provider() string { return "codebuff" }

// Roots are $LOOM_CODEBUFF_DIR when set, else
// ~/.config/manicode/projects.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_CODEBUFF_DIR", []string{".config", "manicode", "projects"})
}

// Bundles lists each chat's chat-messages.json under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		return d.Name() == "chat-messages.json" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "chats"
	})
}

type message struct {
	ID        string  `json:"id"`
	Variant   string  `json:"variant"`
	Content   string  `json:"content"`
	Blocks    []block `json:"blocks"`
	Timestamp string  `json:"timestamp"`
}

type block struct {
	Type          string          `json:"type"`
	Content       string          `json:"content"`
	TextType      string          `json:"textType"`
	ToolCallID    string          `json:"toolCallId"`
	ToolName      string          `json:"toolName"`
	Input         json.RawMessage `json:"input"`
	Output        *string         `json:"output"`
	AgentID       string          `json:"agentId"`
	AgentType     string          `json:"agentType"`
	AgentName     string          `json:"agentName"`
	Status        string          `json:"status"`
	InitialPrompt string          `json:"initialPrompt"`
	Blocks        []block         `json:"blocks"`
}

// reader is one chat's reading.
type reader struct {
	res  *importer.Result
	name string
	chat string
	// subs are the sub-agent sessions found so far.
	subs []*importer.Session
}

// Read reads one chat.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	data, err := importer.ReadSmall(name, maxChat)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	var msgs []message
	if err := json.Unmarshal(data, &msgs); err != nil {
		return nil, fmt.Errorf("%s: %s: not Codebuff's chat: %w", Tool, name, err)
	}
	chat := filepath.Base(filepath.Dir(name))
	r := &reader{res: &importer.Result{}, name: name, chat: importer.LineID(chat)}
	t := &importer.Transcript{Res: r.res}
	r.res.CheckUTF8(name, 0, data)
	started := chatTime(chat)
	at := started
	for i, m := range msgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if ts := importer.ISOTime(m.Timestamp); ts.After(at) {
			at = ts
		}
		mid := cmp.Or(importer.LineID(m.ID), "message-"+strconv.Itoa(i))
		switch m.Variant {
		case "user":
			text := m.Content
			if strings.TrimSpace(text) == "" {
				text = blockText(m.Blocks)
			}
			t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at, Parts: textPart(mid, text)})
		case "ai", "agent":
			msg := &loom.Message{ID: mid, Role: loom.RoleAssistant, CreatedAt: at}
			r.parts(r.chat, msg, mid, m.Blocks, at, 0)
			if len(m.Blocks) == 0 {
				msg.Parts = textPart(mid, m.Content)
			}
			t.Add(msg)
		case "error":
			r.res.Skip("error-message")
		default:
			r.res.Skip("unknown:" + importer.TypeName(m.Variant))
		}
	}
	s := &importer.Session{SourceID: r.chat, Kind: loom.KindMain, Path: name, Messages: t.Msgs,
		Provider: "codebuff", CreatedAt: started, UpdatedAt: at}
	r.res.Keep(s, "session")
	for _, sub := range r.subs {
		r.res.Keep(sub, "sub-agent")
	}
	return r.res, nil
}

// chatTime is the time a chat's directory is named by.
func chatTime(chat string) time.Time {
	date, clock, ok := strings.Cut(chat, "T")
	if !ok {
		return time.Time{}
	}
	return importer.ISOTime(date + "T" + strings.ReplaceAll(clock, "-", ":"))
}

func textPart(mid, text string) []loom.Part {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: text}}
}

// blockText is the text of a message's text blocks.
func blockText(bs []block) string {
	var out []string
	for _, b := range bs {
		if b.Type == "text" && b.TextType != "reasoning" {
			out = append(out, b.Content)
		}
	}
	return strings.Join(out, "\n")
}

// parts adds to msg, of the session owner, the parts of blocks, each an
// id under mid; an agent block is a sub-agent session linked by an
// agent part.
func (r *reader) parts(owner string, msg *loom.Message, mid string, blocks []block, at time.Time, depth int) {
	for i, b := range blocks {
		pid := mid + "/" + strconv.Itoa(i)
		switch b.Type {
		case "text", "plan":
			if strings.TrimSpace(b.Content) == "" {
				continue
			}
			typ := loom.PartText
			if b.TextType == "reasoning" {
				typ = loom.PartReasoning
			}
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: typ, Text: b.Content})
		case "tool":
			p := importer.ToolCall(pid, b.ToolCallID, b.ToolName, importer.CompactJSON(b.Input))
			if b.Output != nil {
				out, _ := json.Marshal(*b.Output)
				p.Status, p.Output = loom.ToolCompleted, out
				done := at
				p.EndedAt = &done
			}
			msg.Parts = append(msg.Parts, p)
		case "agent":
			if depth >= maxDepth {
				r.res.Problemf(r.name, 0, "sub-agents nested deeper than "+strconv.Itoa(maxDepth))
				continue
			}
			sub := r.subAgent(owner, pid, b, at, depth+1)
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartAgent, Name: cmp.Or(b.AgentType, b.AgentName, "agent"), SessionID: sub})
		default:
			r.res.Skip("block:" + importer.TypeName(b.Type))
		}
	}
}

// subAgent makes the session of an agent block, a sub-agent of the
// session parent, and returns its SourceID.
func (r *reader) subAgent(parent, pid string, b block, at time.Time, depth int) string {
	id := r.chat + "/" + cmp.Or(importer.LineID(b.AgentID), importer.LineID(pid))
	var msgs []*loom.Message
	if strings.TrimSpace(b.InitialPrompt) != "" {
		msgs = append(msgs, &loom.Message{ID: "prompt", Role: loom.RoleUser, CreatedAt: at, CompletedAt: &at, Parts: textPart("prompt", b.InitialPrompt)})
	}
	reply := &loom.Message{ID: "reply", Role: loom.RoleAssistant, CreatedAt: at, CompletedAt: &at}
	r.parts(id, reply, "reply", b.Blocks, at, depth)
	if len(b.Blocks) == 0 {
		reply.Parts = textPart("reply", b.Content)
	}
	if len(reply.Parts) > 0 {
		msgs = append(msgs, reply)
	}
	r.subs = append(r.subs, &importer.Session{SourceID: id, Kind: loom.KindSubagent, ParentSourceID: parent, Path: r.name,
		Title: importer.Clip(cmp.Or(b.AgentName, b.AgentType), 200), Messages: msgs, Provider: "codebuff", CreatedAt: at, UpdatedAt: at})
	return id
}
