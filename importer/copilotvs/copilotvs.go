// Package copilotvs reads the conversations of GitHub Copilot in Visual
// Studio (Microsoft's IDE, not VS Code) for loom's importer.
//
// Visual Studio's Copilot records its conversations as OpenTelemetry
// traces: files named *_VSGitHubCopilot_traces*.jsonl in
// VSGitHubCopilotLogs/traces/ of the user's temporary or cache
// directory, each line an OTLP export (resourceSpans → scopeSpans →
// spans). A conversation's spans carry gen_ai.conversation.id and may
// be spread over several files of the directory (a file is rotated),
// one file may hold several conversations, and a span may be flushed to
// more than one file as it grows. The spans, by the GenAI semantic
// conventions:
//
//   - a chat span (gen_ai.operation.name "chat", or a name "chat …") is
//     one model call: gen_ai.input.messages (JSON: the messages sent,
//     each a role and parts of type text with content), and
//     gen_ai.output.messages (the answer: text parts and tool_call parts
//     with id, name and arguments), gen_ai.request.model and
//     gen_ai.response.model, gen_ai.usage.input_tokens and
//     gen_ai.usage.output_tokens, and copilot_chat.root_request_id, the
//     same on every call of one turn;
//   - a tool span (gen_ai.tool.name) is a call run: gen_ai.tool.call.id,
//     gen_ai.tool.call.arguments and gen_ai.tool.call.result.
//
// A turn's prompt is the last user message of its first chat span; each
// chat span is a reply (its text, its calls, its usage); a call is
// completed by its tool span's result, and a tool span whose call no
// reply holds is a reply of its own. A span flushed twice is read once,
// the fullest copy.
//
// Learnt from agentsview's reader of these traces (wesm/agentsview at
// a5de5daca0005d2794f6fe8e0412795cb2873e4b,
// internal/parser/visualstudio_copilot.go); Visual Studio cannot run
// here, and the files in testdata are built to that format.
package copilotvs

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Visual Studio Copilot's traces. The zero value is ready
// to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Visual Studio Copilot's name in loom.
const Tool = "copilot-vs"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is GitHub Copilot's.
func (Format) Provider() string { return "github-copilot" }

// Roots are $LOOM_COPILOT_VS_DIR when set, else the traces directory
// under the cache directory (Linux, macOS) or the temporary directory
// (Windows).
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_COPILOT_VS_DIR",
		[]string{".cache", "VSGitHubCopilotLogs", "traces"},
		[]string{"Library", "Caches", "VSGitHubCopilotLogs", "traces"},
		[]string{"AppData", "Local", "Temp", "VSGitHubCopilotLogs", "traces"})
}

// isTrace reports whether name is a trace file's.
func isTrace(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && strings.Contains(name, "_VSGitHubCopilot_traces")
}

// Bundles gathers the trace files of each directory under root into
// one bundle (a conversation's spans may be in any of them).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	files, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool { return isTrace(d.Name()) })
	byDir := map[string][]string{}
	var dirs []string
	for _, b := range files {
		dir := filepath.Dir(b.Name())
		if _, ok := byDir[dir]; !ok {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], b.Name())
	}
	var out []importer.Bundle
	for _, dir := range dirs {
		fs := byDir[dir]
		sort.Strings(fs)
		out = append(out, importer.Bundle{Files: fs})
	}
	return out, err
}

type attr struct {
	Key   string `json:"key"`
	Value struct {
		StringValue *string          `json:"stringValue"`
		IntValue    *json.RawMessage `json:"intValue"`
	} `json:"value"`
}

type span struct {
	TraceID    string `json:"traceId"`
	SpanID     string `json:"spanId"`
	Name       string `json:"name"`
	Start      string `json:"startTimeUnixNano"`
	End        string `json:"endTimeUnixNano"`
	Attributes []attr `json:"attributes"`

	attrs      map[string]string
	start, end time.Time
}

