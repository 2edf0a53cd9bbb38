package warp

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Warp keeps each task of an agent conversation in agent_tasks.task as
// a protobuf message, warp.multi_agent.v1.Task of Warp's API
// (apis/multi_agent/v1/task.proto of warpdotdev/warp-proto-apis): its
// id (1), its dependencies (3: the parent task's id, 1) and its messages
// (5), each a Message with its id (1), time (14) and one of a user query
// (2), the agent's output (3), a tool call (4) or its result (5), the
// agent's reasoning (15), a summarization (16), the model used (25) and
// others. The fields are read with protowire, by number.

// Task and Message field numbers.
const (
	taskID           = 1
	taskDependencies = 3
	taskMessages     = 5
	depParent        = 1

	msgID          = 1
	msgUserQuery   = 2
	msgAgentOutput = 3
	msgToolCall    = 4
	msgToolResult  = 5
	msgSystemQuery = 9
	msgTimestamp   = 14
	msgReasoning   = 15
	msgSummary     = 16
	msgModelUsed   = 25
)

// toolNames are the tools of ToolCall's oneof, by field number.
var toolNames = map[protowire.Number]string{
	2: "run_shell_command", 3: "search_codebase", 4: "server", 5: "read_files", 6: "apply_file_diffs",
	7: "suggest_plan", 8: "suggest_create_plan", 9: "grep", 10: "file_glob", 11: "read_mcp_resource",
	12: "call_mcp_tool", 13: "write_to_long_running_shell_command", 14: "suggest_new_conversation",
	15: "file_glob_v2", 16: "suggest_prompt", 17: "open_code_review", 18: "init_project", 19: "subagent",
	20: "read_documents", 21: "edit_documents", 22: "create_documents", 23: "read_shell_command_output",
	24: "use_computer", 25: "insert_review_comments", 26: "read_skill", 27: "request_computer_use",
	28: "fetch_conversation", 29: "start_agent", 30: "send_message_to_agent", 31: "transfer_shell_command_control_to_user",
}

// messageKinds name the Message types the reader passes over.
var messageKinds = map[protowire.Number]string{
	6: "server_event", msgSystemQuery: "system_query", 10: "update_todos", 17: "code_review", 18: "update_review_comments",
	19: "web_search", 20: "web_fetch", 21: "debug_output", 22: "artifact_event", 23: "invoke_skill",
	24: "messages_received_from_agents", 26: "events_from_agents",
}

// field is one field of a protobuf message: its number, and its bytes
// when it is length-delimited (a string, bytes or a message).
type field struct {
	num protowire.Number
	typ protowire.Type
	b   []byte
	v   uint64
}

// fields splits b into its fields; ok is false when b is not a
// well-formed message.
func fields(b []byte) (out []field, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out, false
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			f.v, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return out, false
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, true
}

// first is the bytes of the first length-delimited field num of b.
func first(b []byte, num protowire.Number) ([]byte, bool) {
	fs, _ := fields(b)
	for _, f := range fs {
		if f.num == num && f.typ == protowire.BytesType {
			return f.b, true
		}
	}
	return nil, false
}

// str is the string field num of b ("" when it has none).
func str(b []byte, num protowire.Number) string {
	s, _ := first(b, num)
	if !utf8.Valid(s) {
		return ""
	}
	return string(s)
}

// texts is every string in b, a message, depth first: what a tool call
// or result of a type the reader has no more to say of holds. A field
// that parses as a message of printable fields is taken for one.
func texts(b []byte, depth int) []string {
	fs, ok := fields(b)
	if !ok || depth > 8 {
		return nil
	}
	var out []string
	for _, f := range fs {
		if f.typ != protowire.BytesType || len(f.b) == 0 {
			continue
		}
		if inner := texts(f.b, depth+1); len(inner) > 0 && !printable(f.b) {
			out = append(out, inner...)
			continue
		}
		if utf8.Valid(f.b) {
			out = append(out, string(f.b))
		}
	}
	return out
}

// printable reports whether b reads as text: valid UTF-8 without control
// characters but tabs and line ends.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\n' && r != '\t' && r != '\r' {
			return false
		}
	}
	return true
}

// stampOf is a google.protobuf.Timestamp (seconds 1, nanos 2).
func stampOf(b []byte) time.Time {
	fs, _ := fields(b)
	var sec, nanos uint64
	for _, f := range fs {
		switch {
		case f.num == 1 && f.typ == protowire.VarintType:
			sec = f.v
		case f.num == 2 && f.typ == protowire.VarintType:
			nanos = f.v
		}
	}
	if sec == 0 || sec > 1<<40 || nanos >= 1e9 {
		return time.Time{}
	}
	return time.Unix(int64(sec), int64(nanos)).UTC()
}

// task is one decoded task: its id, its parent's, and its messages.
type task struct {
	id, parent string
	msgs       [][]byte
}

