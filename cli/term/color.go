package term

import "github.com/charmbracelet/x/ansi"

// ColorScheme is loom's one set of terminal styles: every coloured thing
// loom prints (tables, messages, Markdown, search matches, the picker)
// takes its style from here. With colour disabled it leaves text alone.
type ColorScheme struct{ enabled bool }

// NewColorScheme returns the scheme, colouring only when enabled.
func NewColorScheme(enabled bool) *ColorScheme { return &ColorScheme{enabled: enabled} }

// The palette: the picker's styles (lipgloss) are made of the same
// colours as everything printed through the scheme.
const (
	AccentColor = ansi.Cyan
	DimColor    = ansi.BrightBlack
	MatchColor  = ansi.Yellow
)

// The styles, by role.
func bold() ansi.Style                { return ansi.NewStyle().Bold() }
func italic() ansi.Style              { return ansi.NewStyle().Italic(true) }
func gray() ansi.Style                { return fg(DimColor) }
func match() ansi.Style               { return ansi.NewStyle().Bold().ForegroundColor(MatchColor) }
func fg(c ansi.BasicColor) ansi.Style { return ansi.NewStyle().ForegroundColor(c) }

func (c *ColorScheme) apply(st ansi.Style, s string) string {
	if !c.enabled || s == "" {
		return s
	}
	return st.Styled(s)
}

// Enabled reports whether the scheme colours anything.
func (c *ColorScheme) Enabled() bool { return c.enabled }

// Bold makes s bold.
func (c *ColorScheme) Bold(s string) string { return c.apply(bold(), s) }

// Italic makes s italic.
func (c *ColorScheme) Italic(s string) string { return c.apply(italic(), s) }

// Gray makes s dim.
func (c *ColorScheme) Gray(s string) string { return c.apply(gray(), s) }

// Cyan colours s cyan.
func (c *ColorScheme) Cyan(s string) string { return c.apply(fg(AccentColor), s) }

// Green colours s green.
func (c *ColorScheme) Green(s string) string { return c.apply(fg(ansi.Green), s) }

// Yellow colours s yellow.
func (c *ColorScheme) Yellow(s string) string { return c.apply(fg(ansi.Yellow), s) }

// Red colours s red.
func (c *ColorScheme) Red(s string) string { return c.apply(fg(ansi.Red), s) }

// Magenta colours s magenta.
func (c *ColorScheme) Magenta(s string) string { return c.apply(fg(ansi.Magenta), s) }

// MatchMarks are the sequences that open and close a search match (bold
// yellow), for the store to put around matched words in snippets; both
// are empty without colour.
func (c *ColorScheme) MatchMarks() (start, end string) {
	if !c.enabled {
		return "", ""
	}
	return match().String(), ansi.ResetStyle
}
