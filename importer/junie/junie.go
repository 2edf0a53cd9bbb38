// Package junie reads the sessions of Junie's command-line agent
// (JetBrains, the junie command) for loom's importer.
//
// Junie keeps each session in ~/.junie/sessions/<session id>/events.jsonl
// ($JUNIE_HOME replaces ~/.junie); index.jsonl beside the sessions
// gives each its task name. Each line is an event: a UserPromptEvent
// (the prompt), or a SessionA2uxEvent whose agentEvent is one of the
// agent's steps, written as it progresses (IN_PROGRESS, then COMPLETED
// under the same stepId): a terminal command and its output, a tool
// block, files viewed or changed, the result (the reply), and
// LlmResponseMetadataEvent (each model call's model, tokens and cost).
//
// What becomes what: a prompt is a user message; the steps after it
// are one assistant message, each step's last state a tool part
// (terminal: its command and output; tool, file views and changes: what
// they show), the result its text; each model call's tokens and cost
// are added to that reply's usage. Status updates and the agent's
// serialized state are counted as skipped. The task name titles the
// session.
//
// Junie's npm package downloads the program from JetBrains when it is
// installed, which cannot be done here: the fixtures in testdata are
// written to the event format as public readers of it (a JetBrains IDE
// plugin's Junie adapter) document it.
package junie

import (
	"bufio"
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

// Format reads Junie's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Junie's name in loom.
const Tool = "junie"

const eventsFile = "events.jsonl"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": each model call names its model.
func (Format) Provider() string { return "" }

// Roots is Junie's sessions directory.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, "JUNIE_HOME", ".junie"), "sessions")
}

// Bundles lists each session's events.jsonl.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool { return d.Name() == eventsFile })
}

type event struct {
	Kind   string `json:"kind"`
	Prompt string `json:"prompt"`
	Event  struct {
		AgentEvent struct {
			Kind    string          `json:"kind"`
			StepID  string          `json:"stepId"`
			Text    string          `json:"text"`
			Details string          `json:"details"`
			Command string          `json:"command"`
			Output  string          `json:"output"`
			Result  string          `json:"result"`
			Status  string          `json:"status"`
			Files   json.RawMessage `json:"files"`
			Changes json.RawMessage `json:"changes"`
			Usage   []struct {
				Model       string  `json:"model"`
				Cost        float64 `json:"cost"`
				Input       float64 `json:"inputTokens"`
				CacheInput  float64 `json:"cacheInputTokens"`
				CacheCreate float64 `json:"cacheCreateTokens"`
				Output      float64 `json:"outputTokens"`
			} `json:"modelUsage"`
		} `json:"agentEvent"`
	} `json:"event"`
}

// Read reads one session's events.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &importer.Result{}
	t := &importer.Transcript{Res: res}
	at := fi.ModTime().UTC()
	steps := map[string][2]int{} // a step's part: message and index
	// A model call is recorded before the steps it made: its usage
	// waits for the reply they make.
	var pending loom.Usage
	model := ""
	settle := func() {
		if m := t.Last(); m != nil && m.Role == loom.RoleAssistant && pending != (loom.Usage{}) {
			m.Usage.Add(pending)
			m.Model = cmp.Or(model, m.Model)
			pending = loom.Usage{}
		}
	}
	err = importer.Lines(ctx, f, func(n int, line []byte) error {
		var e event
		if !res.DecodeLine(name, n, line, &e) {
			return nil
		}
		mid := strconv.Itoa(n)
		ae := e.Event.AgentEvent
		switch {
		case e.Kind == "UserPromptEvent":
			settle()
			if pending != (loom.Usage{}) {
				res.Skip("usage-without-reply")
				pending = loom.Usage{}
			}
			t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at, Parts: importer.TextParts(mid, loom.PartText, quote(e.Prompt))})
			return nil
		case e.Kind != "SessionA2uxEvent":
			res.Skip("unknown:" + importer.TypeName(e.Kind))
			return nil
		}
		var p loom.Part
		switch ae.Kind {
		case "TerminalBlockUpdatedEvent":
			p = importer.ToolCall(mid+"/step", "", "terminal", quote(`{"command":`+string(quote(ae.Command))+`}`))
			p.Output = quote(ae.Output)
		case "ToolBlockUpdatedEvent":
			p = importer.ToolCall(mid+"/step", "", "tool", quote(`{"action":`+string(quote(ae.Text))+`}`))
			p.Output = quote(ae.Details)
		case "ViewFilesBlockUpdatedEvent":
			p = importer.ToolCall(mid+"/step", "", "view_files", ae.Files)
		case "FileChangesBlockUpdatedEvent":
			p = importer.ToolCall(mid+"/step", "", "file_changes", ae.Changes)
		case "ResultBlockUpdatedEvent":
			if strings.TrimSpace(ae.Result) != "" && ae.Result != "Empty" {
				p = loom.Part{ID: mid + "/result", Type: loom.PartText, Text: ae.Result}
			}
		case "LlmResponseMetadataEvent":
			for _, u := range ae.Usage {
				model = cmp.Or(u.Model, model)
				pending.Add(loom.Usage{InputTokens: importer.Tokens(u.Input), CacheReadTokens: importer.Tokens(u.CacheInput),
					CacheWriteTokens: importer.Tokens(u.CacheCreate), OutputTokens: importer.Tokens(u.Output), CostUSD: importer.Dollars(u.Cost), APICalls: 1})
			}
			return nil
		default:
			res.Skip(importer.TypeName(cmp.Or(ae.Kind, "untyped")))
			return nil
		}
		if p.ID == "" {
			return nil
		}
		if p.Type == loom.PartTool {
			p.Status = loom.ToolCompleted
		}
		// A step's later state replaces its earlier one.
		if loc, ok := steps[ae.StepID]; ok && ae.StepID != "" && loc[0] < len(t.Msgs) {
			old := &t.Msgs[loc[0]].Parts[loc[1]]
			p.ID = old.ID
			*old = p
			return nil
		}
		m := t.Join(mid, loom.RoleAssistant, at, p)
		steps[ae.StepID] = [2]int{len(t.Msgs) - 1, len(m.Parts) - 1}
		settle()
		return nil
	}, res.TooLong(name))
	settle()
	if err != nil {
		return nil, fmt.Errorf("junie: %s: %w", name, err)
	}
	id := filepath.Base(filepath.Dir(name))
	if s := t.Session(id, name); s != nil {
		s.Title = taskName(filepath.Join(filepath.Dir(filepath.Dir(name)), "index.jsonl"), id)
		res.Sessions = append(res.Sessions, s)
	}
	return res, nil
}

// quote is s as a JSON string.
func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// taskName is the task name index.jsonl gives the session id.
func taskName(index, id string) string {
	f, _, err := importer.Open(index, 64<<20)
	if err != nil {
		return ""
	}
	defer f.Close()
	name := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e struct {
			SessionID string `json:"sessionId"`
			TaskName  string `json:"taskName"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.SessionID == id && e.TaskName != "" {
			name = strings.TrimSpace(e.TaskName)
		}
	}
	return name
}
