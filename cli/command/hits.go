package command

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// PartialNote is the line a search prints that ranked only part of its
// matches: it ran out of time, or its words are all in more messages
// than a search ranks at once.
const PartialNote = "Search ranked only part of the matches (a busy machine, or words found in most messages): these are the best hits of those it ranked, not all; try again, or add a rarer word."

// MatchesElsewhere reports whether q, which found nothing in the project
// it keeps to, matches in another project (or outside any).
func MatchesElsewhere(ctx context.Context, st loom.Store, q loom.SearchQuery) (bool, error) {
	if q.ProjectID == "" {
		return false, nil
	}
	q.ProjectID, q.Limit = "", 1
	hits, err := st.Search(ctx, q)
	return len(hits) > 0, err
}

// matchStart and matchEnd mark matches in snippets meant for a colour
// terminal: private-use characters, which no terminal acts on, so that
// the snippet (stored text) can be escaped before they become the match
// style (highlightSnippet).
const (
	matchStart = "\uE000"
	matchEnd   = "\uE001"
)

// MarkForTerminal makes q mark matches for highlightSnippet on a colour
// terminal (elsewhere the store's default, **match**).
func MarkForTerminal(ios *term.IOStreams, q *loom.SearchQuery) {
	if ios.ColorEnabled() {
		q.MarkStart, q.MarkEnd = matchStart, matchEnd
	}
}

// highlightSnippet escapes a snippet for the terminal and shows the
// matches MarkForTerminal marked in bold yellow.
func highlightSnippet(cs *term.ColorScheme, snippet string) string {
	start, end := cs.MatchMarks()
	return strings.NewReplacer(matchStart, start, matchEnd, end).Replace(term.SanitizeLine(snippet))
}

// snippetIndent is how far a hit's snippet stands in, under its line.
const snippetIndent = "    "

// indentSnippet wraps a snippet at word boundaries to the terminal's
// width, each line under the snippet's start (a hanging indent), so that
// a long one reads as one block under its hit rather than running back
// to the first column.
func indentSnippet(snippet string, width int) string {
	limit := max(width-len(snippetIndent), 20)
	var b strings.Builder
	for _, line := range strings.Split(ansi.Wrap(snippet, limit, ""), "\n") {
		b.WriteString(snippetIndent + strings.TrimLeft(line, " ") + "\n")
	}
	return b.String()
}

// WriteHits prints search hits on standard output: on a terminal a line
// per hit with the session's short id, title, the message's seq, role
// and age, and the snippet under it; piped, tab-separated fields with
// full ids.
func WriteHits(ios *term.IOStreams, hits []loom.SearchHit, now time.Time, idLen int) error {
	cs := ios.ColorScheme()
	if !ios.IsStdoutTTY() {
		tp := term.NewTable(ios)
		for _, h := range hits {
			tp.AddField(h.SessionID, nil)
			tp.AddField(strconv.FormatInt(h.Seq, 10), nil)
			tp.AddField(h.Role, nil)
			tp.AddField(loom.FormatTime(h.CreatedAt), nil)
			tp.AddField(h.SessionTitle, nil)
			tp.AddField(h.Snippet, nil)
			tp.EndRow()
		}
		return tp.Render()
	}
	for _, h := range hits {
		title := h.SessionTitle
		if title == "" {
			title = h.SessionKey
		}
		meta := fmt.Sprintf("#%d %s · %s", h.Seq, h.Role, human.ShortAgo(now, h.CreatedAt))
		if len(h.AlsoIn) > 0 {
			// A message a fork or rewind inherited: one hit.
			meta += " · also in " + human.Plural(len(h.AlsoIn), "other session")
		}
		if h.Tier != "" {
			// Found by a tier after every word: say how.
			meta += " · " + TierNames[h.Tier]
		}
		id := term.AbbrevID(ios, h.SessionID, idLen)
		// The title gives way, so that the hit's line fits the terminal.
		room := max(ios.TerminalWidth()-ansi.StringWidth(id)-ansi.StringWidth(meta)-4, 12)
		fmt.Fprintf(ios.Out, "%s  %s  %s\n", cs.Cyan(id), cs.Bold(ansi.Truncate(term.SanitizeLine(title), room, "…")), cs.Gray(meta))
		fmt.Fprint(ios.Out, indentSnippet(highlightSnippet(cs, h.Snippet), ios.TerminalWidth()))
	}
	return nil
}

// TierNames says how a hit of each tier of a search matched.
var TierNames = map[string]string{
	loom.TierWordForms: "word forms",
	loom.TierTitle:     "title",
	loom.TierAnyWord:   "some words",
	loom.TierFuzzy:     "prefix or typo",
}

// HitSessions returns the ids of hits' sessions.
func HitSessions(hits []loom.SearchHit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.SessionID
	}
	return ids
}
