package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
)

// The text the tools return is what a model reads: plain lines, full ids
// (a model copies them into the next call), and a closing line that says
// how to get more whenever there is more.

func searchText(query string, r searchResult, n int, now time.Time) string {
	var b strings.Builder
	where := "in any project"
	if r.Project != nil {
		where = fmt.Sprintf("in project %s (%s)", r.Project.Name, r.Project.Root)
	}
	if len(r.Hits) == 0 {
		fmt.Fprintf(&b, "No messages match %q %s.", query, where)
		if r.Project != nil {
			b.WriteString(" Call again with all_projects=true to search every project.")
		}
		return b.String()
	}
	if r.Project == nil {
		where = "across all projects"
	}
	fmt.Fprintf(&b, "%s matching %q %s, best first:\n", human.Plural(len(r.Hits), "message"), query, where)
	for i, h := range r.Hits {
		title := h.SessionTitle
		if title == "" {
			title = h.SessionKey
		}
		fmt.Fprintf(&b, "\n%d. session %s %q · seq %d · %s · %s (%s)\n   %s\n", i+1, h.SessionID, title, h.Seq, h.Role,
			loom.FormatTime(h.CreatedAt), human.Ago(now, h.CreatedAt), human.OneLine(h.Snippet))
	}
	b.WriteString("\nTo read around a match: read_session with ref=<session id> and before_seq=<seq + 3>.")
	if r.More {
		fmt.Fprintf(&b, "\nmore: there are more than %d matches; call again with a higher limit (at most %d) or narrow with more words, project, surface, role or since.", n, MaxSearchLimit)
	}
	return b.String()
}

