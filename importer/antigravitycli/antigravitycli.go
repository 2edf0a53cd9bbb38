// Package antigravitycli reads the plaintext transcripts of Google's
// Antigravity CLI (agy) for loom's importer.
//
// agy keeps each conversation under ~/.gemini/antigravity-cli/: the
// conversation itself in conversations/<id>.db (a protobuf without a
// published schema, not read here), and beside it, in brain/<id>/
// .system_generated/logs/, a transcript of it in JSON lines:
// transcript.jsonl, whose long texts are cut short, and
// transcript_full.jsonl, whole. The Antigravity IDE writes the same
// transcripts in its own brain/ (~/.gemini/antigravity/brain, as users'
// published scripts read them; ~/.gemini/antigravity-ide/brain in
// others). One line is one step of the conversation: step_index (its
// place; steps may be missing), source (USER_EXPLICIT, MODEL, SYSTEM),
// type, status, created_at (RFC 3339), content, thinking and
// tool_calls.
//
// What becomes what: a USER_INPUT step is the user's prompt, the text
// of its <USER_REQUEST> blocks (what agy wraps around it: the local
// time in <ADDITIONAL_METADATA>, a change of model in
// <USER_SETTINGS_CHANGE>, is left out; the model named there is the
// replies' after it); a PLANNER_RESPONSE is a reply, its thinking as
// reasoning, its content as text, its tool_calls as calls; any other
// step of the model (VIEW_FILE, RUN_COMMAND, …) is a tool's step: it
// completes the call of the reply before it whose id it names, else it
// is a call of its own (named by its tool_calls, else by its type)
// completed by its content, failed when its status names an error; an
// EPHEMERAL_MESSAGE or SYSTEM_MESSAGE is a system message (what the
// agent was told); a CONVERSATION_HISTORY marker is passed over; any
// other step is counted as skipped. Of a conversation with both
// transcripts, the whole one is read.
//
// No file agy wrote was at hand and agy is closed source: the format is
// learnt from cass's reader of it (Dicklesworthstone/
// franken_agent_detection at 034906e838b659b498972619aa71225975f2bde2,
// src/connectors/antigravity.rs) and the places from the scripts users
// published; the fixtures in testdata are built to that description
// (testdata/README.md).
package antigravitycli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads agy's transcripts. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is the Antigravity CLI's name in loom.
const Tool = "antigravity-cli"

const (
	shortName = "transcript.jsonl"
	fullName  = "transcript_full.jsonl"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Google's, whose models agy runs.
func (Format) Provider() string { return "google" }

// Roots are $LOOM_ANTIGRAVITY_CLI_DIR when set, else agy's brain/
// (~/.gemini/antigravity-cli/brain) and the IDE's
// (~/.gemini/antigravity/brain, ~/.gemini/antigravity-ide/brain).
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_ANTIGRAVITY_CLI_DIR",
		[]string{".gemini", "antigravity-cli", "brain"},
		[]string{".gemini", "antigravity", "brain"},
		[]string{".gemini", "antigravity-ide", "brain"})
}

// inLogs says path is in a conversation's .system_generated/logs.
func inLogs(path string) bool {
	logs := filepath.Dir(path)
	return filepath.Base(logs) == "logs" && filepath.Base(filepath.Dir(logs)) == ".system_generated"
}

// Bundles lists each conversation's transcript under root, one bundle
// each: the whole one, or the short one when it is alone.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		if !inLogs(path) {
			return false
		}
		switch d.Name() {
		case fullName:
			return true
		case shortName:
			_, err := os.Lstat(filepath.Join(filepath.Dir(path), fullName))
			return err != nil
		}
		return false
	})
}

// step is one line of a transcript.
type step struct {
	StepIndex *int64          `json:"step_index"`
	Source    string          `json:"source"`
	Type      string          `json:"type"`
	Status    string          `json:"status"`
	CreatedAt string          `json:"created_at"`
	Content   json.RawMessage `json:"content"`
	Thinking  string          `json:"thinking"`
	ToolCalls []call          `json:"tool_calls"`
}

