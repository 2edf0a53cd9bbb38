package agentclitest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// Answer is what a fake model answered one request with, in the terms
// every fake server has: the truth an agent's imported sessions are
// checked against (CheckFidelity).
type Answer struct {
	Request   providertest.Request
	Text      string
	Reasoning string
	Calls     []string // the tool calls' names
	// Usage is what the answer reported: input with its cached tokens,
	// output with its reasoning. Made is set when the fake made the
	// answer up (no script had one), so its usage is not known here.
	Usage Usage
	Made  bool
	// Failed is an error the fake answered with: no model call.
	Failed bool
}

// OpenAIAnswers are the answers of an openaitest server.
func OpenAIAnswers(as []providertest.Answered[openaitest.Reply]) []Answer {
	out := make([]Answer, 0, len(as))
	for _, a := range as {
		r := a.Reply
		x := Answer{Request: a.Request, Text: r.Text, Reasoning: r.Reasoning, Failed: r.Status >= 400 || r.StreamError != "" || r.Truncate || r.Hang}
		for _, c := range r.ToolCalls {
			x.Calls = append(x.Calls, c.Name)
		}
		if u := r.Usage; u != nil {
			x.Usage = Usage{Input: u.PromptTokens, Cached: u.CachedTokens, Output: u.CompletionTokens, Reasoning: u.ReasoningTokens}
		} else {
			x.Made = true
		}
		out = append(out, x)
	}
	return out
}

// AnthropicAnswers are the answers of an anthropictest server. Its
// input tokens do not hold the cache reads, which Answer's do.
func AnthropicAnswers(as []providertest.Answered[anthropictest.Reply]) []Answer {
	out := make([]Answer, 0, len(as))
	for _, a := range as {
		r := a.Reply
		x := Answer{Request: a.Request, Text: r.Text, Reasoning: r.Reasoning, Failed: r.Status >= 400 || r.StreamError != ""}
		for _, c := range r.ToolCalls {
			x.Calls = append(x.Calls, c.Name)
		}
		if u := r.Usage; u != nil {
			x.Usage = Usage{Input: u.InputTokens + u.CacheReadInputTokens, Cached: u.CacheReadInputTokens, Output: u.OutputTokens}
		} else {
			x.Made = true
		}
		out = append(out, x)
	}
	return out
}

// TurnAnswers are the answers of a Scripted server (Codex's Responses
// API, Gemini's); one it made up answered Reply with FallbackUsage.
func TurnAnswers(as []providertest.Answered[Turn]) []Answer {
	out := make([]Answer, 0, len(as))
	for _, a := range as {
		tn := a.Reply.orFallback()
		x := Answer{Request: a.Request, Text: tn.Text, Reasoning: tn.Reasoning, Usage: tn.Usage}
		for _, c := range tn.Calls {
			x.Calls = append(x.Calls, c.Name)
		}
		out = append(out, x)
	}
	return out
}

// Expect is what a test knows of how an agent records its calls.
type Expect struct {
	// Summary tells, by its request, a compaction's call: its answer is
	// kept as a summary message, not as a reply.
	Summary func(providertest.Request) bool
	// NotRecorded tells, by their requests, the calls the agent makes
	// and keeps no usage of, each by the name docs/import.md gives it
	// ("not recorded"): they are left out of the calls and tokens
	// compared, and (but for a summary's) their answers are in no
	// session.
	NotRecorded map[string]func(providertest.Request) bool
	// Discarded tells the answers the agent threw away though it
	// records their calls (a compaction cancelled after its call): their
	// text is in no reply.
	Discarded func(Answer) bool
	// NoReasoning says the agent does not keep the model's reasoning.
	NoReasoning bool
	// NoUsage says the agent records no usage of its calls (docs/import.md
	// names it not recorded): the calls and tokens are not compared.
	NoUsage bool
}

// Imported is one imported session with its messages.
type Imported struct {
	Session  *loom.Session
	Messages []*loom.Message
}

