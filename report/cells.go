package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loomhq/loom/internal/human"
)

// Kinds of the lines of Cells.
const (
	// LinePeriod is a period's line.
	LinePeriod = "period"
	// LinePart is a model's, agent's or project's share of the period
	// above it.
	LinePart = "part"
	// LineTotal is the report's total.
	LineTotal = "total"
)

// Table is a report as cells: what the command line prints as a table,
// TSV or CSV, and the MCP tool as text.
type Table struct {
	Header []string
	Lines  [][]string
	// Kinds are the kinds of Lines (LinePeriod, LinePart, LineTotal).
	Kinds []string
}

// Format is how Cells writes numbers.
type Format struct {
	// Pretty writes for people: 1.2M, $3.40, times without seconds;
	// otherwise whole numbers, costs in dollars with up to six
	// decimals and RFC 3339 times, for scripts.
	Pretty bool
	// Unknown is what an unknown cost reads as.
	Unknown string
	// ShortModels names models short (ShortModel), at most two to a
	// line with the number of the others ("opus-4-1, sonnet-4 +1"), so
	// that a narrow column lists every model rather than cutting one.
	ShortModels bool
	// IDLen is how much of a session's id a pretty report by session
	// shows (all of it when 0); its title has a column of its own.
	IDLen int
	// Dates is the layout of a pretty day ("2006-01-02" when empty):
	// see Locales.
	Dates string
}

// Locales are the date layouts --locale chooses between, by language
// tag; a tag not listed takes its language's (de-AT is de's).
var Locales = map[string]string{
	"iso": "2006-01-02", "en": "01/02/2006", "en-us": "01/02/2006", "en-gb": "02/01/2006",
	"en-ca": "2006-01-02", "de": "02.01.2006", "fr": "02/01/2006", "es": "02/01/2006",
	"it": "02/01/2006", "pt": "02/01/2006", "nl": "02-01-2006", "ja": "2006/01/02",
	"zh": "2006/01/02", "ko": "2006. 01. 02.", "sv": "2006-01-02", "ru": "02.01.2006", "pl": "02.01.2006",
}

// DateLayout returns the date layout of a locale tag (en-US, de_DE,
// de), or false when neither the tag nor its language is in Locales.
func DateLayout(tag string) (string, bool) {
	tag = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(tag), "_", "-"))
	if tag, _, _ = strings.Cut(tag, "."); tag == "" {
		return "", false
	}
	if l, ok := Locales[tag]; ok {
		return l, true
	}
	lang, _, _ := strings.Cut(tag, "-")
	l, ok := Locales[lang]
	return l, ok
}

// day writes a day in f's layout.
func (f Format) day(t time.Time) string {
	if f.Dates == "" {
		return t.Format("2006-01-02")
	}
	return t.Format(f.Dates)
}

// ShortModel is a model's name without what every model of its family
// shares: a provider prefix ("models/", "anthropic/"), Claude's
// "claude-" and a release date ("-20250514", "@20250514"):
// claude-sonnet-4-20250514 is sonnet-4.
func ShortModel(m string) string {
	if i := strings.LastIndexByte(m, '/'); i >= 0 && i < len(m)-1 {
		m = m[i+1:]
	}
	short := strings.TrimPrefix(m, "claude-")
	if i := strings.LastIndexAny(short, "-@"); i > 0 && len(short)-i-1 == 8 && strings.Trim(short[i+1:], "0123456789") == "" {
		short = short[:i]
	}
	if short == "" {
		return m
	}
	return short
}

// modelList is a row's models as f writes them.
func (f Format) modelList(models []string) string {
	if !f.ShortModels {
		return strings.Join(models, ", ")
	}
	var names []string
	for _, m := range models {
		if n := ShortModel(m); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) <= 2 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s +%d", strings.Join(names[:2], ", "), len(names)-2)
}

// Cells returns the report as a table in f.
func (r *Report) Cells(f Format) Table {
	c := cells{r: r, f: f}
	c.t.Header = r.header(f)
	for i := range r.Rows {
		row := &r.Rows[i]
		label := f.modelList(row.Models)
		if r.Breakdown != "" {
			label = ""
		}
		c.line(LinePeriod, r.periodCell(f, row), row, label, row.Totals, row.Block)
		for _, p := range row.Breakdown {
			name := p.Name
			if f.Pretty {
				name = "└ " + name
			}
			c.line(LinePart, "", row, name, p.Totals, nil)
		}
	}
	c.line(LineTotal, "Total", nil, "", r.Total, nil)
	return c.t
}

