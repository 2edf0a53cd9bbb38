package term

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Table prints rows as aligned, coloured columns that fit the
// terminal, or as tab-separated lines without a header when the output is
// not a terminal, which is what cut, awk and sort expect.
type Table struct {
	out    io.Writer
	tty    bool
	width  int
	cs     *ColorScheme
	header []string
	rows   [][]tableField
	// flexOrder lists the columns that are cut short, first ones first,
	// when the table is wider than the terminal; the others keep their
	// width.
	flexOrder []int
	// dropOrder lists the columns left out, first ones first, when
	// cutting the flexible ones is not enough: a row never wraps.
	dropOrder []int
	// compactOrder lists the columns left out, first ones first,
	// before any column is cut: the compact layout of a narrow
	// terminal. layout forces it (Compact) or none (Wide).
	compactOrder []int
	// lists are the columns whose cells are lists ("a, b +1"), cut by
	// whole items (shrinkList) rather than inside one.
	lists []int
	// prose are the columns whose cells are running text (titles,
	// prompts), cut between words rather than inside one.
	prose []int
	// keys are the columns whose cells are session keys ("AGENT:ID"),
	// cut inside the ID, never inside the agent's name.
	keys   []int
	layout Layout
	// hidden are the names of the columns the last Render left out.
	hidden []string
}

// Layout chooses how a table meets a narrow terminal.
type Layout int

const (
	// LayoutAuto leaves out the compact columns only when the table is
	// wider than the terminal.
	LayoutAuto Layout = iota
	// LayoutCompact always leaves them out.
	LayoutCompact
	// LayoutWide never leaves out or cuts a column: lines may be wider
	// than the terminal.
	LayoutWide
)

type tableField struct {
	text  string
	color func(string) string
}

func NewTable(ios *IOStreams) *Table {
	return &Table{
		out:   ios.Out,
		tty:   ios.IsStdoutTTY(),
		width: ios.TerminalWidth(),
		cs:    ios.ColorScheme(),
	}
}

// Header sets the column names shown on a terminal.
func (t *Table) Header(names ...string) { t.header = names }

// Flex names the columns that may be truncated to fit the terminal, the
// one to cut first first.
func (t *Table) Flex(cols ...int) { t.flexOrder = cols }

// Lists names the columns whose cells are lists of names separated by
// ", " (possibly ending " +N" for N more): a flexible one among them is
// cut by whole names, "opus-4-6, haiku-4-5 +1" becoming
// "opus-4-6 +2", never inside a name.
func (t *Table) Lists(cols ...int) { t.lists = cols }

// Prose names the columns whose cells are running text, a title or a
// prompt: cut to fit, such a cell loses whole words ("why is the…", or
// "why is…flaky?" where the end tells rows apart), not part of one,
// unless a word alone is wider than half the room.
func (t *Table) Prose(cols ...int) { t.prose = cols }

// Keys names the columns whose cells are keys "AGENT:ID" (a session's
// key): cut to fit, such a cell keeps its agent's name and the colon
// whole and loses the middle of the ID ("claude-code:019…341"), the
// column staying wide enough for that, not "claude…341".
func (t *Table) Keys(cols ...int) { t.keys = cols }

// Drop names the columns that may be left out on a narrow terminal, the
// one to drop first first.
func (t *Table) Drop(cols ...int) { t.dropOrder = cols }

// Compact names the columns a compact layout leaves out, the first
// first: on a terminal narrower than the table they go before any other
// column is cut.
func (t *Table) Compact(cols ...int) { t.compactOrder = cols }

// SetLayout forces the compact layout, or the wide one.
func (t *Table) SetLayout(l Layout) { t.layout = l }

// Hidden returns the names of the columns the last Render left out (by
// Compact or Drop), in the order of the header.
func (t *Table) Hidden() []string { return t.hidden }

// AddField adds a cell to the current row; color may be nil. The text
// is made one line with its control characters escaped (SanitizeLine),
// on a terminal and piped alike: a cell never breaks a row or carries an
// escape sequence.
func (t *Table) AddField(text string, color func(string) string) {
	if len(t.rows) == 0 {
		t.rows = append(t.rows, nil)
	}
	last := len(t.rows) - 1
	t.rows[last] = append(t.rows[last], tableField{text: SanitizeLine(text), color: color})
}

// EndRow starts a new row.
func (t *Table) EndRow() { t.rows = append(t.rows, nil) }

