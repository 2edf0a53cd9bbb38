package handoff

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/shell"
	"github.com/loomhq/loom/secrets"
)

// Writer writes a session in its tool's own format: how `loom session
// handoff --to TOOL` gives any session in loom to that tool, to continue
// there. Each target's package (importer/claudecode, importer/codex,
// importer/opencode …) has one Format that is both the tool's
// importer.Format and its Writer.
type Writer interface {
	// Tool is the tool's name (claude-code, codex, opencode …).
	Tool() string
	// Handoff writes h as a new session of the tool and says where, and
	// how to resume it.
	Handoff(ctx context.Context, h *Handoff) (*Handed, error)
}

// Handoff is a session to hand to another tool.
type Handoff struct {
	// Session is the loom session handed off, and Messages the part of
	// it to carry, in order (all of it, or its last turns).
	Session  *loom.Session
	Messages []*loom.Message
	// Dir is the project directory the tool is to continue in, absolute.
	Dir string
	// Env looks up the tool's home-directory overrides (may be nil);
	// Home is the user's home directory.
	Env  func(string) string
	Home string
	// Now is the time of the handoff; zero means time.Now.
	Now time.Time
	// Keep, when set, writes the session back under the agent's own id
	// for it (loom session restore-to) rather than as a new session.
	Keep *Keep
}

// Keep is how a session is written back into its agent's own store:
// under its original id, in the file the agent had it in where that is
// still where the agent looks for it, and marked so that importing the
// file again takes it for the session loom holds (Origin.Restore).
type Keep struct {
	// ID is the agent's id of the session; Path the file it is to be
	// written to (empty: where the agent keeps a session of that id).
	ID, Path string
	// Stored is how many messages loom holds of the session, and
	// Messages how many of them the written file reads as (a reply the
	// file splits over lines is one; system messages are left out).
	Stored, Messages int
}

// Restore marks a file written back by loom session restore-to: its
// first Messages messages, as the agent's reader reads them, are the
// first Stored messages of the session its Origin names, and what
// follows them is what the agent added since.
type Restore struct {
	Messages int `json:"messages"`
	Stored   int `json:"stored"`
}

// SessionID is the id a writer gives the session: the kept one when
// writing a session back, else fresh().
func (h *Handoff) SessionID(fresh func() string) string {
	if h.Keep != nil && h.Keep.ID != "" {
		return h.Keep.ID
	}
	return fresh()
}

// KeptPath is the file a session written back is to go to, when one is
// named and keep accepts it (the agent would find it there); else "".
func (h *Handoff) KeptPath(keep func(string) bool) string {
	if h.Keep == nil || h.Keep.Path == "" || !keep(h.Keep.Path) {
		return ""
	}
	return h.Keep.Path
}

// Handed is what a handoff wrote.
type Handed struct {
	Tool string `json:"tool"`
	// Path is the file written, SessionID the tool's id of the new
	// session and Resume the command that continues it.
	Path      string `json:"path"`
	SessionID string `json:"session_id"`
	Resume    string `json:"resume"`
	// Messages is how many of loom's messages were carried, ToolCalls
	// how many tool calls in the tool's own shapes and ToolRecords how
	// many as text records (the tool has no such tool).
	Messages    int `json:"messages"`
	ToolCalls   int `json:"tool_calls"`
	ToolRecords int `json:"tool_records"`
	// Dropped counts what was not carried, by kind: "system" messages,
	// "reasoning" the tool does not accept unsigned, "file" and "agent"
	// parts, "error" replies that failed with nothing in them.
	Dropped map[string]int `json:"dropped"`
}

// Options say how Run hands a session off.
type Options struct {
	// Dir is the project directory the tool continues in, absolute;
	// empty means the session's project root, else its working
	// directory.
	Dir string
	// Last carries only the last Last turns; 0 carries them all.
	Last int
	Env  func(string) string
	Home string
	Now  time.Time
	// Redact, when set, replaces the secrets it finds in what is handed
	// off with markers ([REDACTED:rule]).
	Redact *secrets.Detector
	// Keep writes the session back under its original id (see Keep).
	Keep *Keep
}

// Report is what a handoff did: what the writer wrote, and which
// session, directory and turns.
type Report struct {
	*Handed
	From string `json:"from_session_id"`
	Dir  string `json:"dir"`
	// FirstTurn and LastTurn are the turns of the session carried; Turns
	// is how many the session has.
	FirstTurn int `json:"first_turn"`
	LastTurn  int `json:"last_turn"`
	Turns     int `json:"turns"`
	// Redacted counts the secrets replaced by markers.
	Redacted int `json:"redacted"`
}