type export struct {
	ResourceSpans []struct {
		ScopeSpans []struct {
			Spans []span `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

// chatMessage is one of gen_ai.input.messages or gen_ai.output.messages.
type chatMessage struct {
	Role  string `json:"role"`
	Parts []struct {
		Type      string          `json:"type"`
		Content   string          `json:"content"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"parts"`
}

func nanos(s string) time.Time {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func (s *span) prepare() {
	s.attrs = make(map[string]string, len(s.Attributes))
	for _, a := range s.Attributes {
		switch {
		case a.Value.StringValue != nil:
			s.attrs[a.Key] = *a.Value.StringValue
		case a.Value.IntValue != nil:
			// OTLP's JSON writes a 64-bit integer as a string.
			s.attrs[a.Key] = strings.Trim(string(*a.Value.IntValue), `"`)
		}
	}
	s.start, s.end = nanos(s.Start), nanos(s.End)
	if s.end.IsZero() {
		s.end = s.start
	}
}

func (s *span) chat() bool {
	return s.attrs["gen_ai.operation.name"] == "chat" || strings.HasPrefix(s.Name, "chat ")
}

func (s *span) tokens(key string) int64 {
	n, err := strconv.ParseInt(s.attrs[key], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Read reads one directory's traces, one session per conversation.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	res := &importer.Result{}
	byConv := map[string][]span{}
	var order []string
	read := 0
	for _, name := range b.Files {
		f, _, err := importer.Open(name, 0)
		if err != nil {
			if os.IsNotExist(err) && read > 0 {
				continue
			}
			return nil, fmt.Errorf("%s: %w", Tool, err)
		}
		read++
		_, err = importer.SessionLines(ctx, name, f, res, func(n int, line []byte) {
			var e export
			if !res.DecodeLine(name, n, line, &e) {
				return
			}
			for _, rs := range e.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, sp := range ss.Spans {
						sp.prepare()
						id := sp.attrs["gen_ai.conversation.id"]
						if id == "" {
							res.Skip("span-without-conversation")
							continue
						}
						if _, ok := byConv[id]; !ok {
							order = append(order, id)
						}
						byConv[id] = append(byConv[id], sp)
					}
				}
			}
		})
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	for _, id := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := conversation(res, b.Name(), id, byConv[id])
		s.Path = b.Name()
		res.Keep(s, "session")
	}
	return res, nil
}

// fuller reports whether a is a fuller copy of one span than b.
func fuller(a, b span) bool {
	if la, lb := len(a.attrs["gen_ai.output.messages"])+len(a.attrs["gen_ai.tool.call.result"]),
		len(b.attrs["gen_ai.output.messages"])+len(b.attrs["gen_ai.tool.call.result"]); la != lb {
		return la > lb
	}
	if ta, tb := a.tokens("gen_ai.usage.output_tokens"), b.tokens("gen_ai.usage.output_tokens"); ta != tb {
		return ta > tb
	}
	return a.end.After(b.end)
}