// Render writes the table.
func (t *Table) Render() error {
	rows := t.rows
	if n := len(rows); n > 0 && len(rows[n-1]) == 0 {
		rows = rows[:n-1]
	}
	if !t.tty {
		for _, r := range rows {
			cells := make([]string, len(r))
			for i, f := range r {
				cells[i] = f.text
			}
			if _, err := fmt.Fprintln(t.out, strings.Join(cells, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	if len(t.header) > 0 && len(rows) > 0 {
		h := make([]tableField, len(t.header))
		for i, name := range t.header {
			h[i] = tableField{text: name, color: t.cs.Bold}
		}
		rows = append([][]tableField{h}, rows...)
	}
	ncol := 0
	for _, r := range rows {
		ncol = max(ncol, len(r))
	}
	widths := make([]int, ncol)
	for _, r := range rows {
		for i, f := range r {
			widths[i] = max(widths[i], ansi.StringWidth(f.text))
		}
	}
	shown := t.fit(widths)
	t.hidden = nil
	for i, ok := range shown {
		if !ok && i < len(t.header) {
			t.hidden = append(t.hidden, t.header[i])
		}
	}
	middle := clashes(rows, widths)
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, f := range r {
			if !shown[i] {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("  ")
			}
			text := ansi.Truncate(f.text, widths[i], "…")
			prose := slices.Contains(t.prose, i)
			switch {
			case slices.Contains(t.keys, i):
				text = truncateKey(f.text, widths[i])
			case slices.Contains(t.lists, i):
				text = ansi.Truncate(shrinkList(f.text, widths[i]), widths[i], "…")
			case middle[i] && prose:
				text = truncateMiddleWords(f.text, widths[i])
			case middle[i]:
				text = truncateMiddle(f.text, widths[i])
			case prose:
				text = truncateWords(f.text, widths[i])
			}
			pad := max(0, widths[i]-ansi.StringWidth(text))
			if f.color != nil {
				text = f.color(text)
			}
			b.WriteString(text + strings.Repeat(" ", pad))
		}
		if _, err := fmt.Fprintln(t.out, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

// clashes reports for each column whether cutting its cells at the end
// to widths would make two different texts look the same ("hello there,
// please answ…" for a session and its rewound fork, "claude-sonn…" for
// two models): those columns are cut in the middle instead, which keeps
// the ends that tell them apart.
func clashes(rows [][]tableField, widths []int) []bool {
	out := make([]bool, len(widths))
	for c, w := range widths {
		seen := map[string]string{}
		for _, r := range rows {
			if c >= len(r) || ansi.StringWidth(r[c].text) <= w {
				continue
			}
			cut := ansi.Truncate(r[c].text, w, "…")
			if full, ok := seen[cut]; ok && full != r[c].text {
				out[c] = true
				break
			}
			seen[cut] = r[c].text
		}
	}
	return out
}

// truncateMiddle cuts s to width cells by leaving out its middle: its
// start, "…", and its end.
func truncateMiddle(s string, width int) string {
	return cutMiddle(s, width, func(head, tail int) string {
		// A wide character where the end's cut falls is kept whole by
		// TruncateLeft: cut one more cell then, so the end fits its half.
		n := ansi.StringWidth(s)
		end := ansi.TruncateLeft(s, n-tail, "")
		if ansi.StringWidth(end) > tail {
			end = ansi.TruncateLeft(s, n-tail+1, "")
		}
		return ansi.Truncate(s, head, "") + "…" + end
	})
}

// truncateWords cuts s to width cells at the end, between words: the
// words that fit, then "…". A first word wider than half of width is
// cut inside, there being no better place.
func truncateWords(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	return wordHead(s, width-1) + "…"
}

// truncateMiddleWords cuts s to width cells by leaving out words from
// its middle: its first words, "…", and its last.
func truncateMiddleWords(s string, width int) string {
	return cutMiddle(s, width, func(head, _ int) string {
		return wordHead(s, head) + "…" + wordTail(s, width-1-ansi.StringWidth(wordHead(s, head)))
	})
}

// cutMiddle is s when it fits in width cells, s cut at the end when
// width leaves no room for a middle, and otherwise what cut makes of
// the cells either side of the "…" in the middle: head before it, tail
// after it (the start gets the odd cell).
func cutMiddle(s string, width int, cut func(head, tail int) string) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	if width < 3 {
		return ansi.Truncate(s, width, "…")
	}
	tail := (width - 1) / 2
	return cut(width-1-tail, tail)
}

// wordHead is the longest start of s of at most width cells that ends
// at the end of a word, without the spaces after it; or s cut at width
// when that would leave less than half of it.
func wordHead(s string, width int) string {
	cut := ansi.Truncate(s, width, "")
	if len(cut) < len(s) && s[len(cut)] != ' ' {
		if i := strings.LastIndexByte(cut, ' '); i > 0 && ansi.StringWidth(cut[:i]) >= width/2 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " ")
}

// wordTail is the longest end of s of at most width cells that starts
// at the start of a word; or s's last width cells when that would leave
// less than half of them.
func wordTail(s string, width int) string {
	n := ansi.StringWidth(s)
	end := ansi.TruncateLeft(s, n-width, "")
	if ansi.StringWidth(end) > width {
		end = ansi.TruncateLeft(s, n-width+1, "")
	}
	if start := len(s) - len(end); start > 0 && s[start-1] != ' ' {
		if i := strings.IndexByte(end, ' '); i >= 0 && ansi.StringWidth(end[i+1:]) >= width/2 {
			end = end[i+1:]
		}
	}
	return strings.TrimLeft(end, " ")
}

// fit makes a row fit the terminal: it leaves out the columns Compact
// named, in order, until the row fits (all of them in the compact
// layout; none in the wide one, which fits nothing); then it shrinks the
// flexible columns, in the order Flex named them, each down to a readable minimum; then it
// leaves out the columns Drop named, in order, until the row fits. It
// returns which columns are shown.
func (t *Table) fit(widths []int) []bool {
	const minFlex = 12
	shown := make([]bool, len(widths))
	natural := slices.Clone(widths)
	total := -2
	for i, w := range widths {
		shown[i] = true
		total += w + 2
	}
	if t.layout == LayoutWide {
		return shown
	}
	for _, c := range t.compactOrder {
		if t.layout != LayoutCompact && total <= t.width {
			break
		}
		if c < len(widths) && shown[c] {
			shown[c] = false
			total -= widths[c] + 2
		}
	}
	for _, c := range t.flexOrder {
		if total <= t.width {
			return shown
		}
		least := minFlex
		if slices.Contains(t.lists, c) {
			least = t.listMin(c)
		}
		if slices.Contains(t.keys, c) {
			least = max(least, t.keyMin(c))
		}
		if c >= len(widths) || widths[c] <= least {
			continue
		}
		cut := min(widths[c]-least, total-t.width)
		widths[c] -= cut
		total -= cut
	}
	dropped := false
	for _, c := range t.dropOrder {
		if total <= t.width {
			break
		}
		if c < len(widths) && shown[c] {
			shown[c], dropped = false, true
			total -= widths[c] + 2
		}
	}
	// Room a dropped column left goes back to the cut columns, the last
	// one cut (the most important) first.
	for i := len(t.flexOrder) - 1; dropped && i >= 0 && total < t.width; i-- {
		c := t.flexOrder[i]
		if c < len(widths) && shown[c] {
			grow := min(natural[c]-widths[c], t.width-total)
			widths[c] += grow
			total += grow
		}
	}
	return shown
}

// keyMin is the narrowest column c of keys can be: its widest agent's
// name with the colon, and 7 cells of the ID ("019…341"), or the cell
// whole when it is shorter.
func (t *Table) keyMin(c int) int {
	least := 0
	for _, r := range t.rows {
		if c >= len(r) {
			continue
		}
		w := ansi.StringWidth(r[c].text)
		if agent, _, ok := strings.Cut(r[c].text, ":"); ok {
			w = min(w, ansi.StringWidth(agent)+1+7)
		}
		least = max(least, w)
	}
	return least
}

// truncateKey cuts a key "AGENT:ID" to width cells inside its ID, its
// agent's name and colon kept whole; a key with no colon, or too narrow
// a width for the name, is cut in the middle.
func truncateKey(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	agent, id, ok := strings.Cut(s, ":")
	if !ok || ansi.StringWidth(agent)+4 > width {
		return truncateMiddle(s, width)
	}
	return agent + ":" + truncateMiddle(id, width-ansi.StringWidth(agent)-1)
}

// listMin is the narrowest column c of lists can be: its widest cell
// shortened to its first name and the count of the others, or its
// header; but no wider than maxListMin, past which a name is cut.
func (t *Table) listMin(c int) int {
	const maxListMin = 24
	least := 0
	if c < len(t.header) {
		least = ansi.StringWidth(t.header[c])
	}
	for _, r := range t.rows {
		if c < len(r) {
			least = max(least, ansi.StringWidth(shrinkList(r[c].text, 0)))
		}
	}
	return min(least, maxListMin)
}

// shrinkList shortens a list "a, b, c" (possibly ending " +N") to width
// cells by leaving out whole names from its end and counting them:
// "a, b +1", "a +2". When even the first name and the count do not fit,
// that is what it returns all the same (listMin keeps a column that
// wide); width 0 asks for that shortest form.
func shrinkList(text string, width int) string {
	if ansi.StringWidth(text) <= width {
		return text
	}
	items := strings.Split(text, ", ")
	more := 0
	last := items[len(items)-1]
	if i := strings.LastIndex(last, " +"); i > 0 {
		if n, err := strconv.Atoi(last[i+2:]); err == nil && n > 0 {
			items[len(items)-1], more = last[:i], n
		}
	}
	for k := len(items) - 1; k >= 1; k-- {
		s := strings.Join(items[:k], ", ") + " +" + strconv.Itoa(len(items)-k+more)
		if ansi.StringWidth(s) <= width || k == 1 {
			return s
		}
	}
	// One name: it is cut, there being nothing to count.
	if width == 0 {
		return text
	}
	return ansi.Truncate(text, width, "…")
}

// WrapWords joins items with sep into lines at most width cells wide,
// breaking only between items; an item wider than width has a line of
// its own.
func WrapWords(items []string, sep string, width int) []string {
	var lines []string
	line := ""
	for _, it := range items {
		switch {
		case line == "":
			line = it
		case ansi.StringWidth(line+sep+it) <= width:
			line += sep + it
		default:
			lines = append(lines, line)
			line = it
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