// Run hands session s of st to the tool of w: the directory checked,
// the turns to carry read, the file written. Input that cannot be handed
// off (no such directory, a session without a prompt) is an EINVALID
// error.
func Run(ctx context.Context, st loom.Reader, s *loom.Session, w Writer, o Options) (*Report, error) {
	dir, err := handoffDir(s, o.Dir)
	if err != nil {
		return nil, err
	}
	// Another program reads what is handed off: the session is read
	// through the gate, redacted before anything is converted, its
	// title with its messages as one read (a secret the messages give
	// away is redacted where the title repeats it).
	var gate *secrets.Gate
	var msgs []*loom.Message
	if o.Redact != nil {
		gate = o.Redact.Gate(st)
		data, err := gate.ReadSessions(ctx, []string{s.ID}, loom.MessageQuery{})
		if err != nil {
			return nil, err
		}
		if len(data) == 0 {
			return nil, loom.Errorf(loom.ENOTFOUND, "session %s is no longer in the store", s.ID)
		}
		s, msgs = data[0].Session, data[0].Messages
	} else if msgs, err = st.Messages(ctx, s.ID, loom.MessageQuery{}); err != nil {
		return nil, err
	}
	last := 0
	if n := len(msgs); n > 0 {
		last = msgs[n-1].Turn
	}
	first := min(1, last)
	if o.Last > 0 && last-o.Last+1 > first {
		first = last - o.Last + 1
		msgs = slices.DeleteFunc(msgs, func(m *loom.Message) bool { return m.Turn < first })
	}
	if !slices.ContainsFunc(msgs, func(m *loom.Message) bool { return m.Role == loom.RoleUser }) {
		return nil, loom.Errorf(loom.EINVALID, "session %s has no prompt to hand off", s.ID)
	}
	redacted := 0
	if gate != nil {
		redacted = gate.Redacted()
	}
	out, err := w.Handoff(ctx, &Handoff{Session: s, Messages: msgs, Dir: dir, Env: o.Env, Home: o.Home, Now: o.Now, Keep: o.Keep})
	if err != nil {
		return nil, err
	}
	if out.Dropped == nil {
		out.Dropped = map[string]int{}
	}
	return &Report{Handed: out, From: s.ID, Dir: dir, FirstTurn: first, LastTurn: last, Turns: s.TurnCount, Redacted: redacted}, nil
}

// handoffDir is the directory the tool continues in: dir, else the
// session's project root, else its working directory; it must exist
// here.
func handoffDir(s *loom.Session, dir string) (string, error) {
	if dir != "" {
		fi, err := os.Stat(dir)
		switch {
		case err != nil:
			return "", loom.Errorf(loom.EINVALID, "%s: no such directory", dir)
		case !fi.IsDir():
			return "", loom.Errorf(loom.EINVALID, "%s is not a directory", dir)
		}
		return dir, nil
	}
	dir = s.Project.Root
	if dir == "" {
		dir = s.Cwd
	}
	if dir == "" {
		return "", loom.Errorf(loom.EINVALID, "session %s has no project directory; name one", s.ID)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", loom.Errorf(loom.EINVALID, "the session's project directory %s is not on this machine; name one", dir)
	}
	return dir, nil
}

// Drop counts one thing of kind that was not carried.
func (h *Handed) Drop(kind string) {
	if h.Dropped == nil {
		h.Dropped = map[string]int{}
	}
	h.Dropped[kind]++
}

// Origin is what a handed-off file records of the loom session it
// continues, in a field of its own that the tool ignores: the importer
// makes the tool's session, when it comes back, a fork of that one.
type Origin struct {
	SessionID string `json:"session_id"`
	// Turn is the last turn of that session the file holds.
	Turn int `json:"turn"`
	// Restore marks a file written back under the session's original id
	// (loom session restore-to): the session is that one, not a fork.
	Restore *Restore `json:"restore,omitempty"`
}

// Marker fields: where a handed-off file keeps its Origin (Codex's
// records are snake_case, the others' camelCase).
const (
	OriginField      = "loomHandoff"
	OriginFieldSnake = "loom_handoff"
)

// Origin is what h's file records of the session it continues.
func (h *Handoff) Origin() *Origin {
	o := &Origin{SessionID: h.Session.ID}
	if n := len(h.Messages); n > 0 {
		o.Turn = h.Messages[n-1].Turn
	}
	if k := h.Keep; k != nil {
		o.Restore = &Restore{Messages: k.Messages, Stored: k.Stored}
	}
	return o
}

// FromTool reports whether h's session was imported from tool: its tool
// calls are then tool's own, which the tool takes back under their own
// names and inputs.
func (h *Handoff) FromTool(tool string) bool {
	return h.Session.Source != nil && h.Session.Source.Tool == tool
}

