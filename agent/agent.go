// Package agent runs conversations: it stores each user message before the
// model is called, streams the reply to the caller, stores the assembled
// reply when it is complete, runs the tools the model calls (storing each
// tool part as running, then completed or error), compacts long contexts
// into summaries, and runs sub-agents in child sessions.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/modelcall"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/replaylog"
	"github.com/loomhq/loom/secrets"
)

// DefaultMaxSteps bounds the model calls of one turn.
const DefaultMaxSteps = 50

// DefaultCompactItems is the number of non-user items since the last
// summary past which the context is compacted.
const DefaultCompactItems = 40

// Loop runs turns of one agent against one store and provider.
type Loop struct {
	Store    loom.Store
	Provider loom.Provider
	Model    string
	// Profile is the name of the profile in use; System its prompt.
	Profile string
	System  string
	// MemoryFile and UserFile are read into the system prompt each turn.
	MemoryFile string
	UserFile   string
	// Thinking asks the model for reasoning.
	Thinking  bool
	MaxTokens int
	MaxSteps  int
	// CompactItems and ContextWindow set the compaction threshold: more
	// than CompactItems non-user items since the last summary, or more
	// than 80% of ContextWindow tokens (when known).
	CompactItems  int
	ContextWindow int
	// StreamIdleTimeout fails a turn whose model stream sends nothing
	// for this long, TurnTimeout one that runs longer than this, as a
	// provider error would (zero: DefaultStreamIdleTimeout and
	// DefaultTurnTimeout). The turn timeout includes the tools the turn
	// runs and its sub-agents.
	StreamIdleTimeout time.Duration
	TurnTimeout       time.Duration
	// Tools the model may call. NewLoop installs the built-in ones.
	Tools []Tool
	// LogFor returns the replay log of a session (nil: no log).
	LogFor func(s *loom.Session) *replaylog.Log
	// Now returns the current time; tests replace it.
	Now func() time.Time
	// Redact, when set, is the detector of the gate session_search reads
	// through: it hands other sessions' text (those of every agent the
	// user imported) to the model's provider, redacted as the MCP tools
	// hand it ([mcp] redact in config.toml). The memory files go to the
	// provider redacted by it too, in the system prompt and through the
	// memory tool, as the MCP memory tool hands them.
	Redact *secrets.Detector

	depth int // 0 for the main agent, 1 for a sub-agent
}

// NewLoop returns a loop with the built-in tools: session_search, memory,
// read_file and agent.
func NewLoop(st loom.Store, p loom.Provider, model string) *Loop {
	l := &Loop{Store: st, Provider: p, Model: model, Now: loom.Now}
	l.Tools = []Tool{SessionSearch{}, Memory{}, ReadFile{}, SubAgent{}}
	return l
}

// Event is something the caller may show while a turn runs.
type Event struct {
	Kind string // EventText, EventReasoning, EventStored, EventToolStart, EventToolEnd, EventCompacted
	Text string
	// Tool events.
	Tool     string
	CallID   string
	Input    string
	Output   string
	Status   string
	Duration time.Duration
	// SessionID is the session the event belongs to (a sub-agent's
	// events carry its child session).
	SessionID string
}

// Event kinds besides loom.EventText and loom.EventReasoning.
const (
	// EventStored says that the turn's user message is stored, in the
	// session SessionID names: the one the turn goes on in. A new
	// session exists from then on. It comes once per turn, before the
	// model is called, and only for the top-level agent's message (not
	// a sub-agent's).
	EventStored    = "stored"
	EventToolStart = "tool_start"
	EventToolEnd   = "tool_end"
	EventCompacted = "compacted"
)

// Result is what a turn produced.
type Result struct {
	Messages []*loom.Message // assistant messages stored, in order
	Text     string          // the final reply's text
	Usage    loom.Usage      // summed over the turn's model calls
}

func (l *Loop) now() time.Time {
	if l.Now == nil {
		return loom.Now()
	}
	return l.Now()
}

