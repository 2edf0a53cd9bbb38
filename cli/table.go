package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
)

// tablePrinter prints rows as aligned, coloured columns that fit the
// terminal, or as tab-separated lines without a header when the output is
// not a terminal, which is what cut, awk and sort expect.
type tablePrinter struct {
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
}

type tableField struct {
	text  string
	color func(string) string
}

func newTablePrinter(ios *IOStreams) *tablePrinter {
	return &tablePrinter{
		out:   ios.Out,
		tty:   ios.IsStdoutTTY(),
		width: ios.TerminalWidth(),
		cs:    ios.ColorScheme(),
	}
}

// Header sets the column names shown on a terminal.
func (t *tablePrinter) Header(names ...string) { t.header = names }

// Flex names the columns that may be truncated to fit the terminal, the
// one to cut first first.
func (t *tablePrinter) Flex(cols ...int) { t.flexOrder = cols }

// AddField adds a cell to the current row; color may be nil.
func (t *tablePrinter) AddField(text string, color func(string) string) {
	if len(t.rows) == 0 {
		t.rows = append(t.rows, nil)
	}
	last := len(t.rows) - 1
	t.rows[last] = append(t.rows[last], tableField{text: text, color: color})
}

// EndRow starts a new row.
func (t *tablePrinter) EndRow() { t.rows = append(t.rows, nil) }

// Len returns the number of rows added.
func (t *tablePrinter) Len() int {
	n := len(t.rows)
	if n > 0 && len(t.rows[n-1]) == 0 {
		n--
	}
	return n
}

// Render writes the table.
func (t *tablePrinter) Render() error {
	rows := t.rows
	if n := len(rows); n > 0 && len(rows[n-1]) == 0 {
		rows = rows[:n-1]
	}
	if !t.tty {
		for _, r := range rows {
			cells := make([]string, len(r))
			for i, f := range r {
				cells[i] = oneLine(f.text)
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
			widths[i] = max(widths[i], runewidth.StringWidth(oneLine(f.text)))
		}
	}
	t.fit(widths)
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, f := range r {
			text := runewidth.Truncate(oneLine(f.text), widths[i], "…")
			pad := widths[i] - runewidth.StringWidth(text)
			if f.color != nil {
				text = f.color(text)
			}
			b.WriteString(text)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", pad+2))
			}
		}
		if _, err := fmt.Fprintln(t.out, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

// fit shrinks the flexible columns, in the order Flex named them, until
// the row fits the terminal or each is down to a readable minimum.
func (t *tablePrinter) fit(widths []int) {
	const minFlex = 12
	total := 2 * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	for _, c := range t.flexOrder {
		if total <= t.width {
			return
		}
		if c >= len(widths) || widths[c] <= minFlex {
			continue
		}
		cut := min(widths[c]-minFlex, total-t.width)
		widths[c] -= cut
		total -= cut
	}
}

// oneLine flattens s to one line for a table cell.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