// CheckFidelity checks an agent's imported sessions against what its
// fake model was asked and answered: every prompt in them was sent to
// the model; every answer's text, reasoning block and tool call is in
// them once, each session's replies in the order the model gave them,
// each call completed; each compaction's call left a summary; sub-agents
// are linked to their parents; and the model calls and tokens are those
// of the answers, but for the calls named not recorded.
func CheckFidelity(t testing.TB, answers []Answer, sessions []Imported, e Expect) {
	t.Helper()
	w := wantOfAnswers(t, answers, e)
	g := gotOfSessions(t, sessions, w)
	sameBag(t, "reply texts", g.texts, w.texts)
	sameBag(t, "reasoning blocks", g.reasoning, w.reasoning)
	sameBag(t, "tool calls", g.calls, w.toolCalls)
	if g.summaries != w.summaries || g.usage.Compactions != w.summaries {
		t.Errorf("%d summary messages and %d compactions; the model made %d summaries", g.summaries, g.usage.Compactions, w.summaries)
	}
	got := g.usage
	if e.NoUsage {
		if got.APICalls != 0 || got.InputTokens+got.OutputTokens != 0 {
			t.Errorf("%d model calls and %d tokens imported from an agent said to record none", got.APICalls, got.InputTokens+got.OutputTokens)
		}
	} else if got.APICalls != w.calls {
		t.Errorf("%d model calls imported; the model answered %d that the agent records", got.APICalls, w.calls)
	}
	if u := (Usage{Input: got.InputTokens, Cached: got.CacheReadTokens, Output: got.OutputTokens}); u != w.usage && !e.NoUsage {
		t.Errorf("tokens imported %+v; the model reported %+v for the calls the agent records", u, w.usage)
	}
	t.Logf("fidelity: %d answers, %d calls recorded, %d replies, %d reasoning blocks, %d tool calls, %d summaries, %d sessions",
		len(answers), w.calls, len(w.texts), len(w.reasoning), len(w.toolCalls), w.summaries, len(sessions))
}

// fidelityWant is what CheckFidelity wants of the sessions, from the
// model's answers: the prompts sent, the usage and number of the calls
// the agent records, the summaries, the replies' texts (with the place
// of each said once in order), reasoning blocks and tool calls.
type fidelityWant struct {
	sent                        []string
	usage                       Usage
	calls, summaries            int64
	texts, reasoning, toolCalls []string
	order                       map[string]int
}

func wantOfAnswers(t testing.TB, answers []Answer, e Expect) *fidelityWant {
	t.Helper()
	w := &fidelityWant{order: map[string]int{}}
	for _, a := range answers {
		w.sent = append(w.sent, Strings(a.Request.Raw))
	}
	notRecorded := map[string]int{}
	for i, a := range answers {
		if a.Failed {
			continue
		}
		summary := e.Summary != nil && e.Summary(a.Request) && (e.Discarded == nil || !e.Discarded(a))
		if summary {
			w.summaries++
		}
		if name := notRecordedName(a, e); name != "" {
			notRecorded[name]++
			continue
		}
		if a.Made {
			t.Errorf("request %d (%.120q) was answered by no script: what the agent keeps of it cannot be checked", i+1, lastLine(Strings(a.Request.Raw)))
			continue
		}
		w.calls++
		w.usage.Input += a.Usage.Input - a.Usage.Cached
		w.usage.Cached += a.Usage.Cached
		w.usage.Output += a.Usage.Output
		if summary || e.Discarded != nil && e.Discarded(a) {
			continue
		}
		w.answered(a, i, e)
	}
	if len(notRecorded) > 0 {
		t.Logf("calls not recorded, as docs/import.md says: %v", notRecorded)
	}
	return w
}

// answered adds what answer i, a recorded one, says: its text, its
// reasoning and its tool calls.
func (w *fidelityWant) answered(a Answer, i int, e Expect) {
	if s := strings.TrimSpace(a.Text); s != "" {
		w.texts = append(w.texts, s)
		if _, dup := w.order[s]; dup {
			w.order[s] = -1
		} else {
			w.order[s] = i
		}
	}
	if s := strings.TrimSpace(a.Reasoning); s != "" && !e.NoReasoning {
		w.reasoning = append(w.reasoning, s)
	}
	w.toolCalls = append(w.toolCalls, a.Calls...)
}