func (l *Loop) log(s *loom.Session) *replaylog.Log {
	if l.LogFor == nil {
		return nil
	}
	return l.LogFor(s)
}

// Turn runs one user message to its final reply. The user message is
// stored first (creating the session when it is new); each assistant
// message is stored whole once its stream is complete, so a turn that
// fails, is cancelled or runs out of time (a *TimeoutError) leaves the
// user message and nothing partial.
func (l *Loop) Turn(ctx context.Context, s *loom.Session, text string, emit func(Event)) (*Result, error) {
	tctx, cancel, explain := l.withTurnLimit(ctx)
	defer cancel()
	res, err := l.turn(tctx, s, text, emit)
	return res, explain(err)
}

func (l *Loop) turn(ctx context.Context, s *loom.Session, text string, emit func(Event)) (*Result, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	// Tool calls a dead process left unfinished were repaired when the
	// session was opened (Service.Open); a failed turn repairs its own.
	if s.MessageCount > 0 {
		if err := l.maybeCompact(ctx, s, emit); err != nil {
			return nil, err
		}
	}
	created := s.MessageCount == 0
	user := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	if err := l.Store.Append(ctx, s, user); err != nil {
		return nil, err
	}
	if l.depth == 0 {
		emit(Event{Kind: EventStored, SessionID: s.ID})
	}
	lg := l.log(s)
	if created {
		lg.Write(replaylog.Entry{Kind: replaylog.KindSessionStart, SessionID: s.ID, ParentID: s.ParentID, Model: l.Model})
	}
	lg.Write(replaylog.Entry{Kind: replaylog.KindUserMessage, SessionID: s.ID, Text: text})
	lg.Write(replaylog.Entry{Kind: replaylog.KindStep, Type: replaylog.StepAgentStart, SessionID: s.ID, Agent: l.agentName(), Model: l.Model})
	res, err := l.run(ctx, s, emit)
	if err != nil {
		// Whatever the cause, leave no call without a result. The
		// turn's context may be cancelled: repair with one that is not.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		l.Store.RepairInterrupted(rctx, s.ID)
		if refreshed, rerr := l.Store.Session(rctx, s.ID); rerr == nil {
			*s = *refreshed
		}
		return nil, err
	}
	lg.Write(replaylog.Entry{Kind: replaylog.KindFinalResult, SessionID: s.ID, Text: res.Text, Usage: &res.Usage})
	return res, nil
}

func (l *Loop) agentName() string {
	if l.depth > 0 {
		return "subagent"
	}
	if l.Profile != "" {
		return l.Profile
	}
	return "loom"
}

// run calls the model until it answers without calling a tool.
func (l *Loop) run(ctx context.Context, s *loom.Session, emit func(Event)) (*Result, error) {
	maxSteps := l.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	lg := l.log(s)
	res := &Result{}
	for step := 0; step < maxSteps; step++ {
		history, err := l.history(ctx, s)
		if err != nil {
			return nil, err
		}
		req := &loom.ModelRequest{
			Model:     l.Model,
			System:    l.SystemPrompt(s),
			Messages:  history,
			Tools:     l.toolSpecs(),
			MaxTokens: l.MaxTokens,
			Thinking:  l.Thinking,
		}
		resp, err := l.stream(ctx, req, func(ev loom.StreamEvent) {
			emit(Event{Kind: ev.Kind, Text: ev.Text, SessionID: s.ID})
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("turn cancelled: %w", ctx.Err())
			}
			return nil, err
		}
		msg := l.assistantMessage(resp)
		if err := l.Store.Append(ctx, s, msg); err != nil {
			return nil, err
		}
		res.Messages = append(res.Messages, msg)
		res.Usage.Add(msg.Usage)
		for _, p := range msg.Parts {
			switch p.Type {
			case loom.PartReasoning:
				lg.Write(replaylog.Entry{Kind: replaylog.KindStep, Type: replaylog.StepReasoning, SessionID: s.ID, Text: p.Text})
			case loom.PartText:
				lg.Write(replaylog.Entry{Kind: replaylog.KindStep, Type: replaylog.StepText, SessionID: s.ID, Text: p.Text})
			}
		}
		calls := 0
		for i := range msg.Parts {
			if msg.Parts[i].Type != loom.PartTool {
				continue
			}
			calls++
			if err := l.runTool(ctx, s, msg, i, emit); err != nil {
				return nil, err
			}
		}
		if calls == 0 {
			res.Text = msg.Text()
			return res, nil
		}
	}
	return nil, loom.Errorf(loom.EINVALID, "the model was still calling tools after %d steps; stopped", maxSteps)
}