// call is a tool call as a step holds it: its name and arguments
// beside its id, or in its function, under the names cass reads.
type call struct {
	ID         string          `json:"id"`
	CallID     string          `json:"call_id"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	ToolName   string          `json:"tool_name"`
	Arguments  json.RawMessage `json:"arguments"`
	Args       json.RawMessage `json:"args"`
	Input      json.RawMessage `json:"input"`
	Function   struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

func (c call) id() string { return cmp.Or(c.ID, c.CallID, c.ToolCallID) }

func (c call) name(typ string) string {
	return cmp.Or(strings.TrimSpace(c.Name), strings.TrimSpace(c.ToolName), strings.TrimSpace(c.Function.Name), strings.ToLower(typ))
}

func (c call) args() json.RawMessage {
	for _, a := range []json.RawMessage{c.Arguments, c.Args, c.Input, c.Function.Arguments} {
		if !importer.IsNull(a) {
			return a
		}
	}
	return nil
}

// reader is the state of one transcript's reading.
type reader struct {
	res   *importer.Result
	t     *importer.Transcript
	model string
	ids   map[string]bool
}

// Read reads one transcript.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path, f, _, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &importer.Result{}
	rd := &reader{res: res, t: &importer.Transcript{Res: res}, ids: map[string]bool{}}
	_, err = importer.SessionLines(ctx, path, f, res, func(n int, line []byte) {
		var s step
		if !res.DecodeLine(path, n, line, &s) {
			rd.t.Break()
			return
		}
		rd.step(n, s)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", Tool, path, err)
	}
	// The conversation's id is its directory's name, brain/<id>.
	id := importer.LineID(filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(path)))))
	s := rd.t.Session(id, path)
	if s == nil {
		return res, nil
	}
	s.Model = rd.model
	res.Keep(s, "session")
	return res, nil
}

// step reads the step of line n.
func (rd *reader) step(n int, s step) {
	mid := "line-" + strconv.Itoa(n)
	if s.StepIndex != nil {
		mid = "step-" + strconv.FormatInt(*s.StepIndex, 10)
	}
	if rd.ids[mid] {
		mid += "-line-" + strconv.Itoa(n)
	}
	rd.ids[mid] = true
	var at time.Time
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s.CreatedAt)); err == nil {
		at = t.UTC()
	}
	content := importer.JSONText(s.Content)
	switch {
	case s.Type == "USER_INPUT":
		rd.user(mid, content, at)
	case s.Type == "PLANNER_RESPONSE":
		msg := rd.reply(mid, at)
		if strings.TrimSpace(s.Thinking) != "" {
			msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/thinking", Type: loom.PartReasoning, Text: s.Thinking})
		}
		if strings.TrimSpace(content) != "" {
			msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/text", Type: loom.PartText, Text: content})
		}
		for i, c := range s.ToolCalls {
			msg.Parts = append(msg.Parts, importer.ToolCall(mid+"/call-"+strconv.Itoa(i), c.id(), c.name(s.Type), c.args()))
		}
		rd.t.Add(msg)
	case s.Type == "CONVERSATION_HISTORY":
	case s.Type == "EPHEMERAL_MESSAGE" || s.Type == "SYSTEM_MESSAGE":
		msg := &loom.Message{ID: mid, Role: loom.RoleSystem, CreatedAt: at}
		if strings.TrimSpace(content) != "" {
			msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/text", Type: loom.PartText, Text: content})
		}
		rd.t.Add(msg)
	case s.Source == "MODEL":
		rd.tool(mid, s, content, at)
	default:
		rd.res.Skip(importer.TypeName(cmp.Or(s.Type, "untyped")))
	}
}

// reply is a new reply made at at, of the model last chosen.
func (rd *reader) reply(mid string, at time.Time) *loom.Message {
	return &loom.Message{ID: mid, Role: loom.RoleAssistant, CreatedAt: at, Model: rd.model}
}

// user adds a USER_INPUT: the prompt in its <USER_REQUEST> blocks (the
// content less agy's wrappers when it has none); the model a settings
// change names is the replies' from then on.
func (rd *reader) user(mid, content string, at time.Time) {
	if m := modelOf(blocks(content, "USER_SETTINGS_CHANGE")); m != "" {
		rd.model = m
	}
	text := strings.Join(blocks(content, "USER_REQUEST"), "\n\n")
	if text == "" {
		text = content
		for _, tag := range []string{"USER_SETTINGS_CHANGE", "ADDITIONAL_METADATA"} {
			text = strip(text, tag)
		}
		text = strings.TrimSpace(text)
	}
	msg := &loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at}
	if text != "" {
		msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/text", Type: loom.PartText, Text: text})
	}
	rd.t.Add(msg)
}

// tool reads a step of a tool: it completes the calls it names of the
// replies before it; else it is a call of its own, completed by its
// content.
func (rd *reader) tool(mid string, s step, content string, at time.Time) {
	failed := failedStatus(s.Status)
	done := false
	for _, c := range s.ToolCalls {
		if id := c.id(); id != "" && rd.t.Complete(id, content, failed, at) {
			done = true
		}
	}
	if done {
		return
	}
	msg := rd.reply(mid, at)
	calls := s.ToolCalls
	if len(calls) == 0 {
		calls = []call{{}}
	}
	for i, c := range calls {
		msg.Parts = append(msg.Parts, importer.ToolCall(mid+"/call-"+strconv.Itoa(i), "", c.name(s.Type), c.args()))
	}
	// The step's content is its first call's result.
	if rd.t.Add(msg) {
		rd.t.Complete(msg.Parts[0].CallID, content, failed, at)
	}
}

// failedStatus says a step's status names an error.
func failedStatus(s string) bool {
	s = strings.ToUpper(s)
	return strings.Contains(s, "ERROR") || strings.Contains(s, "FAIL")
}

// blocks are the texts of content's <tag>…</tag> blocks, trimmed; an
// unclosed one ends them.
func blocks(content, tag string) []string {
	open, end := "<"+tag+">", "</"+tag+">"
	var out []string
	for {
		i := strings.Index(content, open)
		if i < 0 {
			return out
		}
		content = content[i+len(open):]
		j := strings.Index(content, end)
		if j < 0 {
			return out
		}
		if t := strings.TrimSpace(content[:j]); t != "" {
			out = append(out, t)
		}
		content = content[j+len(end):]
	}
}

// strip is content without its <tag>…</tag> blocks.
func strip(content, tag string) string {
	open, end := "<"+tag+">", "</"+tag+">"
	var b strings.Builder
	for {
		i := strings.Index(content, open)
		if i < 0 {
			break
		}
		j := strings.Index(content[i:], end)
		if j < 0 {
			break
		}
		b.WriteString(content[:i])
		content = content[i+j+len(end):]
	}
	b.WriteString(content)
	return b.String()
}

// modelOf is the model a settings change chose ("… from None to Gemini
// 3.1 Pro (High). …"), "" when none.
func modelOf(changes []string) string {
	for _, c := range changes {
		i := strings.Index(c, " to ")
		if i < 0 {
			continue
		}
		m := c[i+len(" to "):]
		if j := strings.Index(m, ". "); j >= 0 {
			m = m[:j]
		}
		m = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m), "."))
		if m != "" && !strings.EqualFold(m, "none") {
			return importer.Clip(m, 200)
		}
	}
	return ""
}
