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
	// flex marks the columns that are cut short when the table is wider
	// than the terminal; the others keep their width.
	flex map[int]bool
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
		flex:  map[int]bool{},
	}
}

// Header sets the column names shown on a terminal.
func (t *tablePrinter) Header(names ...string) { t.header = names }

// Flex marks columns that may be truncated to fit the terminal.
func (t *tablePrinter) Flex(cols ...int) {
	for _, c := range cols {
		t.flex[c] = true
	}
}

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

// fit shrinks the flexible columns, widest first, until the row fits the
// terminal or every flexible column is down to a readable minimum.
func (t *tablePrinter) fit(widths []int) {
	const minFlex = 12
	total := func() int {
		n := 0
		for _, w := range widths {
			n += w
		}
		return n + 2*(len(widths)-1)
	}
	for total() > t.width {
		widest := -1
		for i, w := range widths {
			if t.flex[i] && w > minFlex && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			return
		}
		widths[widest] = max(minFlex, widths[widest]-(total()-t.width))
	}
}

// oneLine flattens s to one line for a table cell.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