// assistantMessage turns a model response into the message to store:
// cost from the price table, an agent part linking each sub-agent call to
// the child session it will run in, and a step-finish part with the
// call's tokens and cost.
func (l *Loop) assistantMessage(resp *loom.ModelResponse) *loom.Message {
	u, model := l.callUsage(resp)
	now := l.now()
	parts := []loom.Part{{Type: loom.PartStepStart}}
	for _, p := range resp.Parts {
		if p.Type == loom.PartTool {
			if p.Status == "" {
				p.Status = loom.ToolPending
			}
			if len(p.Input) == 0 || !json.Valid(p.Input) {
				p.Input = json.RawMessage(`{}`)
			}
		}
		if p.Type == loom.PartTool && p.Name == SubAgentName {
			child := loom.NewID()
			p.Metadata, _ = json.Marshal(map[string]string{"session_id": child})
			parts = append(parts, p, loom.Part{Type: loom.PartAgent, Name: subAgentLabel(p.Input), SessionID: child})
			continue
		}
		parts = append(parts, p)
	}
	step := u
	parts = append(parts, loom.Part{Type: loom.PartStepFinish, Usage: &step})
	return &loom.Message{Role: loom.RoleAssistant, Parts: parts, Model: model, Provider: l.Provider.Name(), Usage: u, CompletedAt: &now}
}

// callUsage is what the model call that answered resp used, and the
// model that answered: one API call when the provider counted none,
// priced from the price table when the model is in it, and l.Model when
// the response names no model.
func (l *Loop) callUsage(resp *loom.ModelResponse) (loom.Usage, string) {
	u := resp.Usage
	if u.APICalls == 0 {
		u.APICalls = 1
	}
	model := resp.Model
	if model == "" {
		model = l.Model
	}
	if cost, ok := pricing.Cost(l.Provider.Name(), model, u); ok {
		u.CostUSD = cost
	}
	return u, model
}

// runTool runs the tool part at index i of msg, storing it as running and
// then as completed or error.
func (l *Loop) runTool(ctx context.Context, s *loom.Session, msg *loom.Message, i int, emit func(Event)) error {
	p := msg.Parts[i]
	lg := l.log(s)
	start := l.now()
	p.Status, p.StartedAt = loom.ToolRunning, &start
	if err := l.Store.UpdatePart(ctx, s.ID, msg.Seq, p); err != nil {
		return err
	}
	emit(Event{Kind: EventToolStart, Tool: p.Name, CallID: p.CallID, Input: string(p.Input), SessionID: s.ID})
	lg.Write(replaylog.Entry{Kind: replaylog.KindStep, Type: replaylog.StepToolStart, SessionID: s.ID, Tool: p.Name, CallID: p.CallID, Input: p.Input})
	out, runErr := l.callTool(ctx, s, p, emit)
	end := l.now()
	p.EndedAt = &end
	if runErr != nil {
		p.Status, p.Error = loom.ToolError, runErr.Error()
		if ctx.Err() != nil {
			p.Error = loom.Interrupted
		}
	} else {
		p.Status = loom.ToolCompleted
		p.Output, _ = json.Marshal(out)
	}
	// Store the outcome even when the turn was cancelled: the call
	// must not stay without a result.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := l.Store.UpdatePart(uctx, s.ID, msg.Seq, p); err != nil {
		return err
	}
	msg.Parts[i] = p
	emit(Event{Kind: EventToolEnd, Tool: p.Name, CallID: p.CallID, Output: out, Status: p.Status, Text: p.Error, Duration: end.Sub(start), SessionID: s.ID})
	lg.Write(replaylog.Entry{Kind: replaylog.KindStep, Type: replaylog.StepToolEnd, SessionID: s.ID, Tool: p.Name, CallID: p.CallID, Output: p.Output, Status: p.Status, Error: p.Error})
	if ctx.Err() != nil {
		return fmt.Errorf("turn cancelled: %w", ctx.Err())
	}
	return nil
}