// header is the first line of the report's table in f.
func (r *Report) header(f Format) []string {
	first := "PERIOD"
	switch r.By {
	case Block:
		first = "BLOCK"
	case Session:
		first = "SESSION"
	}
	h := []string{first}
	if !f.Pretty {
		h = append(h, "START", "END")
	} else if r.By == Session {
		h = append(h, "TITLE", "LAST USED")
	}
	if r.Breakdown != "" {
		h = append(h, strings.ToUpper(r.Breakdown))
	} else {
		h = append(h, "MODELS")
	}
	h = append(h, "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "TOTAL TOKENS", "COST")
	if r.By == Block {
		h = append(h, "TOKENS/H", "COST/H")
		if f.Pretty {
			h = append(h, "PROJECTED")
		} else {
			// One value a cell for scripts: tokens and cost apart.
			h = append(h, "PROJECTED TOKENS", "PROJECTED COST")
		}
	}
	return h
}

// periodCell is the first cell of row's line in f.
func (r *Report) periodCell(f Format, row *Row) string {
	period := row.Period
	switch {
	case !f.Pretty:
	case row.Block != nil:
		period = f.day(row.Start) + " " + row.Start.Format("15:04") + "–" + row.End.Format("15:04")
		if row.Block.Active {
			period += " (" + human.Span(float64(row.Block.RemainingMinutes*60)) + " left)"
		}
	case r.By == Session:
		if f.IDLen > 0 && f.IDLen < len(period) {
			period = period[:f.IDLen]
		}
	case r.By == Day || (r.By == Week && len(period) == len("2006-01-02")):
		period = f.day(row.Start)
	}
	return period
}

// count is a number of tokens as f writes it.
func (f Format) count(n int64) string {
	if f.Pretty {
		return human.Count(n)
	}
	return strconv.FormatInt(n, 10)
}

// cost is a cost in dollars as f writes it; nil is an unknown one.
func (f Format) cost(c *float64) string {
	switch {
	case c == nil:
		return f.Unknown
	case f.Pretty:
		return human.Cost(*c)
	}
	return strconv.FormatFloat(float64(int64(*c*1e6+0.5))/1e6, 'f', -1, 64)
}

// when is a time as f writes it.
func (f Format) when(tm time.Time) string {
	if f.Pretty {
		return tm.Format("2006-01-02 15:04")
	}
	return tm.Format(time.RFC3339)
}

// cells writes a report's lines into a table.
type cells struct {
	r *Report
	f Format
	t Table
}

// line adds a line of kind: its period, the row's times (nil for the
// total), its label, the totals and, in a report by block, the
// block's rates and projection.
func (c *cells) line(kind, period string, row *Row, label string, tot Totals, block *BlockInfo) {
	r, f := c.r, c.f
	l := []string{period}
	switch {
	case !f.Pretty && row != nil:
		l = append(l, f.when(row.Start), f.when(row.End))
	case !f.Pretty:
		l = append(l, "", "")
	case r.By == Session && row != nil && kind == LinePeriod:
		title := row.Title
		if title == row.Period {
			title = ""
		}
		l = append(l, title, f.day(row.End))
	case r.By == Session:
		l = append(l, "", "")
	}
	l = append(l, label, f.count(tot.InputTokens), f.count(tot.OutputTokens), f.count(tot.CacheWriteTokens),
		f.count(tot.CacheReadTokens), f.count(tot.TotalTokens), f.cost(tot.CostUSD))
	if r.By == Block {
		l = append(l, f.blockCells(block)...)
	}
	c.t.Lines = append(c.t.Lines, l)
	c.t.Kinds = append(c.t.Kinds, kind)
}

// blockCells are the cells a line of a report by block adds: the
// block's rates and, while it is active, its projection (none for a
// part's line or the total, whose block is nil).
func (f Format) blockCells(block *BlockInfo) []string {
	var projected []string
	switch {
	case block != nil && block.Active && f.Pretty:
		projected = []string{f.count(block.ProjectedTokens) + " / " + f.cost(block.ProjectedCostUSD)}
	case block != nil && block.Active:
		projected = []string{f.count(block.ProjectedTokens), f.cost(block.ProjectedCostUSD)}
	case f.Pretty:
		projected = []string{""}
	default:
		projected = []string{"", ""}
	}
	var l []string
	if block == nil {
		l = append(l, "", "")
	} else {
		l = append(l, f.count(int64(block.TokensPerHour)), f.cost(block.CostPerHour))
	}
	return append(l, projected...)
}

// UnpricedLine says which models' tokens are counted without a cost,
// "" when every model is priced.
func (r *Report) UnpricedLine() string {
	n := len(r.Total.Unpriced)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s unpriced: %s (tokens counted, cost unknown; add prices in config.toml [prices])",
		human.Plural(n, "model"), strings.Join(r.Total.Unpriced, ", "))
}

// Text writes the report for people as aligned columns, with the
// unpriced models under the totals: what the MCP tool returns as text.
func (r *Report) Text() string {
	var b strings.Builder
	if len(r.Rows) == 0 {
		fmt.Fprintf(&b, "No usage by %s", r.By)
		if !r.Since.IsZero() || !r.Until.IsZero() {
			b.WriteString(" in that time")
		}
		b.WriteString(".\n")
		return b.String()
	}
	t := r.Cells(Format{Pretty: true, Unknown: human.UnknownCost})
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	for _, l := range t.Lines {
		fmt.Fprintln(tw, strings.Join(l, "\t"))
	}
	tw.Flush()
	if u := r.UnpricedLine(); u != "" {
		b.WriteString(u + "\n")
	}
	fmt.Fprintf(&b, "Time zone %s; prices as of %s.\n", r.TZ, r.PricesAsOf)
	return b.String()
}
