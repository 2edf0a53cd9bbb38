package codex

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
)

// An IDE extension sends the editor's context ahead of the user's
// request, in the same message: ideContext opens it, userMessageBegin
// precedes the request itself.
const (
	ideContext       = "# Context from my IDE setup:"
	userMessageBegin = "## My request for Codex:"
)

// splitIDEContext splits a user message that carries the IDE's context
// into that context and the request.
func splitIDEContext(text string) (context, request string, ok bool) {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, ideContext) {
		return "", text, false
	}
	before, after, found := strings.Cut(t, userMessageBegin)
	before, after = strings.TrimSpace(before), strings.TrimSpace(after)
	if !found || before == "" || after == "" {
		return "", text, false
	}
	return before, after, true
}

// userMessage adds the user message of text at line n: a system message
// when Codex injected it, preceded by a system message of the IDE's
// context when it carries one.
func (rd *reader) userMessage(n int, text string, texts []string) *loom.Message {
	rd.endTurn()
	if text != "" && allInjected(texts) {
		return rd.message(n, loom.RoleSystem, "")
	}
	if ctx, req, ok := splitIDEContext(text); ok {
		m := rd.message(n, loom.RoleSystem, ":context")
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: ctx})
		text = req
	}
	m := rd.message(n, loom.RoleUser, "")
	if text != "" {
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
	}
	return m
}

// injectedTags open the blocks Codex adds to the conversation as user
// input that the user did not type.
var injectedTags = map[string]bool{
	"environment_context":   true,
	"user_instructions":     true,
	"permissions":           true,
	"user_shell_command":    true,
	"turn_aborted":          true,
	"subagent_notification": true,
	"skill":                 true,
	"collaboration_mode":    true,
	"personality_spec":      true,
	"user_action":           true,
	"INSTRUCTIONS":          true,
	"apps_instructions":     true,
}

// injected reports whether text is context Codex injected: an
// environment block, instructions, a notification.
func injected(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	if strings.HasPrefix(t, "# AGENTS.md instructions for ") {
		return true
	}
	if !strings.HasPrefix(t, "<") {
		return false
	}
	t = t[1:]
	if i := strings.IndexAny(t, "> \n"); i > 0 {
		return injectedTags[t[:i]]
	}
	return false
}