func (l *Loop) callTool(ctx context.Context, s *loom.Session, p loom.Part, emit func(Event)) (string, error) {
	for _, t := range l.Tools {
		if t.Spec().Name == p.Name {
			return t.Run(ctx, &Call{Loop: l, Session: s, Part: p, Emit: emit})
		}
	}
	return "", fmt.Errorf("no tool named %q", p.Name)
}

func (l *Loop) toolSpecs() []loom.ToolSpec {
	specs := make([]loom.ToolSpec, 0, len(l.Tools))
	for _, t := range l.Tools {
		specs = append(specs, t.Spec())
	}
	return specs
}

// RepairInterrupted marks tool calls that a dead process left unfinished
// as interrupted, so the next request carries a result for every call.
func (l *Loop) RepairInterrupted(ctx context.Context, s *loom.Session) (int, error) {
	n, err := l.Store.RepairInterrupted(ctx, s.ID)
	if err != nil || n == 0 {
		return n, err
	}
	fresh, err := l.Store.Session(ctx, s.ID)
	if err != nil {
		return n, err
	}
	*s = *fresh
	return n, nil
}

// history is what the model is sent of a session: its context (the
// latest summary and what follows) without its system messages, which
// are never model input (modelcall.History).
func (l *Loop) history(ctx context.Context, s *loom.Session) ([]*loom.Message, error) {
	msgs, err := l.Store.Context(ctx, s.ID)
	if err != nil {
		return nil, fmt.Errorf("read the context of session %s: %w", s.ID, err)
	}
	return modelcall.History(msgs), nil
}

// redact replaces the secrets of a text this machine keeps outside the
// store (a memory file) that goes to the model's provider, as Redact
// says.
func (l *Loop) redact(s string) string {
	if l.Redact == nil || s == "" {
		return s
	}
	r, _ := l.Redact.Redact(s)
	return r
}

// SystemPrompt is the system text for a session: loom's base prompt, the
// profile's prompt, and the memory files.
func (l *Loop) SystemPrompt(s *loom.Session) string {
	var b strings.Builder
	b.WriteString(basePrompt)
	if l.System != "" {
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(l.System))
	}
	if m := l.redact(readFileText(l.MemoryFile)); m != "" {
		b.WriteString("\n\n# Memory (MEMORY.md)\n\n")
		b.WriteString(m)
	}
	if u := l.redact(readFileText(l.UserFile)); u != "" {
		b.WriteString("\n\n# About the user (USER.md)\n\n")
		b.WriteString(u)
	}
	if s.Cwd != "" {
		fmt.Fprintf(&b, "\n\nWorking directory: %s", s.Cwd)
	}
	if l.depth > 0 {
		b.WriteString("\n\nYou are a sub-agent: do the task you are given and answer with the result only.")
	}
	return b.String()
}

const basePrompt = `You are loom, a helpful assistant working in the user's terminal. Your conversations are kept in sessions the user can resume, search and fork. Use the session_search tool to recall what was said in earlier sessions, the memory tool to keep facts worth remembering across sessions, read_file to read files, and agent to hand a self-contained task to a sub-agent.`

// IsCancelled reports whether err ended a turn because its context was
// cancelled (Ctrl+C).
func IsCancelled(err error) bool {
	return errors.Is(err, context.Canceled)
}