func decodeTask(b []byte) (task, bool) {
	fs, ok := fields(b)
	if !ok {
		return task{}, false
	}
	var t task
	for _, f := range fs {
		if f.typ != protowire.BytesType {
			continue
		}
		switch f.num {
		case taskID:
			t.id = string(f.b)
		case taskDependencies:
			t.parent = str(f.b, depParent)
		case taskMessages:
			t.msgs = append(t.msgs, f.b)
		}
	}
	return t, true
}

// transcript makes a task's messages into loom's, in tr, each dated by
// its own time (else at); a sub-agent call's result that names a task
// of subs links the sub-agent's session, named by sub.
func transcript(tr *importer.Transcript, tk task, at time.Time, res *importer.Result, sub func(string) string) {
	model := ""
	for i, raw := range tk.msgs {
		fs, ok := fields(raw)
		if !ok {
			res.Skip("malformed-message")
			continue
		}
		mid := ""
		for _, f := range fs {
			switch {
			case f.num == msgID && f.typ == protowire.BytesType:
				mid = importer.LineID(string(f.b))
			case f.num == msgTimestamp && f.typ == protowire.BytesType:
				if t := stampOf(f.b); !t.IsZero() {
					at = t
				}
			}
		}
		if mid == "" {
			mid = tk.id + "/" + strconv.Itoa(i)
		}
		kept := false
		for _, f := range fs {
			if f.typ != protowire.BytesType {
				continue
			}
			switch f.num {
			case msgUserQuery:
				kept = tr.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at,
					Parts: textParts(mid, loom.PartText, str(f.b, 1))})
			case msgAgentOutput:
				if m := tr.Join(mid, loom.RoleAssistant, at, textParts(mid, loom.PartText, str(f.b, 1))...); m != nil {
					m.Model, kept = model, true
				}
			case msgReasoning:
				kept = tr.Join(mid, loom.RoleAssistant, at, textParts(mid+"/r", loom.PartReasoning, str(f.b, 1))...) != nil
			case msgToolCall:
				id, name, input := toolCall(f.b)
				if m := tr.Join(mid, loom.RoleAssistant, at, importer.ToolCall(mid+"/call", id, name, input)); m != nil {
					m.Model, kept = model, true
				}
			case msgToolResult:
				id := str(f.b, 1)
				out := resultText(f.b)
				if s := sub(out); s != "" {
					for _, m := range tr.Msgs {
						for _, p := range m.Parts {
							if p.Type == loom.PartTool && p.CallID == id {
								importer.AddAgentPart(m, p, s)
							}
						}
					}
				}
				kept = tr.Complete(id, out, false, at)
			case msgSummary:
				if sum, ok := first(f.b, 1); ok {
					kept = tr.Add(&loom.Message{ID: mid, Role: loom.RoleSummary, CreatedAt: at, Usage: loom.Usage{Compactions: 1},
						Parts: textParts(mid, loom.PartText, str(sum, 1))})
				}
			case msgModelUsed:
				model = strings.TrimSpace(str(f.b, 1))
				kept = true
			default:
				if k, ok := messageKinds[f.num]; ok {
					res.Skip(k)
					kept = true
				}
			}
		}
		if !kept {
			res.Skip("empty-message")
		}
	}
}

func textParts(mid, typ, text string) []loom.Part {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return []loom.Part{{ID: mid + "/0", Type: typ, Text: text}}
}

// toolCall is a ToolCall's id, tool name and input: a shell command's
// command, the files read, or the strings of another tool's call.
func toolCall(b []byte) (id, name string, input json.RawMessage) {
	fs, _ := fields(b)
	for _, f := range fs {
		if f.typ != protowire.BytesType {
			continue
		}
		if f.num == 1 {
			id = string(f.b)
			continue
		}
		n, ok := toolNames[f.num]
		if !ok {
			continue
		}
		name = n
		var v any
		switch f.num {
		case 2:
			v = map[string]string{"command": str(f.b, 1)}
		case 5:
			var files []string
			ffs, _ := fields(f.b)
			for _, file := range ffs {
				if file.num == 1 && file.typ == protowire.BytesType {
					files = append(files, str(file.b, 1))
				}
			}
			v = map[string][]string{"files": files}
		default:
			v = map[string][]string{"text": texts(f.b, 0)}
		}
		input, _ = json.Marshal(v)
	}
	return importer.LineID(id), name, input
}

// resultText is what a ToolCallResult says: a finished shell command's
// output, or the strings of another result.
func resultText(b []byte) string {
	fs, _ := fields(b)
	for _, f := range fs {
		if f.typ != protowire.BytesType || f.num == 1 || f.num == 11 {
			continue
		}
		if f.num == 2 {
			if done, ok := first(f.b, 5); ok {
				return str(done, 1)
			}
			if out := str(f.b, 1); out != "" {
				return out
			}
		}
		return strings.Join(texts(f.b, 0), "\n")
	}
	return ""
}
