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
	var sent []string
	for _, a := range answers {
		sent = append(sent, Strings(a.Request.Raw))
	}
	var want Usage
	var calls, summaries int64
	var texts, reasoning []string
	var toolCalls []string
	order := map[string]int{}
	notRecorded := map[string]int{}
	for i, a := range answers {
		if a.Failed {
			continue
		}
		summary := e.Summary != nil && e.Summary(a.Request) && (e.Discarded == nil || !e.Discarded(a))
		if summary {
			summaries++
		}
		if name := notRecordedName(a, e); name != "" {
			notRecorded[name]++
			continue
		}
		if a.Made {
			t.Errorf("request %d (%.120q) was answered by no script: what the agent keeps of it cannot be checked", i+1, lastLine(Strings(a.Request.Raw)))
			continue
		}
		calls++
		want.Input += a.Usage.Input - a.Usage.Cached
		want.Cached += a.Usage.Cached
		want.Output += a.Usage.Output
		if summary || e.Discarded != nil && e.Discarded(a) {
			continue
		}
		if s := strings.TrimSpace(a.Text); s != "" {
			texts = append(texts, s)
			if _, dup := order[s]; dup {
				order[s] = -1
			} else {
				order[s] = i
			}
		}
		if s := strings.TrimSpace(a.Reasoning); s != "" && !e.NoReasoning {
			reasoning = append(reasoning, s)
		}
		toolCalls = append(toolCalls, a.Calls...)
	}
	if len(notRecorded) > 0 {
		t.Logf("calls not recorded, as docs/import.md says: %v", notRecorded)
	}

	var got loom.Usage
	var gotTexts, gotReasoning, gotCalls []string
	var gotSummaries int64
	byID := map[string]Imported{}
	for _, im := range sessions {
		byID[im.Session.ID] = im
	}
	for _, im := range sessions {
		s := im.Session
		got.Add(s.Usage)
		last := -1
		for _, m := range im.Messages {
			if m.Role == loom.RoleSummary {
				gotSummaries++
			}
			for _, p := range m.Parts {
				switch {
				case p.Type == loom.PartText && m.Role == loom.RoleUser && strings.TrimSpace(p.Text) != "":
					if !slices.ContainsFunc(sent, func(r string) bool { return strings.Contains(r, strings.TrimSpace(p.Text)) }) {
						t.Errorf("%s: the prompt %.100q was never sent to the model", s.Key, p.Text)
					}
				case p.Type == loom.PartText && m.Role == loom.RoleAssistant && strings.TrimSpace(p.Text) != "":
					x := strings.TrimSpace(p.Text)
					gotTexts = append(gotTexts, x)
					if i, ok := order[x]; ok && i >= 0 {
						if i < last {
							t.Errorf("%s: the reply %q comes after one the model gave later", s.Key, x)
						}
						last = i
					}
				case p.Type == loom.PartReasoning && strings.TrimSpace(p.Text) != "":
					gotReasoning = append(gotReasoning, strings.TrimSpace(p.Text))
				case p.Type == loom.PartTool:
					gotCalls = append(gotCalls, p.Name)
					if p.Status != loom.ToolCompleted && p.Status != loom.ToolError {
						t.Errorf("%s: the call %s (%s) is %s, without its result", s.Key, p.Name, p.CallID, p.Status)
					}
				case p.Type == loom.PartAgent:
					if sub, ok := byID[p.SessionID]; !ok || sub.Session.ParentID != s.ID {
						t.Errorf("%s: its agent part names %q, not a sub-agent of it", s.Key, p.SessionID)
					}
				}
			}
		}
		if s.Kind == loom.KindSubagent {
			parent, ok := byID[s.ParentID]
			if !ok || !slices.ContainsFunc(parent.Messages, func(m *loom.Message) bool {
				return slices.ContainsFunc(m.Parts, func(p loom.Part) bool { return p.Type == loom.PartAgent && p.SessionID == s.ID })
			}) {
				t.Errorf("%s: a sub-agent no agent part of its parent (%s) links", s.Key, s.ParentID)
			}
		}
	}
	sameBag(t, "reply texts", gotTexts, texts)
	sameBag(t, "reasoning blocks", gotReasoning, reasoning)
	sameBag(t, "tool calls", gotCalls, toolCalls)
	if gotSummaries != summaries || got.Compactions != summaries {
		t.Errorf("%d summary messages and %d compactions; the model made %d summaries", gotSummaries, got.Compactions, summaries)
	}
	if e.NoUsage {
		if got.APICalls != 0 || got.InputTokens+got.OutputTokens != 0 {
			t.Errorf("%d model calls and %d tokens imported from an agent said to record none", got.APICalls, got.InputTokens+got.OutputTokens)
		}
	} else if got.APICalls != calls {
		t.Errorf("%d model calls imported; the model answered %d that the agent records", got.APICalls, calls)
	}
	if g := (Usage{Input: got.InputTokens, Cached: got.CacheReadTokens, Output: got.OutputTokens}); g != want && !e.NoUsage {
		t.Errorf("tokens imported %+v; the model reported %+v for the calls the agent records", g, want)
	}
	t.Logf("fidelity: %d answers, %d calls recorded, %d replies, %d reasoning blocks, %d tool calls, %d summaries, %d sessions",
		len(answers), calls, len(texts), len(reasoning), len(toolCalls), summaries, len(sessions))
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