// ReadPath is the file call p read (see the function ReadPath) as an
// absolute path, which the targets' file tools require (Claude Code's
// Read refuses a relative file_path): a relative one is taken from the
// session's working directory, else from the directory the target
// continues in.
func (h *Handoff) ReadPath(p loom.Part) (string, bool) {
	path, ok := ReadPath(p)
	if !ok || filepath.IsAbs(path) {
		return path, ok
	}
	base := h.Dir
	if filepath.IsAbs(h.Session.Cwd) {
		base = h.Session.Cwd
	}
	return filepath.Join(base, path), true
}

// Tools names a target's own tools: its shell tool, which takes
// {"command": …} (else what ShellArgs makes of the command line), and
// its file-reading tool, which takes the file's absolute path under
// ReadKey (else what ReadArgs makes of it).
type Tools struct {
	Target, Shell, Read, ReadKey string
	ShellArgs, ReadArgs          func(string) any
}

// Call is the call of the target's that does what p did, and its
// arguments: the call itself when h's session is the target's own, a
// shell command as its shell call, a file read as its read call; no name
// when the target has no such tool (the call is told as text).
func (h *Handoff) Call(p loom.Part, t Tools) (string, any) {
	switch cmd, ok := shell.Command(p); {
	case h.FromTool(t.Target):
		if len(p.Input) == 0 {
			return p.Name, map[string]any{}
		}
		return p.Name, p.Input
	case ok && t.ShellArgs != nil:
		return t.Shell, t.ShellArgs(cmd)
	case ok:
		return t.Shell, map[string]any{"command": cmd}
	}
	if path, ok := h.ReadPath(p); ok {
		if t.ReadArgs != nil {
			return t.Read, t.ReadArgs(path)
		}
		return t.Read, map[string]any{t.ReadKey: path}
	}
	return "", nil
}

// Time is the time of the handoff.
func (h *Handoff) Time() time.Time {
	if h.Now.IsZero() {
		return time.Now().UTC()
	}
	return h.Now.UTC()
}

// Entry is one message as every target writes it: a user prompt (a
// summary is one too, leading with SummaryLead) or an assistant reply
// with its text, reasoning and tool calls, each call with its result.
type Entry struct {
	Role string // loom.RoleUser or loom.RoleAssistant
	// Summary marks a user entry that holds a compaction summary.
	Summary bool
	// At is the message's time, else the handoff's.
	At    time.Time
	Model string
	// Parts are text, reasoning and tool parts only; a tool part is
	// completed or error.
	Parts []loom.Part
}

// SummaryLead opens the user message that carries a compaction summary,
// as loom itself gives one to its model.
const SummaryLead = "Summary of the earlier conversation:\n\n"

// claudeCode is Claude Code's tool name, whose compaction summaries
// hold lines for Claude Code alone.
const claudeCode = "claude-code"

