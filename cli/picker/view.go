package picker

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// The markers the store puts around search matches in the picker's
// snippets: private-use characters, which the picker styles after it has
// escaped the snippet (term.SanitizeLine).
const (
	markOpen  = "\uE000"
	markClose = "\uE001"
)

// pickerStyles are the picker's styles, in the colours of the scheme;
// without colour only bold and the selection bar remain.
type pickerStyles struct {
	plain, accent, dim, title, selTitle, bar, match, err lipgloss.Style
}

func newPickerStyles(color bool) pickerStyles {
	plain := lipgloss.NewStyle()
	s := pickerStyles{plain: plain, accent: plain, dim: plain, title: plain.Bold(true), selTitle: plain.Bold(true),
		bar: plain.Bold(true), match: plain.Bold(true).Underline(true), err: plain.Bold(true)}
	if color {
		s.accent = plain.Foreground(term.AccentColor)
		s.dim = plain.Foreground(term.DimColor)
		s.title = s.title.Foreground(term.AccentColor)
		s.selTitle = s.selTitle.Foreground(term.AccentColor)
		s.bar = s.bar.Foreground(term.AccentColor)
		s.match = plain.Bold(true).Foreground(term.MatchColor)
		s.err = s.err.Foreground(ansi.Red)
	}
	return s
}

// pickerLayout is where the parts of the screen go: the list, and the
// preview beside it on a wide terminal, under it on a tall narrow one,
// or nowhere on a small one.
type pickerLayout struct {
	listW, listH, prevW, prevH int
	side                       bool
	status, help               []string
}

func (m *Model) layout() pickerLayout {
	w, h := max(m.width, 20), max(m.height, 6)
	l := pickerLayout{help: m.helpLines(w), status: m.statusLines(w)}
	body := max(h-2-len(l.status)-len(l.help), 2) // header and input lines
	switch {
	case w >= 100:
		l.side = true
		l.listW = w * 11 / 20
		l.prevW, l.prevH = w-l.listW-3, body
		l.listH = body
	case body >= 14:
		l.listW, l.prevW = w, w
		l.listH = body * 3 / 5
		l.prevH = body - l.listH - 1
	default:
		l.listW, l.listH = w, body
	}
	return l
}

// listRows is how many sessions the list shows at once.
func (m *Model) listRows() int { return max(m.layout().listH/2, 1) }

// scroll keeps the selected row on screen.
func (m *Model) scroll() {
	rows := m.listRows()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+rows {
		m.offset = m.cursor - rows + 1
	}
	m.offset = max(0, min(m.offset, m.rowCount()-rows))
}