func listText(r listResult, query string, now time.Time) string {
	var b strings.Builder
	where := "in any project"
	if len(r.Sessions) > 0 {
		where = "across all projects"
	}
	if r.Project != nil {
		where = fmt.Sprintf("in project %s (%s)", r.Project.Name, r.Project.Root)
	}
	if query != "" {
		where += fmt.Sprintf(" matching %q", query)
	}
	if len(r.Sessions) == 0 {
		fmt.Fprintf(&b, "No sessions %s.", where)
		if r.Project != nil {
			b.WriteString(" Call again with all_projects=true to list every project's sessions.")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s %s, most recently active first:\n", human.Plural(len(r.Sessions), "session"), where)
	for _, s := range r.Sessions {
		b.WriteString("\n")
		sessionLine(&b, s, now)
	}
	if r.Next != "" {
		fmt.Fprintf(&b, "\nmore: older sessions follow; call again with cursor=%q.", r.Next)
	}
	return b.String()
}

// sessionLine writes a session as list_sessions shows it: id and title,
// then what it is and where, then its size and age.
func sessionLine(b *strings.Builder, s *loom.Session, now time.Time) {
	title := s.Title
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintf(b, "- %s %q\n  %s\n", s.ID, title, strings.Join(facts(s), " · "))
	fmt.Fprintf(b, "  %s in %s · created %s · active %s (%s)\n", human.Plural(s.MessageCount, "message"),
		human.Plural(s.TurnCount, "turn"), loom.FormatTime(s.CreatedAt), loom.FormatTime(s.UpdatedAt), human.Ago(now, s.UpdatedAt))
	if s.LastPrompt != "" {
		fmt.Fprintf(b, "  last prompt: %s\n", loom.Truncate(human.OneLine(s.LastPrompt), 200))
	}
}

// facts are a session's surface, kind, project, branch and model.
func facts(s *loom.Session) []string {
	f := []string{s.Surface}
	if s.Kind != "" && s.Kind != loom.KindMain {
		k := s.Kind + " of " + s.ParentID
		if s.Kind == loom.KindFork && s.ForkTurn > 0 {
			k += fmt.Sprintf(" at turn %d", s.ForkTurn)
		}
		f = append(f, k)
	}
	if s.Project.Name != "" {
		f = append(f, "project "+s.Project.Name+" ("+s.Project.Root+")")
	}
	if s.GitBranch != "" {
		f = append(f, "branch "+s.GitBranch)
	}
	if s.Model != "" {
		f = append(f, "model "+s.Model)
	}
	if s.Source != nil {
		src := "imported from " + s.Source.Tool
		if s.Source.Version != "" {
			src += " " + s.Source.Version
		}
		f = append(f, src)
	}
	return f
}

func readText(r readResult, a readArgs, now time.Time) string {
	var b strings.Builder
	s := r.Session
	fmt.Fprintf(&b, "Session %s %q\n%s\n", s.ID, s.Title, strings.Join(facts(s), " · "))
	fmt.Fprintf(&b, "%s in %s · created %s · active %s (%s)", human.Plural(s.MessageCount, "message"),
		human.Plural(s.TurnCount, "turn"), loom.FormatTime(s.CreatedAt), loom.FormatTime(s.UpdatedAt), human.Ago(now, s.UpdatedAt))
	if s.Usage.CostUSD > 0 || human.HasTokens(s.Usage) {
		fmt.Fprintf(&b, " · %s", human.Usage(s.Usage))
	}
	b.WriteString("\n")
	if s.Description != "" {
		fmt.Fprintf(&b, "%s\n", loom.Truncate(s.Description, 500))
	}
	if len(r.Messages) == 0 {
		b.WriteString("\nNo messages here.")
		return b.String()
	}
	first, last := r.Messages[0].Seq, r.Messages[len(r.Messages)-1].Seq
	switch {
	case a.Seq > 0:
		fmt.Fprintf(&b, "\nMessage %d of %d:\n", first, s.MessageCount)
	case a.Turn > 0:
		fmt.Fprintf(&b, "\nTurn %d of %d, messages %d–%d:\n", a.Turn, s.TurnCount, first, last)
	default:
		fmt.Fprintf(&b, "\nMessages %d–%d of %d:\n", first, last, s.MessageCount)
	}
	for _, m := range r.Messages {
		writeMessage(&b, s.ID, m)
	}
	for _, c := range r.Cut {
		if c.Next > 0 {
			fmt.Fprintf(&b, "\nmore: seq %d's %s was cut at %d of %d characters; read on with read_session ref=%s seq=%d offset=%d.",
				c.Seq, c.Field, c.Next, c.Total, s.ID, c.Seq, c.Next)
		}
	}
	if r.NextBefore > 0 {
		fmt.Fprintf(&b, "\nmore: %d earlier messages; call again with before_seq=%d.", r.NextBefore-1, r.NextBefore)
	}
	if a.Turn > 0 && a.Turn < s.TurnCount {
		fmt.Fprintf(&b, "\nmore: the next turn is turn=%d.", a.Turn+1)
	}
	return b.String()
}

// writeMessage writes one message: a header line, then each part.
func writeMessage(b *strings.Builder, sessionID string, m *loom.Message) {
	fmt.Fprintf(b, "\n[seq %d · %s · turn %d · %s", m.Seq, m.Role, m.Turn, loom.FormatTime(m.CreatedAt))
	if m.Model != "" {
		fmt.Fprintf(b, " · %s", m.Model)
	}
	b.WriteString("]\n")
	if m.Error != nil {
		fmt.Fprintf(b, "(failed: %s)\n", m.Error.Message)
	}
	for _, p := range m.Parts {
		switch p.Type {
		case loom.PartText:
			b.WriteString(p.Text)
			b.WriteString("\n")
		case loom.PartReasoning:
			fmt.Fprintf(b, "(reasoning) %s\n", p.Text)
		case loom.PartTool:
			status := p.Status
			if p.StartedAt != nil && p.EndedAt != nil {
				status += ", " + human.Duration(p.EndedAt.Sub(*p.StartedAt))
			}
			fmt.Fprintf(b, "(tool call %s, %s) %s\n", p.Name, status, loom.JSONText(p.Input))
			if out := loom.JSONText(p.Output); out != "" {
				fmt.Fprintf(b, "(tool output) %s\n", out)
			}
			if p.Error != "" {
				fmt.Fprintf(b, "(tool error) %s\n", p.Error)
			}
		case loom.PartFile:
			fmt.Fprintf(b, "(file %s)\n", p.Filename)
		case loom.PartAgent:
			fmt.Fprintf(b, "(sub-agent %s)\n", p.Name)
		}
	}
}

// bounds are the most characters of each kind of text read_session
// returns, after skipping offset characters of each.
type bounds struct {
	text, reasoning, input, output, offset int
}

// cut records a text read_session shortened: which message and part,
// which field, how long it is, and where reading on starts (0: it was
// read to its end).
type cut struct {
	Seq   int64  `json:"seq"`
	Part  int    `json:"part"`
	Field string `json:"field"`
	Total int    `json:"total"`
	Next  int    `json:"next"`
}

// apply returns copies of msgs with their long texts cut, and where.
func (bd bounds) apply(msgs []*loom.Message) ([]*loom.Message, []cut) {
	var cuts []cut
	out := make([]*loom.Message, len(msgs))
	for i, m := range msgs {
		c := *m
		c.Parts = append([]loom.Part(nil), m.Parts...)
		for j := range c.Parts {
			p := &c.Parts[j]
			field := func(name string, s string, n int) string {
				short, total, next := window(s, bd.offset, n)
				if short != s {
					cuts = append(cuts, cut{Seq: m.Seq, Part: j, Field: name, Total: total, Next: next})
				}
				return short
			}
			// A JSON field cut is kept as a JSON string of what is left.
			jsonField := func(name string, r *json.RawMessage, n int) {
				if s := loom.JSONText(*r); s != "" {
					if short := field(name, s, n); short != s {
						*r = jsonString(short)
					}
				}
			}
			switch p.Type {
			case loom.PartText:
				p.Text = field("text", p.Text, bd.text)
			case loom.PartReasoning:
				p.Text = field("reasoning", p.Text, bd.reasoning)
			case loom.PartTool:
				jsonField("input", &p.Input, bd.input)
				jsonField("output", &p.Output, bd.output)
				p.Error = field("error", p.Error, bd.output)
			}
		}
		out[i] = &c
	}
	return out, cuts
}

// window returns up to n runes of s from rune offset on, marked where
// cut; total is s's length in runes and next the offset to read on from
// (0 when the window reaches the end).
func window(s string, offset, n int) (short string, total, next int) {
	if offset == 0 && len(s) <= n { // bytes ≥ runes: short enough
		return s, len(s), 0
	}
	r := []rune(s)
	total = len(r)
	if offset == 0 && total <= n {
		return s, total, 0
	}
	from := min(offset, total)
	to := min(from+n, total)
	short = string(r[from:to])
	if from > 0 {
		short = fmt.Sprintf("[… %d characters before]", from) + short
	}
	if to < total {
		short += fmt.Sprintf("[… cut: %d more characters]", total-to)
		next = to
	}
	return short, total, next
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
