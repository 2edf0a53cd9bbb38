// Package positassistant reads the conversations of Posit Assistant
// (Posit's agent for R and Python, ~/.posit/assistant) for loom's
// importer; Positron's own assistant, VS Code's chat sessions, is the
// positron variant.
//
// Posit Assistant keeps each conversation in a directory,
// ~/.posit/assistant/workspaces/<workspace>/<conversation>/, of two
// files: conversation.json, the tree of the conversation (root: id,
// title, summary, timestamp in milliseconds and metadata: kind, main or
// subagent, with parentTreeId and task, gitBranch, model; messages:
// nodes of id, parentId, isActive, lmMessageIds and timestamp), and
// lm-messages.jsonl, a line a model message ({id, message}, the message
// in the AI SDK's form: role user, assistant or tool, and content a
// text or parts: text, reasoning, tool-call, tool-result; its
// providerOptions.providerMetadata.positai the time, model and usage).
// A sub-agent's conversation is the same pair in
// subagents/<id>/ below its parent's; workspace.json beside the
// conversations names the workspace's directory.
//
// What becomes what: the active nodes, in the tree's order, give their
// model messages in turn, each a message under its lm id (a user's, an
// assistant's with its text, reasoning and calls, and a tool's results
// completing those calls); the nodes left off the active branch are
// counted as skipped; the summary tags Posit adds to an answer's text
// (<MESSAGESUMMARY>, <CONVERSATIONSUMMARY>) are taken off. A
// sub-agent's conversation is a sub-agent session of its parent's.
// Usage is each answer's (inputTokens, outputTokens, cacheReadTokens,
// cacheWriteTokens, cacheWrite1hTokens).
//
// Learnt from agentsview's reader of it and its fixtures (kenn-io/
// agentsview at 538600744d1b87614d3746d36a0966c1f2ac1cad,
// internal/parser/posit_assistant_provider.go and
// testdata/posit-assistant/); the fixtures in testdata are built to
// that format (testdata/README.md).
package positassistant

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Posit Assistant's conversations. The zero value is
// ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Posit Assistant's name in loom.
const Tool = "posit-assistant"

const (
	treeFile     = "conversation.json"
	messagesFile = "lm-messages.jsonl"
	// maxTree bounds conversation.json, read whole.
	maxTree = 64 << 20
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Posit AI's, which serves its models.
func (Format) Provider() string { return "positai" }

// Roots are $LOOM_POSIT_ASSISTANT_DIR when set, else
// ~/.posit/assistant/workspaces.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_POSIT_ASSISTANT_DIR", []string{".posit", "assistant", "workspaces"})
}

// Bundles lists each conversation under root, sub-agents' too: its
// conversation.json with the lm-messages.jsonl beside it.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if filepath.Base(root) == messagesFile {
		root = filepath.Join(filepath.Dir(root), treeFile)
	}
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return d.Name() == treeFile
	})
	for i := range bs {
		if m := filepath.Join(filepath.Dir(bs[i].Name()), messagesFile); importer.RegularFile(m) == nil {
			bs[i].Files = append(bs[i].Files, m)
		}
	}
	return bs, err
}

type tree struct {
	Root struct {
		ID        string  `json:"id"`
		Title     *string `json:"title"`
		Summary   string  `json:"summary"`
		Timestamp float64 `json:"timestamp"`
		Metadata  struct {
			Kind         string `json:"kind"`
			ParentTreeID string `json:"parentTreeId"`
			GitBranch    string `json:"gitBranch"`
			Model        struct {
				ID string `json:"id"`
			} `json:"model"`
		} `json:"metadata"`
	} `json:"root"`
	Messages []struct {
		ID        string  `json:"id"`
		IsActive  bool    `json:"isActive"`
		LMIDs     []int   `json:"lmMessageIds"`
		Timestamp float64 `json:"timestamp"`
	} `json:"messages"`
}

type lmLine struct {
	ID      *int `json:"id"`
	Message struct {
		Role            string          `json:"role"`
		Content         json.RawMessage `json:"content"`
		ProviderOptions struct {
			Meta struct {
				Positai struct {
					Timestamp float64 `json:"timestamp"`
					ModelID   string  `json:"modelId"`
					Usage     *struct {
						Input        int64 `json:"inputTokens"`
						Output       int64 `json:"outputTokens"`
						CacheRead    int64 `json:"cacheReadTokens"`
						CacheWrite   int64 `json:"cacheWriteTokens"`
						CacheWrite1h int64 `json:"cacheWrite1hTokens"`
					} `json:"usage"`
				} `json:"positai"`
			} `json:"providerMetadata"`
		} `json:"providerOptions"`
	} `json:"message"`
}

type part struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Input      json.RawMessage `json:"input"`
	Output     *struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"output"`
}

// summaryTags are the summaries Posit asks its model to add to an
// answer, which it does not show.
var summaryTags = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)<(MESSAGESUMMARY|CONVERSATIONSUMMARY)>.*?</(MESSAGESUMMARY|CONVERSATIONSUMMARY)>`)
})