// View draws the picker on the alternate screen.
func (m *Model) View() tea.View {
	if m.done {
		return tea.NewView("")
	}
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

func (m *Model) render() string {
	m.scroll()
	w := max(m.width, 20)
	l := m.layout()
	lines := []string{m.headerLine(w), m.inputLine(w)}
	list := m.listLines(l.listW, l.listH)
	switch {
	case l.side:
		prev := m.previewLines(l.prevW, l.prevH)
		sep := m.sty.dim.Render(" │ ")
		for i := range l.listH {
			lines = append(lines, pad(list[i], l.listW)+sep+prev[i])
		}
	case l.prevH > 0:
		lines = append(lines, list...)
		lines = append(lines, m.sty.dim.Render(ansi.Truncate("── preview "+strings.Repeat("─", w), w, "")))
		lines = append(lines, m.previewLines(l.prevW, l.prevH)...)
	default:
		lines = append(lines, list...)
	}
	lines = append(lines, l.status...)
	lines = append(lines, l.help...)
	return strings.Join(lines, "\n")
}

// pad fills s with spaces to w cells.
func pad(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}

// fit cuts s to w cells.
func fit(s string, w int) string { return ansi.Truncate(s, max(w, 0), "…") }

// sides puts right at the right end of a line of w cells after left,
// cutting left to make room.
func sides(left, right string, w int) string {
	rw := ansi.StringWidth(right)
	if rw+2 > w {
		return fit(left, w)
	}
	left = fit(left, w-rw-2)
	return pad(left, w-rw) + right
}

func (m *Model) headerLine(w int) string {
	where := "all projects"
	if !m.all {
		where = term.SanitizeLine(m.opts.Project.Name)
	}
	title := "Sessions in " + where
	if m.mode == modeSearch {
		title = "Messages in " + where
	}
	tabs := m.sty.dim.Render("sessions · ") + m.sty.accent.Render("[search]")
	if m.mode == modeSessions {
		tabs = m.sty.accent.Render("[sessions]") + m.sty.dim.Render(" · search")
	}
	return sides(m.sty.title.Render(title), tabs, w)
}

func (m *Model) inputLine(w int) string {
	in := &m.filterIn
	if m.mode == modeSearch {
		in = &m.searchIn
	}
	count := m.sty.dim.Render(m.countText())
	if !in.Focused() && in.Value() == "" {
		hint := "type to filter by title, key, last prompt or summary"
		if m.mode == modeSearch {
			hint = "type words to find in the messages"
		}
		return sides(m.sty.dim.Render(hint), count, w)
	}
	in.SetWidth(max(w-ansi.StringWidth(in.Prompt)-ansi.StringWidth(count)-3, 4))
	return sides(in.View(), count, w)
}

// countText says how many rows the list has, and whether more may come.
func (m *Model) countText() string {
	more := ""
	if m.next != nil {
		more = "+"
	}
	loaded := human.Count(int64(len(m.sessions))) + more
	switch {
	case !m.loaded:
		return "loading…"
	case m.mode == modeSearch && m.searching:
		return "searching…"
	case m.mode == modeSearch && m.searched == "":
		return ""
	case m.mode == modeSearch:
		n := human.Count(int64(len(m.hits)))
		if m.searchMore {
			n += "+"
		}
		return n + " matching " + plural(len(m.hits), "session")
	case m.filterIn.Value() != "" && m.next != nil:
		return fmt.Sprintf("%d of %s sessions, reading more…", len(m.matches), loaded)
	case m.filterIn.Value() != "":
		return fmt.Sprintf("%d of %s sessions", len(m.matches), loaded)
	}
	return loaded + " " + plural(len(m.sessions), "session")
}

// plural is the plural of unit ("session", "match") unless n is 1.
func plural(n int, unit string) string {
	switch {
	case n == 1:
		return unit
	case strings.HasSuffix(unit, "ch"):
		return unit + "es"
	}
	return unit + "s"
}

// maxStatusLines bounds the lines a status takes: a question that asks
// about a long title wraps, so that its keys stay on screen.
const maxStatusLines = 3

// statusLines is the status, wrapped to the width; one empty line when
// there is none.
func (m *Model) statusLines(w int) []string {
	if m.status == "" {
		return []string{""}
	}
	text, sty := m.status, m.sty.accent
	if m.isErr {
		text, sty = "error: "+term.SanitizeLine(m.status), m.sty.err
	}
	lines := strings.Split(ansi.Wrap(text, max(w, 1), " "), "\n")
	if len(lines) > maxStatusLines {
		lines[maxStatusLines-1] = fit(strings.Join(lines[maxStatusLines-1:], " "), w)
		lines = lines[:maxStatusLines]
	}
	for i, l := range lines {
		lines[i] = sty.Render(strings.TrimRight(l, " "))
	}
	return lines
}

// helpLines lists the keys of the moment, wrapped to the width.
func (m *Model) helpLines(w int) []string {
	var lines []string
	line, lineW := "", 0
	for _, b := range m.helpKeys() {
		if !b.Enabled() && len(b.Keys()) > 0 {
			continue
		}
		h := b.Help()
		item := m.sty.accent.Render(h.Key) + " " + m.sty.dim.Render(h.Desc)
		iw := ansi.StringWidth(h.Key) + 1 + ansi.StringWidth(h.Desc)
		if lineW > 0 && lineW+3+iw > w {
			lines = append(lines, line)
			line, lineW = "", 0
		}
		if lineW > 0 {
			line += m.sty.dim.Render(" · ")
			lineW += 3
		}
		line += item
		lineW += iw
	}
	return append(lines, fit(line, w))
}

// listLines draws the visible rows, two lines each, in h lines of w
// cells.
func (m *Model) listLines(w, h int) []string {
	lines := make([]string, 0, h)
	if m.rowCount() == 0 {
		lines = append(lines, m.sty.dim.Render(fit(m.emptyText(), w)))
	}
	for i := m.offset; i < m.rowCount() && len(lines)+2 <= h; i++ {
		lines = append(lines, m.rowLines(i, w)...)
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines
}

func (m *Model) emptyText() string {
	switch {
	case !m.loaded || (m.mode == modeSearch && m.searching):
		return "  loading…"
	case m.mode == modeSearch && strings.TrimSpace(m.searchIn.Value()) == "":
		return "  Type words to find in the messages."
	case m.mode == modeSearch && m.searchIn.Value() != m.searched:
		return "  enter searches."
	case m.mode == modeSearch:
		return "  No messages match."
	case m.filterIn.Value() != "":
		return "  No sessions match."
	}
	return "  No sessions."
}

// rowLines draws row i: the title with the short id and age on the
// right, and under it what the session holds (sessions) or its best
// match (search).
func (m *Model) rowLines(i, w int) []string {
	sel := i == m.cursor
	bar := "  "
	if sel {
		bar = m.sty.bar.Render("▌ ")
	}
	inner := w - 2
	var id, title, age, detail string
	var matched []int
	if m.mode == modeSearch {
		r := m.hits[i]
		id, title, age = r.id, r.title, human.ShortAgo(m.now, r.best.CreatedAt)
		head := fmt.Sprintf("%d %s · %s #%d: ", r.hits, plural(r.hits, "match"), r.best.Role, r.best.Seq)
		detail = m.sty.dim.Render(head) + m.snippet(r.best.Snippet, inner-ansi.StringWidth(head))
	} else {
		var s *loom.SessionSummary
		s, matched = m.sessionAt(i)
		id, title, age = s.ID, s.Title, human.ShortAgo(m.now, s.UpdatedAt)
		detail = m.sty.dim.Render(m.details(s))
	}
	right := m.sty.dim.Render(id[:min(len(id), m.idLen)] + "  " + fmt.Sprintf("%8s", age))
	var first string
	if m.input == inputRename && m.renameID == id {
		m.sizeRename(w)
		first = bar + m.renameIn.View()
	} else {
		first = bar + sides(m.titleText(title, matched, sel), right, inner)
	}
	return []string{first, bar + fit(detail, inner)}
}

// sizeRename fits the title input to a row of the list w cells wide,
// its bar aside.
func (m *Model) sizeRename(w int) {
	m.renameIn.SetWidth(max(w-2-ansi.StringWidth(m.renameIn.Prompt)-1, 4))
}

// titleText is a title with the filter's matches marked.
func (m *Model) titleText(title string, matched []int, sel bool) string {
	style := m.sty.plain
	if sel {
		style = m.sty.selTitle
	}
	title = term.SanitizeLine(title)
	if title == "" {
		return m.sty.dim.Render("(untitled)")
	}
	if len(matched) == 0 {
		return style.Render(title)
	}
	at := map[int]bool{}
	for _, b := range matched {
		at[b] = true
	}
	var b strings.Builder
	run, runMatch := "", false
	flush := func() {
		if run == "" {
			return
		}
		if runMatch {
			b.WriteString(m.sty.match.Render(run))
		} else {
			b.WriteString(style.Render(run))
		}
		run = ""
	}
	for i, r := range title {
		if at[i] != runMatch {
			flush()
			runMatch = at[i]
		}
		run += string(r)
	}
	flush()
	return b.String()
}

// details is the second line of a session's row: size, where it is
// (project, when every project is listed, key and git branch), the first
// line of its description (a summary, where one was written) and its
// last prompt, as much of them as the row has room for.
func (m *Model) details(s *loom.SessionSummary) string {
	parts := []string{human.Plural(s.MessageCount, "message")}
	if m.all && s.Project.Name != "" {
		parts = append(parts, term.SanitizeLine(s.Project.Name))
	}
	if s.Key != "" {
		parts = append(parts, term.SanitizeLine(s.Key))
	}
	if s.GitBranch != "" {
		parts = append(parts, "⎇ "+term.SanitizeLine(s.GitBranch))
	}
	if s.ArchivedAt != nil {
		parts = append(parts, "archived")
	}
	if d, _, _ := strings.Cut(s.Description, "\n"); strings.TrimSpace(d) != "" {
		parts = append(parts, term.SanitizeLine(strings.TrimSpace(d)))
	}
	if p := term.SanitizeLine(s.LastPrompt); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, " · ")
}

// snippet is a search snippet made safe to print, its matches marked,
// in w cells: when the first match would be cut off, the text before it
// is cut instead.
func (m *Model) snippet(s string, w int) string {
	s = term.SanitizeLine(s)
	if i := strings.Index(s, markOpen); i > 0 && ansi.StringWidth(s[:i]) > w/3 {
		s = "…" + ansi.TruncateLeft(s[:i], ansi.StringWidth(s[:i])-w/3, "") + s[i:]
	}
	var b strings.Builder
	for {
		i := strings.Index(s, markOpen)
		if i < 0 {
			break
		}
		b.WriteString(m.sty.dim.Render(s[:i]))
		s = s[i+len(markOpen):]
		j := strings.Index(s, markClose)
		if j < 0 {
			j = len(s)
		}
		b.WriteString(m.sty.match.Render(s[:j]))
		s = strings.TrimPrefix(s[j:], markClose)
	}
	b.WriteString(m.sty.dim.Render(s))
	return b.String()
}

// preview is the newest messages of one session, or, for a search's
// result, its best hit and the messages around it; and how they were
// last drawn.
type preview struct {
	// focus is the seq of the hit shown first; 0 for the newest
	// messages.
	focus   int64
	loading bool
	msgs    []*loom.Message
	err     error
	width   int
	lines   []string
	starts  []int // the first line of each message
}