// conversation makes the session of one conversation's spans.
func conversation(res *importer.Result, name, id string, spans []span) *importer.Session {
	// One copy of each span: the fullest, at the place of its first.
	best := map[string]int{}
	var kept []span
	for _, sp := range spans {
		key := "span:" + sp.TraceID + ":" + sp.SpanID
		if c := sp.attrs["gen_ai.tool.call.id"]; c != "" && sp.attrs["gen_ai.tool.name"] != "" {
			key = "call:" + c
		}
		if i, ok := best[key]; ok {
			if fuller(sp, kept[i]) {
				sp.start = kept[i].start
				kept[i] = sp
			}
			continue
		}
		best[key] = len(kept)
		kept = append(kept, sp)
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].start.Before(kept[j].start) })

	t := &importer.Transcript{Res: res}
	turns := map[string]bool{}
	var model string
	var created, updated time.Time
	for i, sp := range kept {
		if created.IsZero() || !sp.start.IsZero() && sp.start.Before(created) {
			created = sp.start
		}
		if sp.end.After(updated) {
			updated = sp.end
		}
		mid := cmp.Or(importer.LineID(sp.SpanID), "span-"+strconv.Itoa(i))
		switch {
		case sp.chat():
			if prompt := lastPrompt(sp.attrs["gen_ai.input.messages"]); prompt != "" {
				key := "content:" + prompt
				if r := strings.TrimSpace(sp.attrs["copilot_chat.root_request_id"]); r != "" {
					key = "request:" + r
				}
				if !turns[key] {
					turns[key] = true
					t.Add(&loom.Message{ID: mid + "/prompt", Role: loom.RoleUser, CreatedAt: sp.start,
						Parts: []loom.Part{{ID: mid + "/prompt/0", Type: loom.PartText, Text: prompt}}})
				}
			}
			m := &loom.Message{ID: mid, Role: loom.RoleAssistant, CreatedAt: sp.start, CompletedAt: &sp.end,
				Model: cmp.Or(sp.attrs["gen_ai.response.model"], sp.attrs["gen_ai.request.model"])}
			model = cmp.Or(m.Model, model)
			var out []chatMessage
			if raw := sp.attrs["gen_ai.output.messages"]; raw != "" && json.Unmarshal([]byte(raw), &out) != nil {
				res.Problemf(name, 0, "conversation "+id+": output messages that are not JSON")
			}
			for _, om := range out {
				if om.Role != "assistant" {
					continue
				}
				for _, p := range om.Parts {
					pid := mid + "/" + strconv.Itoa(len(m.Parts))
					switch {
					case p.Type == "text" && strings.TrimSpace(p.Content) != "":
						m.Parts = append(m.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: p.Content})
					case p.Type == "tool_call" && p.Name != "":
						m.Parts = append(m.Parts, importer.ToolCall(pid, p.ID, p.Name, p.Arguments))
					case p.Type == "reasoning" && strings.TrimSpace(p.Content) != "":
						m.Parts = append(m.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: p.Content})
					}
				}
			}
			in, outTok := sp.tokens("gen_ai.usage.input_tokens"), sp.tokens("gen_ai.usage.output_tokens")
			if in+outTok > 0 {
				m.Usage = loom.Usage{InputTokens: in, OutputTokens: outTok, APICalls: 1}
			}
			t.Add(m)
		case sp.attrs["gen_ai.tool.name"] != "":
			call := importer.LineID(sp.attrs["gen_ai.tool.call.id"])
			result := resultText(sp.attrs["gen_ai.tool.call.result"])
			if call != "" && t.Complete(call, result, false, sp.end) {
				continue
			}
			p := importer.ToolCall(mid+"/0", call, sp.attrs["gen_ai.tool.name"], json.RawMessage(sp.attrs["gen_ai.tool.call.arguments"]))
			out, _ := json.Marshal(result)
			p.Status, p.Output, p.EndedAt = loom.ToolCompleted, out, &sp.end
			t.Add(&loom.Message{ID: mid, Role: loom.RoleAssistant, CreatedAt: sp.start, CompletedAt: &sp.end, Parts: []loom.Part{p}})
		default:
			res.Skip("span:" + importer.TypeName(strings.Fields(sp.Name + " x")[0]))
		}
	}
	return &importer.Session{SourceID: importer.LineID(strings.ToLower(id)), Kind: loom.KindMain, Messages: t.Msgs,
		Model: model, Provider: "github-copilot", CreatedAt: created, UpdatedAt: updated}
}

// lastPrompt is the text of the last user message of a chat span's
// input messages.
func lastPrompt(raw string) string {
	var msgs []chatMessage
	if raw == "" || json.Unmarshal([]byte(raw), &msgs) != nil {
		return ""
	}
	for _, m := range slices.Backward(msgs) {
		if m.Role != "user" {
			continue
		}
		var texts []string
		for _, p := range m.Parts {
			if s := strings.TrimSpace(p.Content); s != "" {
				texts = append(texts, s)
			}
		}
		if s := strings.Join(texts, "\n"); s != "" {
			return s
		}
	}
	return ""
}

// resultText is a tool result's text: JSON's text values (content, text,
// output, result, value), else the result as it is.
func resultText(raw string) string {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return strings.TrimSpace(raw)
	}
	return strings.TrimSpace(textOf(v, 0))
}

func textOf(v any, depth int) string {
	if depth > 8 {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s := textOf(e, depth+1); s != "" {
				out = append(out, s)
			}
		}
		return strings.Join(out, "\n\n")
	case map[string]any:
		for _, k := range []string{"Content", "content", "Text", "text", "Output", "output", "Result", "result", "Value", "value"} {
			if s := textOf(x[k], depth+1); s != "" {
				return s
			}
		}
	}
	return ""
}