var (
	// systemReminder is a block Claude Code adds to its compaction
	// summary (the tools used before it, in <tools-used-before-summary>).
	systemReminder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>\s*`) })
	// transcriptLine points Claude Code's model at the transcript file.
	transcriptLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[^\n]*read the full transcript at:[^\n]*\n?`) })
	// resumeDirectly tells Claude Code's model how to go on, to the end
	// of its line.
	resumeDirectly = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)\s*Resume directly\b[^\n]*$`) })
)

// OtherToolSummary is Claude Code's compaction summary as another tool
// is given it:
// without the lines that are for Claude Code alone (its system reminders,
// the path of its transcript, how its model is to resume).
func OtherToolSummary(text string) string {
	text = systemReminder().ReplaceAllString(text, "")
	text = transcriptLine().ReplaceAllString(text, "")
	text = resumeDirectly().ReplaceAllString(text, "")
	return strings.TrimSpace(text)
}

// Entries turns the messages of h into what every target writes, user
// and assistant entries in turn, and
// counts in out what they lose on the way: system messages (injected
// context, written for another tool), file and agent parts, and replies
// that failed with nothing in them. Reasoning is kept; a target that
// cannot take it drops and counts it. A tool call that never finished
// gets an "interrupted" error, so no target finds a call without its
// result.
func Entries(h *Handoff, out *Handed) []Entry {
	var es []Entry
	for _, m := range h.Messages {
		e := Entry{Role: m.Role, At: m.CreatedAt, Model: m.Model}
		if e.At.IsZero() {
			e.At = h.Time()
		}
		switch m.Role {
		case loom.RoleSystem:
			out.Drop("system")
			continue
		case loom.RoleSummary:
			e.Role, e.Summary = loom.RoleUser, true
		case loom.RoleTool:
			e.Role = loom.RoleAssistant
		}
		for _, p := range m.Parts {
			switch p.Type {
			case loom.PartText:
				if strings.TrimSpace(p.Text) == "" {
					continue
				}
				if e.Summary {
					text := p.Text
					if h.FromTool(claudeCode) && out.Tool != claudeCode {
						text = OtherToolSummary(text)
					}
					p.Text = SummaryLead + text
				}
				e.Parts = append(e.Parts, loom.Part{Type: loom.PartText, Text: p.Text})
			case loom.PartReasoning:
				if e.Role == loom.RoleAssistant && strings.TrimSpace(p.Text) != "" {
					e.Parts = append(e.Parts, loom.Part{Type: loom.PartReasoning, Text: p.Text})
				}
			case loom.PartTool:
				if p.Status != loom.ToolCompleted && p.Status != loom.ToolError {
					p.Status, p.Error = loom.ToolError, loom.Interrupted
				}
				if e.Role != loom.RoleAssistant {
					// A call in a user message (a tool's output the user
					// pasted in another tool) is told as text.
					e.Parts = append(e.Parts, loom.Part{Type: loom.PartText, Text: ToolRecord(p)})
					continue
				}
				e.Parts = append(e.Parts, p)
			case loom.PartFile:
				out.Drop("file")
			case loom.PartAgent:
				out.Drop("agent")
			}
		}
		if len(e.Parts) == 0 {
			if m.Error != nil {
				out.Drop("error")
			}
			continue
		}
		out.Messages++
		if n := len(es); n > 0 && es[n-1].Role == e.Role {
			// Two messages of one role in a row (a summary and the prompt
			// after it, a reply whose successor failed, a system message
			// left out between two) are one: the model APIs want user and
			// assistant turns to alternate.
			es[n-1].Parts = append(es[n-1].Parts, e.Parts...)
			es[n-1].Summary = es[n-1].Summary || e.Summary
			continue
		}
		es = append(es, e)
	}
	return es
}

// Steps splits the parts of an assistant entry where the model did, into
// the model messages a target writes one by one: a step is text and
// reasoning, then calls (the tool parts call says the target takes as
// its calls; any other tool part is told as text); text, reasoning or a
// text record that follows a call starts the next step, after the calls'
// results.
func (e Entry) Steps(call func(loom.Part) bool) [][]loom.Part {
	var steps [][]loom.Part
	var cur []loom.Part
	calls := false
	for _, p := range e.Parts {
		isCall := p.Type == loom.PartTool && call(p)
		if !isCall && calls {
			steps, cur, calls = append(steps, cur), nil, false
		}
		cur = append(cur, p)
		calls = calls || isCall
	}
	if len(cur) > 0 {
		steps = append(steps, cur)
	}
	return steps
}

// Text is the text parts of e joined by blank lines: a prompt as one
// string.
func (e Entry) Text() string {
	var b strings.Builder
	for _, p := range e.Parts {
		if p.Type != loom.PartText {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// Blocks are a step (see Entry.Steps) as content blocks of Anthropic's
// form, as Claude Code's and its kin's session files keep them: text,
// thinking (reasoning, when thinking says the target takes it; else
// dropped and counted) and tool_use blocks, and the tool_result blocks
// of the calls (is_error for a failed one), which follow in a user
// message. A tool part the target has no tool for (t) is told as text.
func (h *Handoff) Blocks(step []loom.Part, t Tools, ids *CallIDs, out *Handed, thinking bool) (blocks, results []any) {
	for _, p := range step {
		switch p.Type {
		case loom.PartReasoning:
			if !thinking {
				out.Drop("reasoning")
				continue
			}
			blocks = append(blocks, map[string]any{"type": "thinking", "thinking": p.Text})
		case loom.PartText:
			blocks = append(blocks, map[string]any{"type": "text", "text": p.Text})
		case loom.PartTool:
			name, args := h.Call(p, t)
			if name == "" {
				out.ToolRecords++
				blocks = append(blocks, map[string]any{"type": "text", "text": ToolRecord(p)})
				continue
			}
			out.ToolCalls++
			id := ids.For(p)
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": id, "name": name, "input": args})
			results = append(results, map[string]any{"type": "tool_result", "tool_use_id": id, "name": name,
				"content": ResultText(p), "is_error": p.Status == loom.ToolError})
		}
	}
	return blocks, results
}

// IsCall reports whether the target of t takes p as a call of its own
// (else it is told as text).
func (h *Handoff) IsCall(t Tools) func(loom.Part) bool {
	return func(p loom.Part) bool { name, _ := h.Call(p, t); return name != "" }
}
