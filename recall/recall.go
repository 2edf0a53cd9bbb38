// Package recall answers "what do past sessions say about this prompt
// in this project": the turns of the user's sessions most relevant to a
// prompt, within a budget of tokens, each with its session and date, as
// loom recall, the agents' hooks and the MCP recall tool hand it to an
// agent. It searches with the store's keyword tiers and calls no model.
package recall

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

// DefaultTokens is the budget of a recall when none is given.
const DefaultTokens = 1500

// Options say what to recall.
type Options struct {
	// Prompt is what the agent was asked; empty recalls the project's
	// latest sessions by their titles (an agent's session start).
	Prompt    string
	UserID    string
	ProjectID string
	// Tokens bounds the whole answer, Text's rendering of it: at most
	// this many tokens as Estimate counts them (DefaultTokens when 0).
	Tokens int
	// Exclude leaves out a session: the one asking.
	Exclude string
	// Redact, when set, replaces the secrets it finds in what is
	// recalled (text and titles) by markers, before the budget is
	// applied: recall hands stored text to another agent and its model.
	Redact *secrets.Detector
}

// Turn is one recalled message.
type Turn struct {
	SessionID string    `json:"session_id"`
	Title     string    `json:"title,omitempty"`
	Date      time.Time `json:"date"`
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	Text      string    `json:"text"`
	// Tier is the search tier that found it (loom.SearchHit.Tier).
	Tier string `json:"tier,omitempty"`
}

// Result is what a recall found, best first, and what its rendering
// costs in tokens.
type Result struct {
	Tokens int    `json:"tokens"`
	Turns  []Turn `json:"turns"`
	// Redacted counts the secrets Options.Redact replaced.
	Redacted int `json:"redacted,omitempty"`
}

// Estimate counts the tokens of text as a model's tokenizer about does
// for English and code: one per four bytes, rounded up. It errs high
// for prose, so that a budget holds.
func Estimate(text string) int { return (len(text) + 3) / 4 }

// maxHits is how many search hits a recall reads.
const maxHits = 20

// maxTurnBytes bounds one turn's text: a long tool output is cut.
const maxTurnBytes = 1200

// Recall finds the turns of o.UserID's sessions in o.ProjectID most
// relevant to o.Prompt, best first, as many as fit in o.Tokens.
func Recall(ctx context.Context, st loom.Store, o Options) (*Result, error) {
	budget := o.Tokens
	if budget <= 0 {
		budget = DefaultTokens
	}
	res := &Result{Turns: []Turn{}}
	if strings.TrimSpace(o.Prompt) == "" {
		return latest(ctx, st, o, budget, res)
	}
	hits, err := st.Search(ctx, loom.SearchQuery{Text: o.Prompt, UserID: o.UserID, ProjectID: o.ProjectID, Limit: maxHits})
	if err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	used := Estimate(header)
	for _, h := range hits {
		if h.SessionID == o.Exclude {
			continue
		}
		text, err := turnText(ctx, st, h)
		if err != nil {
			return nil, err
		}
		t := Turn{SessionID: h.SessionID, Title: h.SessionTitle, Date: h.CreatedAt, Seq: h.Seq, Role: h.Role,
			Text: strings.Join(strings.Fields(text), " "), Tier: h.Tier}
		res.redact(o.Redact, &t)
		t.Text = loom.TruncateBytes(t.Text, maxTurnBytes)
		if !fit(&t, budget-used) {
			break
		}
		used += Estimate(t.line())
		res.Turns = append(res.Turns, t)
	}
	res.Tokens = Estimate(res.Text())
	return res, nil
}

// turnText is the text a hit recalls: its message, and for a prompt
// the reply that followed it (what was decided), read from the store;
// the hit's snippet, without its marks, when the message has no text.
func turnText(ctx context.Context, st loom.Store, h loom.SearchHit) (string, error) {
	msgs, err := st.Messages(ctx, h.SessionID, loom.MessageQuery{After: h.Seq - 1, Limit: turnRead, Oldest: true})
	if err != nil {
		return "", fmt.Errorf("recall: %w", err)
	}
	var parts []string
	for _, m := range msgs {
		t := strings.TrimSpace(m.Text())
		switch {
		case m.Seq == h.Seq:
			if t == "" {
				t = strings.NewReplacer(loom.DefaultMarkStart, "", loom.DefaultMarkEnd, "").Replace(h.Snippet)
			}
			parts = append(parts, t)
		case h.Role == loom.RoleUser && m.Role == loom.RoleAssistant && t != "":
			// The first reply with words: what the prompt led to.
			return strings.Join(append(parts, "→ "+t), " "), nil
		case m.Role == loom.RoleUser:
			return strings.Join(parts, " "), nil
		}
	}
	return strings.Join(parts, " "), nil
}

// turnRead is how many messages from a hit on are read for its reply.
const turnRead = 8

// latest recalls the titles of the project's latest sessions.
func latest(ctx context.Context, st loom.Store, o Options, budget int, res *Result) (*Result, error) {
	list, err := st.Sessions(ctx, loom.SessionFilter{UserID: o.UserID, ProjectID: o.ProjectID, Limit: maxHits})
	if err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	used := Estimate(header)
	for _, s := range list {
		if s.ID == o.Exclude || s.Title == "" {
			continue
		}
		t := Turn{SessionID: s.ID, Title: s.Title, Date: s.UpdatedAt, Role: loom.RoleUser, Text: s.Title}
		res.redact(o.Redact, &t)
		if !fit(&t, budget-used) {
			break
		}
		used += Estimate(t.line())
		res.Turns = append(res.Turns, t)
	}
	res.Tokens = Estimate(res.Text())
	return res, nil
}

// redact replaces the secrets d finds in t's text and title, counting
// them in r; a nil d changes nothing.
func (r *Result) redact(d *secrets.Detector, t *Turn) {
	if d == nil {
		return
	}
	var n, m int
	t.Text, n = d.Redact(t.Text)
	t.Title, m = d.Redact(t.Title)
	r.Redacted += n + m
}

// fit cuts t's text so that its line costs at most left tokens, and
// reports whether a useful part of it (a few words) is left.
func fit(t *Turn, left int) bool {
	over := Estimate(t.line()) - left
	if over <= 0 {
		return true
	}
	keep := len(t.Text) - 4*over - 4
	if keep < 80 {
		return false
	}
	t.Text = loom.TruncateBytes(t.Text, keep)
	return Estimate(t.line()) <= left
}

// header opens the text of a recall.
const header = "Past sessions in this project (loom recall; `loom session show ID` reads one):\n"

// line is how t reads in Text.
func (t Turn) line() string {
	title := ""
	if t.Title != "" && t.Title != t.Text {
		title = fmt.Sprintf(" %q", t.Title)
	}
	return fmt.Sprintf("- [%s, session %s%s, %s] %s\n", t.Date.UTC().Format("2006-01-02"), t.SessionID, title, t.Role, t.Text)
}

// Text renders r for an agent's context: one line per turn under a
// header; "" when nothing was recalled.
func (r *Result) Text() string {
	if len(r.Turns) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(header)
	for _, t := range r.Turns {
		b.WriteString(t.line())
	}
	return b.String()
}