// messageText joins the texts of a message's content.
func messageText(content json.RawMessage) string {
	if s := str(content); s != "" {
		return s
	}
	var b strings.Builder
	for _, c := range items(content) {
		if c.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// responseItem handles a response_item line.
func (rd *reader) responseItem(rc *rec) {
	var it responseItem
	if err := json.Unmarshal(rc.payload, &it); err != nil {
		rd.res.Problemf(rd.path, rc.n, "response_item: "+err.Error())
		return
	}
	switch it.Type {
	case "message":
		rd.responseMessage(rc.n, &it)
	case "reasoning":
		rd.reasoning(rc.n, &it)
	case "function_call":
		name := it.Name
		if it.Namespace != "" && name != "" {
			name = it.Namespace + "." + name
		}
		rd.toolCall(rc.n, it.CallID, name, argumentsInput(it.Arguments))
	case "custom_tool_call":
		rd.toolCall(rc.n, it.CallID, it.Name, textInput("input", it.Input))
	case "local_shell_call":
		rd.toolCall(rc.n, firstOf(it.CallID, it.ID), "local_shell", objectInput(it.Action))
	case "tool_search_call":
		rd.toolCall(rc.n, firstOf(it.CallID, it.ID), "tool_search", argumentsInput(it.Arguments))
	case "web_search_call":
		rd.hostedTool(rc.n, &it, "web_search", objectInput(it.Action), "")
	case "image_generation_call":
		input := json.RawMessage("{}")
		if p := str(it.RevisedPrompt); p != "" {
			input, _ = json.Marshal(map[string]string{"revised_prompt": p})
		}
		rd.hostedTool(rc.n, &it, "image_generation", input, "[image]")
	case "function_call_output", "custom_tool_call_output", "tool_search_output":
		rd.toolOutput(rc.n, &it)
	case "agent_message":
		rd.agentMessage(rc.n, str(it.Author), str(it.Recipient), messageText(it.Content))
	case "compaction", "compaction_summary", "context_compaction", "ghost_snapshot":
		rd.res.Skip("response_item:" + it.Type)
	default:
		rd.res.Skip("unknown:response_item:" + typeName(it.Type))
	}
}

// responseMessage handles a message item: user input, injected context,
// developer instructions, assistant text, or a message from another
// agent (its JSON as the item's only text).
func (rd *reader) responseMessage(n int, it *responseItem) {
	cs := items(it.Content)
	if it.Role != "user" {
		if author, recipient, text, ok := agentJSON(cs); ok {
			rd.agentMessage(n, author, recipient, text)
			return
		}
	}
	var texts []string
	var files []loom.Part
	if s := str(it.Content); s != "" {
		texts = append(texts, s)
	}
	for _, c := range cs {
		switch c.Type {
		case "input_image", "image":
			files = append(files, imagePart(str(c.ImageURL)))
		default:
			if c.Text != "" {
				texts = append(texts, c.Text)
			} else if c.Type != "input_text" && c.Type != "output_text" && c.Type != "text" {
				rd.res.Skip("unknown:content:" + typeName(c.Type))
			}
		}
	}
	if it.Role != "user" && it.Role != "assistant" && len(rd.instructions) > 0 {
		// The session_meta's instructions, sent again as a developer
		// message, are stored once.
		kept := texts[:0:0]
		for _, t := range texts {
			if !rd.instructions[strings.TrimSpace(t)] {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 && len(texts) > 0 && len(files) == 0 {
			rd.res.Skip(typeName(it.Role) + ":duplicate")
			return
		}
		texts = kept
	}
	text := strings.Join(texts, "\n")
	if strings.TrimSpace(text) == "" {
		text, texts = "", nil
	}
	if text == "" && len(files) == 0 {
		rd.res.Skip("response_item:message:empty")
		return
	}
	var m *loom.Message
	switch it.Role {
	case "user":
		m = rd.userMessage(n, text, texts)
		if m.Role == loom.RoleUser {
			text = ""
		}
	case "assistant":
		m = rd.assistant(n)
	default: // developer, system
		rd.endTurn()
		m = rd.message(n, loom.RoleSystem, "")
	}
	if text != "" {
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
	}
	for _, f := range files {
		rd.addPart(m, f)
	}
}

// agentJSON reads a message whose content items cs are one text, a
// message between agents as Codex records one in the recipient's
// history: the JSON of an agentMail {author, recipient, content, …}.
func agentJSON(cs []contentItem) (author, recipient, text string, ok bool) {
	if len(cs) != 1 || (cs[0].Type != "input_text" && cs[0].Type != "output_text") {
		return "", "", "", false
	}
	t := strings.TrimSpace(cs[0].Text)
	if !strings.HasPrefix(t, "{") || !strings.Contains(t, `"recipient"`) {
		return "", "", "", false
	}
	var c agentMail
	if json.Unmarshal([]byte(t), &c) != nil {
		return "", "", "", false
	}
	author, recipient = str(c.Author), str(c.Recipient)
	if !strings.HasPrefix(author, "/") || !strings.HasPrefix(recipient, "/") || (len(c.Content) > 0 && c.Content[0] != '"') {
		return "", "", "", false
	}
	return author, recipient, str(c.Content), true
}

// allInjected reports whether every non-empty text is injected context.
func allInjected(texts []string) bool {
	for _, t := range texts {
		if strings.TrimSpace(t) != "" && !injected(t) {
			return false
		}
	}
	return true
}

// imagePart notes an image of a message. The image's bytes (a data URL)
// are not kept; a link to it is.
func imagePart(url string) loom.Part {
	p := loom.Part{Type: loom.PartFile, Filename: "image", Mime: "image"}
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		if i := strings.IndexAny(rest, ";,"); i > 0 && i < 100 {
			p.Mime = rest[:i]
		}
		return p
	}
	p.URL = url
	return p
}

// reasoning handles a reasoning item: its summary and any reasoning
// content in clear become reasoning parts. Encrypted reasoning has no
// text to keep.
func (rd *reader) reasoning(n int, it *responseItem) {
	var summary, content []string
	for _, c := range items(it.Summary) {
		if strings.TrimSpace(c.Text) != "" {
			summary = append(summary, c.Text)
		}
	}
	for _, c := range items(it.Content) {
		if strings.TrimSpace(c.Text) != "" {
			content = append(content, c.Text)
		}
	}
	if len(summary) == 0 && len(content) == 0 {
		if str(it.EncryptedContent) != "" {
			rd.res.Skip("reasoning:encrypted")
		} else {
			rd.res.Skip("reasoning:empty")
		}
		return
	}
	m := rd.assistant(n)
	if len(summary) > 0 {
		rd.addPart(m, loom.Part{Type: loom.PartReasoning, Text: strings.Join(summary, "\n\n")})
	}
	if len(content) > 0 {
		rd.addPart(m, loom.Part{Type: loom.PartReasoning, Text: strings.Join(content, "\n\n")})
	}
}

// toolCall adds a tool call, running until its output is read.
func (rd *reader) toolCall(n int, callID, name string, input json.RawMessage) {
	m := rd.assistant(n)
	if callID == "" {
		callID = "line-" + strconv.Itoa(n)
	}
	if name == "" {
		name = "unknown"
	}
	t := rd.now
	i := rd.addPart(m, loom.Part{Type: loom.PartTool, CallID: callID, Name: name, Status: loom.ToolRunning, Input: input, StartedAt: &t})
	c := &call{msg: m, idx: i}
	rd.calls[callID], rd.running[callID] = c, c
	if isSpawn(name) {
		c.agentType, c.task = spawnArgs(input)
		rd.spawns = append(rd.spawns, c)
	}
}

// isSpawn reports whether a tool starts a sub-agent.
func isSpawn(name string) bool {
	return name == "spawn_agent" || strings.HasSuffix(name, ".spawn_agent")
}

// hostedTool adds a tool the model's service ran itself (web search,
// image generation): the item says how it ended; output, if any, is a
// note.
func (rd *reader) hostedTool(n int, it *responseItem, name string, input json.RawMessage, output string) {
	m := rd.assistant(n)
	callID := firstOf(it.CallID, it.ID)
	if callID == "" {
		callID = "line-" + strconv.Itoa(n)
	}
	t := rd.now
	p := loom.Part{Type: loom.PartTool, CallID: callID, Name: name, Input: input, StartedAt: &t}
	switch status := str(it.Status); status {
	case "", "completed":
		p.Status, p.EndedAt = loom.ToolCompleted, &t
		if output != "" {
			p.Output, _ = json.Marshal(output)
		}
	case "failed", "incomplete", "cancelled":
		p.Status, p.Error, p.EndedAt = loom.ToolError, name+" "+status, &t
	default:
		p.Status = loom.ToolRunning
	}
	rd.addPart(m, p)
}

// toolOutput folds a tool's output into its call's part. An output whose
// call is not in the file gets a part of its own.
func (rd *reader) toolOutput(n int, it *responseItem) {
	c := rd.calls[it.CallID]
	if c == nil || it.CallID == "" {
		m := rd.assistant(n)
		callID, name := it.CallID, firstOf(it.Name, "unknown")
		if callID == "" {
			callID = "line-" + strconv.Itoa(n)
		}
		i := rd.addPart(m, loom.Part{Type: loom.PartTool, CallID: callID, Name: name, Status: loom.ToolRunning})
		c = &call{msg: m, idx: i}
		rd.calls[callID] = c
	}
	delete(rd.running, it.CallID)
	out := parseOutput(it.Output)
	if isNull(it.Output) && !isNull(it.Tools) {
		out.text = string(it.Tools)
	}
	t := rd.now
	p := &c.msg.Parts[c.idx]
	p.EndedAt, p.Metadata = &t, out.meta
	switch {
	case out.failed != "" || c.failed != "":
		p.Status, p.Output = loom.ToolError, nil
		p.Error = firstOf(strings.TrimSpace(out.text), out.failed, c.failed)
	default:
		p.Status, p.Error = loom.ToolCompleted, ""
		p.Output, _ = json.Marshal(out.text)
		if isSpawn(p.Name) && !c.agent {
			rd.spawned(c, out.text)
		}
	}
	rd.touch(c.msg)
	rd.open = false
}

// output is what a tool call returned.
type output struct {
	text   string
	meta   json.RawMessage
	failed string // why the call failed, "" when it did not
}

// parseOutput reads a tool output: plain text; text wrapping
// {"output", "metadata": {"exit_code"}}; text headed by an exit code
// line; content items; or {"content", "success"}.
func parseOutput(raw json.RawMessage) output {
	var out output
	if isNull(raw) {
		return out
	}
	switch raw[0] {
	case '"':
		out.text = str(raw)
		if t := strings.TrimSpace(out.text); strings.HasPrefix(t, "{") {
			var w struct {
				Output   *string         `json:"output"`
				Metadata json.RawMessage `json:"metadata"`
				IsError  bool            `json:"isError"`
			}
			if json.Unmarshal([]byte(t), &w) == nil {
				switch {
				case w.Output != nil:
					out.text = *w.Output
					if len(w.Metadata) > 0 && w.Metadata[0] == '{' {
						out.meta = w.Metadata
						var m struct {
							ExitCode json.RawMessage `json:"exit_code"`
						}
						if json.Unmarshal(w.Metadata, &m) == nil {
							if code, ok := integer(m.ExitCode); ok && code != 0 {
								out.failed = "exit code " + strconv.FormatInt(code, 10)
							}
						}
					}
				case w.IsError:
					out.failed = "the tool failed"
				}
				return out
			}
		}
		if code, ok := headerExitCode(out.text); ok && code != 0 {
			out.failed = "exit code " + strconv.FormatInt(code, 10)
		}
	case '[':
		out.text = itemsText(items(raw))
	case '{':
		var o struct {
			Content json.RawMessage `json:"content"`
			Success *bool           `json:"success"`
		}
		if json.Unmarshal(raw, &o) == nil && len(o.Content) > 0 {
			if s := str(o.Content); s != "" {
				out.text = s
			} else {
				out.text = itemsText(items(o.Content))
			}
			if o.Success != nil && !*o.Success {
				out.failed = "the tool failed"
			}
			return out
		}
		out.text = string(raw)
	default:
		out.text = string(raw)
	}
	return out
}

// itemsText joins the texts of content items, an image standing as
// "[image]".
func itemsText(cs []contentItem) string {
	var b strings.Builder
	for _, c := range cs {
		t := c.Text
		if c.Type == "input_image" || c.Type == "image" {
			t = "[image]"
		}
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(t)
	}
	return b.String()
}

// headerExitCode reads the exit code in the header lines of a shell
// tool's output ("Exit code: 1" or "Process exited with code 1" before
// "Output:").
func headerExitCode(s string) (int64, bool) {
	if !strings.HasPrefix(s, "Exit code: ") && !strings.HasPrefix(s, "Chunk ID: ") &&
		!strings.HasPrefix(s, "Wall time: ") && !strings.HasPrefix(s, "Process exited with code ") {
		return 0, false
	}
	for i := 0; i < 8 && s != ""; i++ {
		var l string
		l, s, _ = strings.Cut(s, "\n")
		l = strings.TrimSpace(l)
		var num string
		switch {
		case l == "Output:":
			return 0, false
		case strings.HasPrefix(l, "Exit code: "):
			num = strings.TrimPrefix(l, "Exit code: ")
		case strings.HasPrefix(l, "Process exited with code "):
			num = strings.TrimPrefix(l, "Process exited with code ")
		default:
			continue
		}
		code, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		return code, err == nil
	}
	return 0, false
}

// spawned adds an agent part beside a spawn_agent call whose output
// names the thread it started ({"agent_id", "nickname"}). An output that
// names the agent only by its task path ({"task_name": "/root/…"}) has
// it kept, for an event that names the thread.
func (rd *reader) spawned(c *call, out string) {
	var o struct {
		AgentID  json.RawMessage `json:"agent_id"`
		Nickname json.RawMessage `json:"nickname"`
		TaskName json.RawMessage `json:"task_name"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(out)), &o) != nil {
		return
	}
	c.path = strings.TrimSpace(str(o.TaskName))
	rd.linkAgent(c, str(o.AgentID), str(o.Nickname))
}

// spawnArgs reads the arguments of a spawn_agent call that name the
// agent it starts: its agent_type and task_name, trimmed.
func spawnArgs(input json.RawMessage) (agentType, task string) {
	var a struct {
		AgentType json.RawMessage `json:"agent_type"`
		TaskName  json.RawMessage `json:"task_name"`
	}
	_ = json.Unmarshal(input, &a) // an input of another shape names nothing
	return strings.TrimSpace(str(a.AgentType)), strings.TrimSpace(str(a.TaskName))
}

// linkAgent adds to c's message the agent part of the sub-agent session
// id, named after the agent's role, else its nickname, else its task
// name.
func (rd *reader) linkAgent(c *call, id, nickname string) {
	id = strings.TrimSpace(id)
	if id == "" || c.agent || strings.ContainsAny(id, "\n\r") {
		return
	}
	task := strings.TrimSpace(lastSegment(firstOf(c.path, c.task)))
	name := firstOf(c.agentType, strings.TrimSpace(nickname), task, "default")
	rd.addPart(c.msg, loom.Part{Type: loom.PartAgent, Name: name, SessionID: id})
	c.agent = true
}

// subAgentActivity handles a sub_agent_activity event: when it says an
// agent started, it names the spawn call (event_id) and the thread
// (agent_thread_id) and path (agent_path) of the agent.
func (rd *reader) subAgentActivity(ev *event) {
	if str(ev.Kind) != "started" {
		return
	}
	id, path := str(ev.AgentThreadID), strings.TrimSpace(str(ev.AgentPath))
	if c := rd.calls[str(ev.EventID)]; c != nil && isSpawn(c.msg.Parts[c.idx].Name) {
		rd.linkAgent(c, id, "")
		return
	}
	if c := rd.spawnOf(path); c != nil {
		rd.linkAgent(c, id, "")
	}
}

// spawnOf returns the first spawn_agent call without its agent part
// whose agent has path: by the task path of its output, else by the task
// name of its arguments (relative to the spawning agent's path).
func (rd *reader) spawnOf(path string) *call {
	if path == "" {
		return nil
	}
	for _, c := range rd.spawns {
		if c.agent {
			continue
		}
		if c.path == path || (c.path == "" && c.task != "" && (c.task == path || strings.HasSuffix(path, "/"+c.task))) {
			return c
		}
	}
	return nil
}

// argumentsInput turns a function call's arguments (a JSON text, as a
// string) into the tool part's input object.
func argumentsInput(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return json.RawMessage("{}")
	}
	if raw[0] != '"' {
		return objectInput(raw)
	}
	s := strings.TrimSpace(str(raw))
	switch {
	case s == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(s)):
		return objectInput(json.RawMessage(s))
	}
	return textInput("arguments", raw)
}

// objectInput returns raw when it is a JSON object, else raw wrapped as
// {"arguments": raw}.
func objectInput(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return json.RawMessage("{}")
	}
	if raw[0] == '{' && json.Valid(raw) {
		return raw
	}
	b, err := json.Marshal(map[string]json.RawMessage{"arguments": raw})
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// textInput wraps a free-form input (a string) as {key: text}; an object
// is kept as it is.
func textInput(key string, raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return json.RawMessage("{}")
	}
	if raw[0] == '{' {
		return objectInput(raw)
	}
	var v any = str(raw)
	if raw[0] != '"' {
		v = raw
	}
	b, err := json.Marshal(map[string]any{key: v})
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// firstOf returns the first non-empty string.
func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// event handles an event_msg line. The events that repeat response
// items are left out; token counts become usage; the rest are counted
// as skipped by type, some of them first telling how a tool call ended.
func (rd *reader) event(rc *rec) {
	var ev event
	if err := json.Unmarshal(rc.payload, &ev); err != nil {
		rd.res.Problemf(rd.path, rc.n, "event_msg: "+err.Error())
		return
	}
	switch ev.Type {
	case "user_message":
		rd.userEvent(rc.n, &ev)
		return
	case "agent_message":
		if text := str(ev.Message); strings.TrimSpace(text) != "" && !rd.duplicate("a", text) {
			rd.addPart(rd.assistant(rc.n), loom.Part{Type: loom.PartText, Text: text})
			return
		}
	case "agent_reasoning", "agent_reasoning_raw_content":
		kind := "r"
		if ev.Type == "agent_reasoning_raw_content" {
			kind = "rr"
		}
		if strings.TrimSpace(ev.Text) != "" && !rd.duplicate(kind, ev.Text) {
			rd.addPart(rd.assistant(rc.n), loom.Part{Type: loom.PartReasoning, Text: ev.Text})
			return
		}
	case "token_count":
		if rd.tokenCount(rc.n, &ev) {
			return
		}
	case "thread_name_updated":
		if name := strings.TrimSpace(str(ev.ThreadName)); name != "" && !rd.inherited(rc.n) {
			rd.title = name
			return
		}
	case "task_started", "turn_started":
		rd.endTurn()
	case "turn_aborted":
		rd.interrupt()
		rd.endTurn()
	case "patch_apply_end":
		if b, ok := boolean(ev.Success); ok && !b {
			rd.fail(ev.CallID, firstOf(strings.TrimSpace(str(ev.Stderr)), strings.TrimSpace(str(ev.Stdout)), "patch not applied"))
		}
	case "exec_command_end":
		if code, ok := integer(ev.ExitCode); ok && code != 0 {
			rd.fail(ev.CallID, firstOf(strings.TrimSpace(str(ev.Aggregated)), "exit code "+strconv.FormatInt(code, 10)))
		}
	case "collab_agent_spawn_end":
		if c := rd.calls[ev.CallID]; c != nil && ev.CallID != "" {
			rd.linkAgent(c, str(ev.NewThreadID), firstOf(str(ev.Role), str(ev.Nickname)))
		}
	case "sub_agent_activity":
		rd.subAgentActivity(&ev)
	}
	rd.res.Skip("event_msg:" + typeName(ev.Type))
}

// boolean returns the JSON boolean in r.
func boolean(r json.RawMessage) (bool, bool) {
	switch string(r) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// userEvent handles a user_message event: counted as skipped when a
// response item holds the same message, else the message itself.
func (rd *reader) userEvent(n int, ev *event) {
	text := str(ev.Message)
	var images []string
	if len(ev.Images) > 0 && ev.Images[0] == '[' {
		_ = json.Unmarshal(ev.Images, &images)
	}
	var local []string
	if len(ev.LocalImages) > 0 && ev.LocalImages[0] == '[' {
		_ = json.Unmarshal(ev.LocalImages, &local)
	}
	if rd.duplicate("u", text) || (strings.TrimSpace(text) == "" && len(images) == 0 && len(local) == 0) {
		rd.res.Skip("event_msg:user_message")
		return
	}
	m := rd.userMessage(n, text, []string{text})
	if m.Role == loom.RoleSystem && len(m.Parts) == 0 {
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
	}
	for _, u := range images {
		rd.addPart(m, imagePart(u))
	}
	for _, p := range local {
		rd.addPart(m, loom.Part{Type: loom.PartFile, Filename: filepath.Base(p), Mime: "image", Source: &loom.FileSource{Type: "file", Path: p}})
	}
}

// tokenCount handles a token_count event and reports whether its usage
// was kept. last_token_usage is one model call's; it goes to the
// assistant message of that call: the current one while it has no usage
// yet, else the next one (older versions write the count before the
// call's items, newer ones after). A count that repeats the previous
// total, or that belongs to a fork's copy of its parent's history, is
// not kept.
func (rd *reader) tokenCount(n int, ev *event) bool {
	if isNull(ev.Info) {
		return false
	}
	var info tokenInfo
	if err := json.Unmarshal(ev.Info, &info); err != nil {
		rd.res.Problemf(rd.path, n, "token_count: "+err.Error())
		return true
	}
	u := info.Last
	if info.Total != nil {
		if rd.prevTotal != nil && *info.Total == *rd.prevTotal {
			return false
		}
		if u == nil {
			d := *info.Total
			if p := rd.prevTotal; p != nil {
				d = tokenUsage{Input: d.Input - p.Input, Cached: d.Cached - p.Cached, Output: d.Output - p.Output, Reasoning: d.Reasoning - p.Reasoning}
			}
			u = &d
		}
		rd.prevTotal = info.Total
	}
	if u == nil {
		return false
	}
	if rd.inherited(n) {
		rd.res.Skip("inherited:event_msg:token_count")
		return true
	}
	usage := loom.Usage{
		InputTokens:     max(0, u.Input-u.Cached),
		CacheReadTokens: max(0, u.Cached),
		OutputTokens:    max(0, u.Output),
		ReasoningTokens: max(0, u.Reasoning),
		APICalls:        1,
	}
	if rd.cur != nil && rd.cur.Usage.APICalls == 0 {
		rd.cur.Usage.Add(usage)
		rd.touch(rd.cur)
		return true
	}
	if rd.pending == nil {
		rd.pending = &loom.Usage{}
	}
	rd.pending.Add(usage)
	return true
}

// fail records that an event says call id failed, and marks its part so
// if its output is already read.
func (rd *reader) fail(id, why string) {
	c := rd.calls[id]
	if c == nil || id == "" {
		return
	}
	c.failed = why
	p := &c.msg.Parts[c.idx]
	if p.Status == loom.ToolCompleted {
		p.Status, p.Error = loom.ToolError, firstOf(strings.TrimSpace(loom.JSONText(p.Output)), why)
		p.Output = nil
	}
}

// interrupt ends the calls still running when a turn is aborted: they
// will get no output.
func (rd *reader) interrupt() {
	t := rd.now
	for id, c := range rd.running {
		p := &c.msg.Parts[c.idx]
		if p.Status == loom.ToolRunning {
			p.Status, p.Error, p.EndedAt = loom.ToolError, loom.Interrupted, &t
		}
		delete(rd.running, id)
	}
}