// Read reads one conversation.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	data, err := importer.ReadSmall(name, maxTree)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	var tr tree
	if err := json.Unmarshal(data, &tr); err != nil {
		return nil, fmt.Errorf("%s: %s: not Posit Assistant's conversation: %w", Tool, name, err)
	}
	if tr.Messages == nil {
		return nil, fmt.Errorf("%s: %s: not Posit Assistant's conversation: no messages in it", Tool, name)
	}
	res := &importer.Result{}
	res.CheckUTF8(name, 0, data)
	lm := map[int]lmLine{}
	if len(b.Files) > 1 {
		path := b.Files[1]
		f, _, err := importer.Open(path, importer.MaxFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Tool, err)
		}
		err = importer.Lines(ctx, f, func(n int, raw []byte) error {
			var l lmLine
			if res.DecodeLine(path, n, raw, &l) {
				if l.ID == nil {
					res.Skip("untyped")
				} else {
					lm[*l.ID] = l
				}
			}
			return nil
		}, res.TooLong(path))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", Tool, path, err)
		}
	}
	t := &importer.Transcript{Res: res}
	at := importer.Millis(tr.Root.Timestamp)
	for _, node := range tr.Messages {
		if !node.IsActive {
			res.Skip("off-branch")
			continue
		}
		if ts := importer.Millis(node.Timestamp); ts.After(at) {
			at = ts
		}
		for _, id := range node.LMIDs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			l, ok := lm[id]
			if !ok {
				res.Skip("missing-lm-message")
				continue
			}
			when := at
			if ts := importer.Millis(l.Message.ProviderOptions.Meta.Positai.Timestamp); ts.After(when) {
				when = ts
			}
			add(res, t, strconv.Itoa(id), l, when)
		}
	}
	id := importer.LineID(cmp.Or(tr.Root.ID, filepath.Base(filepath.Dir(name))))
	s := t.Session(id, name)
	if s == nil {
		return res, nil
	}
	if tr.Root.Title != nil {
		s.Title = importer.Clip(strings.TrimSpace(*tr.Root.Title), 200)
	}
	s.GitBranch, s.Model, s.Provider = tr.Root.Metadata.GitBranch, tr.Root.Metadata.Model.ID, "positai"
	s.Cwd = workspace(name)
	if tr.Root.Metadata.Kind == "subagent" && tr.Root.Metadata.ParentTreeID != "" {
		s.Kind, s.ParentSourceID = loom.KindSubagent, importer.LineID(tr.Root.Metadata.ParentTreeID)
	}
	res.Keep(s, "session")
	return res, nil
}

// add adds model message l to t as mid, at.
func add(res *importer.Result, t *importer.Transcript, mid string, l lmLine, at time.Time) {
	m := l.Message
	meta := m.ProviderOptions.Meta.Positai
	var parts []part
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		parts = []part{{Type: "text", Text: s}}
	} else if json.Unmarshal(m.Content, &parts) != nil {
		res.Skip("unreadable-content")
		return
	}
	msg := &loom.Message{ID: mid, CreatedAt: at}
	switch m.Role {
	case "user":
		msg.Role = loom.RoleUser
	case "assistant":
		msg.Role, msg.Model = loom.RoleAssistant, meta.ModelID
		if u := meta.Usage; u != nil {
			msg.Usage = loom.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead,
				CacheWriteTokens: u.CacheWrite, CacheWrite1hTokens: u.CacheWrite1h, APICalls: 1}
		}
	case "tool":
		for _, p := range parts {
			if p.Type == "tool-result" && p.Output != nil {
				out := string(p.Output.Value)
				var text string
				if json.Unmarshal(p.Output.Value, &text) == nil {
					out = text
				}
				t.Complete(p.ToolCallID, out, strings.HasPrefix(p.Output.Type, "error"), at)
			}
		}
		return
	default:
		res.Skip("unknown:" + importer.TypeName(m.Role))
		return
	}
	for j, p := range parts {
		pid := mid + "/" + strconv.Itoa(j)
		switch p.Type {
		case "text":
			if text := strings.TrimSpace(summaryTags().ReplaceAllString(p.Text, "")); text != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: text})
			}
		case "reasoning":
			if strings.TrimSpace(p.Text) != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: p.Text})
			}
		case "tool-call":
			if msg.Role == loom.RoleAssistant {
				msg.Parts = append(msg.Parts, importer.ToolCall(pid, p.ToolCallID, p.ToolName, p.Input))
			}
		default:
			res.Skip(importer.TypeName(p.Type) + "-part")
		}
	}
	t.Add(msg)
}

// workspace is the directory workspace.json names for the conversation
// at name: the workspace's, above the conversation and any sub-agents'
// directories.
func workspace(name string) string {
	dir := filepath.Dir(filepath.Dir(name))
	for filepath.Base(dir) == "subagents" {
		dir = filepath.Dir(filepath.Dir(dir))
	}
	data, err := importer.ReadSmall(filepath.Join(dir, "workspace.json"), 1<<20)
	if err != nil {
		return ""
	}
	var w struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(data, &w) != nil {
		return ""
	}
	return w.Path
}