// fidelityGot is what the imported sessions hold of what fidelityWant
// names.
type fidelityGot struct {
	usage                   loom.Usage
	texts, reasoning, calls []string
	summaries               int64
	byID                    map[string]Imported
}

func gotOfSessions(t testing.TB, sessions []Imported, w *fidelityWant) *fidelityGot {
	t.Helper()
	g := &fidelityGot{byID: map[string]Imported{}}
	for _, im := range sessions {
		g.byID[im.Session.ID] = im
	}
	for _, im := range sessions {
		s := im.Session
		g.usage.Add(s.Usage)
		last := -1
		for _, m := range im.Messages {
			if m.Role == loom.RoleSummary {
				g.summaries++
			}
			for _, p := range m.Parts {
				g.part(t, w, s, m, p, &last)
			}
		}
		if s.Kind == loom.KindSubagent {
			parent, ok := g.byID[s.ParentID]
			if !ok || !slices.ContainsFunc(parent.Messages, func(m *loom.Message) bool {
				return slices.ContainsFunc(m.Parts, func(p loom.Part) bool { return p.Type == loom.PartAgent && p.SessionID == s.ID })
			}) {
				t.Errorf("%s: a sub-agent no agent part of its parent (%s) links", s.Key, s.ParentID)
			}
		}
	}
	return g
}

// part takes in part p of message m of session s; last is the place,
// among the answers, of the latest reply of s read so far.
func (g *fidelityGot) part(t testing.TB, w *fidelityWant, s *loom.Session, m *loom.Message, p loom.Part, last *int) {
	t.Helper()
	switch {
	case p.Type == loom.PartText && m.Role == loom.RoleUser && strings.TrimSpace(p.Text) != "":
		if !slices.ContainsFunc(w.sent, func(r string) bool { return strings.Contains(r, strings.TrimSpace(p.Text)) }) {
			t.Errorf("%s: the prompt %.100q was never sent to the model", s.Key, p.Text)
		}
	case p.Type == loom.PartText && m.Role == loom.RoleAssistant && strings.TrimSpace(p.Text) != "":
		x := strings.TrimSpace(p.Text)
		g.texts = append(g.texts, x)
		if i, ok := w.order[x]; ok && i >= 0 {
			if i < *last {
				t.Errorf("%s: the reply %q comes after one the model gave later", s.Key, x)
			}
			*last = i
		}
	case p.Type == loom.PartReasoning && strings.TrimSpace(p.Text) != "":
		g.reasoning = append(g.reasoning, strings.TrimSpace(p.Text))
	case p.Type == loom.PartTool:
		g.calls = append(g.calls, p.Name)
		if p.Status != loom.ToolCompleted && p.Status != loom.ToolError {
			t.Errorf("%s: the call %s (%s) is %s, without its result", s.Key, p.Name, p.CallID, p.Status)
		}
	case p.Type == loom.PartAgent:
		if sub, ok := g.byID[p.SessionID]; !ok || sub.Session.ParentID != s.ID {
			t.Errorf("%s: its agent part names %q, not a sub-agent of it", s.Key, p.SessionID)
		}
	}
}

func notRecordedName(a Answer, e Expect) string {
	for name, is := range e.NotRecorded {
		if is(a.Request) {
			return name
		}
	}
	return ""
}

// sameBag fails the test unless got and want hold the same strings as
// often, in any order.
func sameBag(t testing.TB, what string, got, want []string) {
	t.Helper()
	n := map[string]int{}
	for _, s := range want {
		n[s]++
	}
	for _, s := range got {
		n[s]--
	}
	var diff []string
	for s, k := range n {
		switch {
		case k > 0:
			diff = append(diff, fmt.Sprintf("missing %d× %.80q", k, s))
		case k < 0:
			diff = append(diff, fmt.Sprintf("%d× more %.80q", -k, s))
		}
	}
	if len(diff) > 0 {
		slices.Sort(diff)
		t.Errorf("%s imported unlike the model's answers: %s", what, strings.Join(diff, "; "))
	}
}
