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
// (a model copies them into the next call), and closing lines that say
// how to get more whenever there is more. Some clients (Claude Code,
// Codex) give their model the structured content instead of the text:
// the closing lines are also its hint field, so that every model reads
// them (docs/mcp.md shows what each client passes on).

// inProject says where a search or list looked.
func inProject(p *loom.Project) string {
	if p == nil {
		return "in any project"
	}
	return fmt.Sprintf("in project %s (%s)", p.Name, p.Root)
}

// searchHints are what search_sessions' answer closes with: how to widen
// a search that found nothing, how to read around a match, how to get
// more.
func searchHints(query string, r searchResult, n int) []string {
	if len(r.Hits) == 0 {
		h := fmt.Sprintf("No messages match %q %s.", query, inProject(r.Project))
		if r.Project != nil {
			h += " Call again with all_projects=true to search every project."
		}
		return []string{h}
	}
	hints := []string{"To read around a match: read_session with ref=<session id> and before_seq=<seq + 3>."}
	if r.Partial {
		hints = append(hints, "partial: the search ranked only part of the matches (a busy machine, or words found in most messages); these are the best hits of those it ranked, but not all. Call again, or narrow it with more or rarer words.")
	}
	if r.More {
		hints = append(hints, fmt.Sprintf("more: there are more than %d matches; call again with a higher limit (at most %d) or narrow with more words, project, surface, role or since.", n, MaxSearchLimit))
	}
	return hints
}

func searchText(query string, r searchResult, hints []string, now time.Time) string {
	if len(r.Hits) == 0 {
		return strings.Join(hints, "\n")
	}
	var b strings.Builder
	where := inProject(r.Project)
	if r.Project == nil {
		where = "across all projects"
	}
	order := "best first"
	if r.Partial {
		order = "best first of those found in time"
	}
	fmt.Fprintf(&b, "%s matching %q %s, %s:\n", human.Plural(len(r.Hits), "message"), query, where, order)
	for i, h := range r.Hits {
		title := h.SessionTitle
		if title == "" {
			title = h.SessionKey
		}
		also := ""
		if len(h.AlsoIn) > 0 {
			also = " · also in " + strings.Join(h.AlsoIn, ", ")
		}
		fmt.Fprintf(&b, "\n%d. session %s %q · seq %d · %s · %s (%s)%s\n   %s\n", i+1, h.SessionID, title, h.Seq, h.Role,
			loom.FormatTime(h.CreatedAt), human.Ago(now, h.CreatedAt), also, human.OneLine(h.Snippet))
	}
	closing(&b, hints)
	return b.String()
}

// closing writes hints as the text's last lines.
func closing(b *strings.Builder, hints []string) {
	for _, h := range hints {
		b.WriteString("\n")
		b.WriteString(h)
	}
}

// listWhere says where list_sessions looked, and for what.
func listWhere(r listResult, query string) string {
	where := inProject(r.Project)
	if r.Project == nil && len(r.Sessions) > 0 {
		where = "across all projects"
	}
	if query != "" {
		where += fmt.Sprintf(" matching %q", query)
	}
	return where
}

// listHints are what list_sessions' answer closes with.
func listHints(r listResult, query string) []string {
	if len(r.Sessions) == 0 {
		h := fmt.Sprintf("No sessions %s.", listWhere(r, query))
		if r.Project != nil {
			h += " Call again with all_projects=true to list every project's sessions."
		}
		return []string{h}
	}
	if r.Next != "" {
		return []string{fmt.Sprintf("more: older sessions follow; call again with cursor=%q.", r.Next)}
	}
	return nil
}

func listText(r listResult, query string, hints []string, now time.Time) string {
	if len(r.Sessions) == 0 {
		return strings.Join(hints, "\n")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, most recently active first:\n", human.Plural(len(r.Sessions), "session"), listWhere(r, query))
	for _, s := range r.Sessions {
		b.WriteString("\n")
		sessionLine(&b, s, now)
	}
	closing(&b, hints)
	return b.String()
}

// sessionLine writes a session as list_sessions shows it: id and title,
// then what it is and where, then its size and age, its description (a
// summary, where one was written) and its last prompt.
func sessionLine(b *strings.Builder, s *loom.Session, now time.Time) {
	title := s.Title
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintf(b, "- %s %q\n  %s\n", s.ID, title, strings.Join(facts(s), " · "))
	fmt.Fprintf(b, "  %s in %s · created %s · active %s (%s)\n", human.Plural(s.MessageCount, "message"),
		human.Plural(s.TurnCount, "turn"), loom.FormatTime(s.CreatedAt), loom.FormatTime(s.UpdatedAt), human.Ago(now, s.UpdatedAt))
	if s.Description != "" {
		fmt.Fprintf(b, "  description: %s\n", loom.Truncate(human.OneLine(s.Description), 400))
	}
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

// readHints are what read_session's answer closes with: where a long
// text was cut and how to read it on, and how to page back or on.
func readHints(r readResult, a readArgs) []string {
	var hints []string
	s := r.Session
	for _, c := range r.Cut {
		if c.Next > 0 {
			hints = append(hints, fmt.Sprintf("more: seq %d's %s was cut at %d of %d characters; read on with read_session ref=%s seq=%d offset=%d.",
				c.Seq, c.Field, c.Next, c.Total, s.ID, c.Seq, c.Next))
		}
	}
	if r.NextBefore > 0 {
		hints = append(hints, fmt.Sprintf("more: %d earlier messages; call again with before_seq=%d.", r.NextBefore-1, r.NextBefore))
	}
	switch {
	case r.NextAfter > 0 && a.Turn > 0:
		hints = append(hints, fmt.Sprintf("more: turn %d goes on; call again with turn=%d after_seq=%d.", a.Turn, a.Turn, r.NextAfter))
	case r.NextAfter > 0:
		hints = append(hints, fmt.Sprintf("more: later messages follow; call again with after_seq=%d.", r.NextAfter))
	case a.Turn > 0 && a.Turn < s.TurnCount:
		hints = append(hints, fmt.Sprintf("more: the next turn is turn=%d.", a.Turn+1))
	}
	return hints
}

func readText(r readResult, a readArgs, hints []string, now time.Time) string {
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
	closing(&b, hints)
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
			// Blank lines around a text (imported replies often start
			// with some) would read as the gap between messages.
			b.WriteString(strings.Trim(p.Text, "\r\n"))
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
