package copilotchat

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// session is a chat session as VS Code serialises it (version 3 and
// the earlier ones, which differ in what they leave out).
type session struct {
	Version         int               `json:"version"`
	SessionID       string            `json:"sessionId"`
	CreationDate    float64           `json:"creationDate"`
	LastMessageDate float64           `json:"lastMessageDate"`
	CustomTitle     string            `json:"customTitle"`
	Requests        []json.RawMessage `json:"requests"`
}

// chatRequest is one turn: the prompt and the response to it.
type chatRequest struct {
	RequestID string `json:"requestId"`
	Message   struct {
		Text string `json:"text"`
	} `json:"message"`
	VariableData struct {
		Variables []struct {
			Kind  string          `json:"kind"`
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
		} `json:"variables"`
	} `json:"variableData"`
	Response   []json.RawMessage `json:"response"`
	Result     *chatResult       `json:"result"`
	ModelID    string            `json:"modelId"`
	Timestamp  float64           `json:"timestamp"`
	IsCanceled bool              `json:"isCanceled"`
	Agent      *struct {
		ID string `json:"id"`
	} `json:"agent"`
}

type chatResult struct {
	Timings *struct {
		TotalElapsed float64 `json:"totalElapsed"`
	} `json:"timings"`
	ErrorDetails *struct {
		Message string `json:"message"`
	} `json:"errorDetails"`
	Metadata *struct {
		ToolCallRounds []struct {
			ToolCalls []struct {
				ID        string `json:"id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"toolCalls"`
		} `json:"toolCallRounds"`
		ToolCallResults map[string]json.RawMessage `json:"toolCallResults"`
	} `json:"metadata"`
}

// item is one element of a response.
type item struct {
	Kind              string          `json:"kind"`
	Value             json.RawMessage `json:"value"`
	Content           json.RawMessage `json:"content"`
	ToolID            string          `json:"toolId"`
	ToolCallID        string          `json:"toolCallId"`
	IsComplete        *bool           `json:"isComplete"`
	InvocationMessage json.RawMessage `json:"invocationMessage"`
	PastTenseMessage  json.RawMessage `json:"pastTenseMessage"`
	ToolSpecificData  json.RawMessage `json:"toolSpecificData"`
	InlineReference   json.RawMessage `json:"inlineReference"`
	Name              string          `json:"name"`
}

// passed are the response items that hold nothing of the conversation:
// edits the tool calls describe already, progress, the UI's state.
var passed = map[string]bool{
	"textEditGroup": true, "notebookEditGroup": true, "codeblockUri": true, "undoStop": true,
	"prepareToolInvocation": true, "progressMessage": true, "progressTaskSerialized": true,
	"confirmation": true, "mcpServersStarting": true, "command": true, "extensions": true,
	"treeData": true, "reference": true, "codeCitation": true, "elicitation": true, "pullRequest": true,
}

func parse(res *importer.Result, name, fileID string, doc json.RawMessage, cwd string, mod time.Time) {
	if len(bytes.TrimSpace(doc)) == 0 {
		res.Skip("empty-session")
		return
	}
	var s session
	if err := json.Unmarshal(doc, &s); err != nil {
		res.Problemf(name, 0, "not a chat session: "+importer.Excerpt(err.Error()))
		return
	}
	res.CheckUTF8(name, 0, doc)
	id := strings.TrimSpace(s.SessionID)
	if id == "" || strings.ContainsAny(id, "\n\r") {
		id = fileID
	}
	out := &importer.Session{
		SourceID: id, Kind: loom.KindMain, Path: name, Cwd: cwd, Provider: provider,
		Title: strings.TrimSpace(s.CustomTitle), CreatedAt: importer.Millis(s.CreationDate),
		UpdatedAt: importer.Millis(s.LastMessageDate),
	}
	at := out.CreatedAt
	for i, raw := range s.Requests {
		var r chatRequest
		if err := json.Unmarshal(raw, &r); err != nil {
			res.Problemf(name, 0, "request "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
			continue
		}
		rid := strings.TrimSpace(r.RequestID)
		if rid == "" || strings.ContainsAny(rid, "\n\r/") {
			rid = "request-" + strconv.Itoa(i)
		}
		at = cmp.Or(importer.Millis(r.Timestamp), at, mod)
		out.Messages = append(out.Messages, turn(res, rid, &r, at)...)
		if m := model(r.ModelID); m != "" {
			out.Model = m
		}
	}
	if len(out.Messages) == 0 {
		res.Skip("empty-session")
		return
	}
	out.CreatedAt = cmp.Or(out.CreatedAt, out.Messages[0].CreatedAt)
	for _, m := range out.Messages {
		if m.CompletedAt.After(out.UpdatedAt) {
			out.UpdatedAt = *m.CompletedAt
		}
	}
	if out.UpdatedAt.Before(out.CreatedAt) {
		out.UpdatedAt = out.CreatedAt
	}
	res.Sessions = []*importer.Session{out}
}

// model is the model of a request's modelId ("copilot/gpt-4.1"), less
// the vendor Copilot names.
func model(id string) string {
	if _, m, ok := strings.Cut(id, "/"); ok {
		return m
	}
	return id
}

// turn is a request's prompt and its response.
func turn(res *importer.Result, rid string, r *chatRequest, at time.Time) []*loom.Message {
	var out []*loom.Message
	if user := prompt(rid, r, at); user != nil {
		out = append(out, user)
	} else {
		res.Skip("empty-prompt")
	}
	mid := rid + "/response"
	reply := &loom.Message{ID: mid, Role: loom.RoleAssistant, Model: model(r.ModelID), Provider: provider, CreatedAt: at}
	done := at
	if r.Result != nil && r.Result.Timings != nil {
		if d := r.Result.Timings.TotalElapsed; d > 0 && d < 1e10 {
			done = at.Add(time.Duration(d) * time.Millisecond)
		}
	}
	reply.CompletedAt = &done
	if r.Result != nil && r.Result.ErrorDetails != nil && r.Result.ErrorDetails.Message != "" {
		reply.Error = &loom.MessageError{Message: r.Result.ErrorDetails.Message}
	}
	reply.Parts = responseParts(res, mid, r)
	if len(reply.Parts) == 0 && reply.Error == nil {
		res.Skip("empty-response")
		return out
	}
	return append(out, reply)
}

// prompt is a request's prompt: its text and the files the user
// attached, by their path; nil when it holds neither.
func prompt(rid string, r *chatRequest, at time.Time) *loom.Message {
	user := &loom.Message{ID: rid, Role: loom.RoleUser, CreatedAt: at, CompletedAt: &at}
	if t := r.Message.Text; strings.TrimSpace(t) != "" {
		user.Parts = append(user.Parts, loom.Part{ID: rid + "/0", Type: loom.PartText, Text: t})
	}
	for j, v := range r.VariableData.Variables {
		// What the user attached: files by their path.
		if p := refPath(v.Value); p != "" && (v.Kind == "file" || v.Kind == "" || v.Kind == "image") {
			user.Parts = append(user.Parts, loom.Part{ID: rid + "/var/" + strconv.Itoa(j), Type: loom.PartFile, Filename: path.Base(p), Source: &loom.FileSource{Type: "file", Path: p}})
		}
	}
	if len(user.Parts) == 0 {
		return nil
	}
	return user
}

// responseParts are the parts of a request's response, mid's: a run of
// text items is one text part, named by the run's first; reasoning and
// tool calls are parts of their own.
func responseParts(res *importer.Result, mid string, r *chatRequest) []loom.Part {
	args, results := calls(r.Result)
	tr := &textRun{mid: mid, first: -1}
	for j, raw := range r.Response {
		var it item
		if json.Unmarshal(raw, &it) != nil {
			res.Skip("unknown:not-an-object")
			continue
		}
		switch {
		case it.Kind == "" || it.Kind == "markdownContent" || it.Kind == "markdownVuln":
			tr.write(j, markdown(it))
		case it.Kind == "inlineReference":
			// A reference within the text: its name in the sentence.
			if n := cmp.Or(it.Name, path.Base(refPath(it.InlineReference))); n != "" && n != "." {
				tr.write(j, "`"+n+"`")
			}
		case it.Kind == "thinking":
			tr.flush()
			if t := str(it.Value); strings.TrimSpace(t) != "" {
				tr.parts = append(tr.parts, loom.Part{ID: mid + "/" + strconv.Itoa(j), Type: loom.PartReasoning, Text: t})
			}
		case it.Kind == "toolInvocationSerialized" || it.Kind == "toolInvocation":
			tr.flush()
			tr.parts = append(tr.parts, tool(mid+"/"+strconv.Itoa(j), &it, args, results, r.IsCanceled))
		case passed[it.Kind]:
			res.Skip(it.Kind)
		default:
			res.Skip("unknown:" + importer.TypeName(it.Kind))
		}
	}
	tr.flush()
	return tr.parts
}

// textRun gathers a response's parts, a run of text items into one.
type textRun struct {
	mid   string
	parts []loom.Part
	text  strings.Builder
	first int // the index of the run's first item; -1 between runs
}

func (tr *textRun) write(j int, t string) {
	if tr.first < 0 {
		tr.first = j
	}
	tr.text.WriteString(t)
}

// flush ends the run: its text, unless blank, is a part.
func (tr *textRun) flush() {
	if s := tr.text.String(); strings.TrimSpace(s) != "" {
		tr.parts = append(tr.parts, loom.Part{ID: tr.mid + "/" + strconv.Itoa(tr.first), Type: loom.PartText, Text: s})
	}
	tr.text.Reset()
	tr.first = -1
}

// calls are the arguments of each tool call the request's rounds made
// and the results Copilot kept, by call id.
func calls(r *chatResult) (args map[string]json.RawMessage, results map[string]string) {
	args, results = map[string]json.RawMessage{}, map[string]string{}
	if r == nil || r.Metadata == nil {
		return args, results
	}
	for _, round := range r.Metadata.ToolCallRounds {
		for _, c := range round.ToolCalls {
			if a := importer.CompactJSON(json.RawMessage(c.Arguments)); a != nil && a[0] == '{' {
				args[c.ID] = a
			}
		}
	}
	for id, raw := range r.Metadata.ToolCallResults {
		var res struct {
			Content []struct {
				Value json.RawMessage `json:"value"`
				Text  string          `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(raw, &res) != nil {
			continue
		}
		var parts []string
		for _, c := range res.Content {
			if t := cmp.Or(str(c.Value), c.Text); t != "" {
				parts = append(parts, t)
			}
		}
		results[id] = strings.Join(parts, "\n")
	}
	return args, results
}

// tool is a tool invocation: its input from the call the model made
// (else what VS Code showed of it), its output from the result Copilot
// kept (else what VS Code said it did).
func tool(pid string, it *item, args map[string]json.RawMessage, results map[string]string, canceled bool) loom.Part {
	p := loom.Part{ID: pid, Type: loom.PartTool, CallID: cmp.Or(strings.TrimSpace(it.ToolCallID), pid), Name: cmp.Or(strings.TrimSpace(it.ToolID), "unknown"), Status: loom.ToolCompleted}
	p.Title = str(it.InvocationMessage)
	if a, ok := args[it.ToolCallID]; ok {
		p.Input = a
	} else {
		in := map[string]any{}
		if p.Title != "" {
			in["message"] = p.Title
		}
		var data struct {
			Command     string `json:"command"`
			CommandLine *struct {
				Original string `json:"original"`
			} `json:"commandLine"`
		}
		if json.Unmarshal(it.ToolSpecificData, &data) == nil {
			if c := data.Command; c != "" {
				in["command"] = c
			} else if data.CommandLine != nil && data.CommandLine.Original != "" {
				in["command"] = data.CommandLine.Original
			}
		}
		p.Input, _ = json.Marshal(in)
	}
	out, ok := results[it.ToolCallID]
	if !ok {
		out = str(it.PastTenseMessage)
	}
	switch {
	case it.IsComplete != nil && !*it.IsComplete && canceled:
		p.Status, p.Error = loom.ToolError, "canceled"
	case it.IsComplete != nil && !*it.IsComplete:
		p.Status, p.Error = loom.ToolError, "not completed"
	default:
		p.Output, _ = json.Marshal(out)
	}
	return p
}

// markdown is a text item's text: value (a string, or {value}), or a
// markdownContent's content.
func markdown(it item) string {
	if t := str(it.Value); t != "" {
		return t
	}
	return str(it.Content)
}

// str is a string VS Code wrote as a string or as a markdown string
// object ({"value": …}).
func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(raw, &m) == nil {
		return m.Value
	}
	return ""
}

// refPath is the path of a URI or location VS Code serialised
// ({"fsPath"}, {"path"}, {"uri": {…}}, or a string).
func refPath(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return importer.FileURIPath(s)
	}
	var v struct {
		FsPath string `json:"fsPath"`
		Path   string `json:"path"`
		URI    *struct {
			FsPath string `json:"fsPath"`
			Path   string `json:"path"`
		} `json:"uri"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	if v.URI != nil {
		return cmp.Or(v.URI.FsPath, v.URI.Path)
	}
	return cmp.Or(v.FsPath, v.Path)
}
