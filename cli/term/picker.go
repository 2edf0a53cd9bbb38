package term

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/list"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
)

// ErrNoChoice is returned when the user leaves the picker without
// choosing.
var ErrNoChoice = errors.New("no session chosen")

// sessionItem is one session in the picker. What it shows of the session
// is escaped (SanitizeLine): the picker draws stored text too.
type sessionItem struct {
	s     *loom.Session
	now   time.Time
	idLen int
}

func (i sessionItem) Title() string {
	title := i.s.Title
	if title == "" {
		title = "(untitled)"
	}
	return SanitizeLine(title) + "  " + SanitizeLine(i.s.ID[:min(i.idLen, len(i.s.ID))])
}

func (i sessionItem) Description() string {
	parts := []string{human.Ago(i.now, i.s.UpdatedAt), human.Plural(i.s.MessageCount, "message")}
	if p := human.FirstLine(i.s.LastPrompt); p != "" {
		parts = append(parts, SanitizeLine(p))
	}
	return strings.Join(parts, " · ")
}

// FilterValue is what the fuzzy filter matches: title, last prompt, key
// and id, so a session is found by whatever the user remembers of it.
// It is escaped as the title is, so that the matches the list marks in
// the title fall on the characters shown.
func (i sessionItem) FilterValue() string {
	return SanitizeLine(i.s.Title + " " + i.s.LastPrompt + " " + i.s.Key + " " + i.s.ID)
}

// pickerModel is the session picker: a fuzzy-filterable list that ends
// when a session is chosen (enter) or the user gives up (esc, q, ctrl+c).
// It does no I/O: the sessions are loaded before it starts.
type pickerModel struct {
	list   list.Model
	chosen *loom.Session
	done   bool
}

func newPickerModel(title string, sessions []*loom.Session, now time.Time, width, height int) pickerModel {
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	idLen := AbbrevLen(ids)
	items := make([]list.Item, len(sessions))
	for i, s := range sessions {
		items[i] = sessionItem{s: s, now: now, idLen: idLen}
	}
	l := list.New(items, pickerDelegate(), width, height)
	l.Title = SanitizeLine(title)
	l.SetStatusBarItemName("session", "sessions")
	l.KeyMap.Quit = key.NewBinding(key.WithKeys("q", "esc"), key.WithHelp("q", "quit"))
	choose := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "choose"))
	l.AdditionalShortHelpKeys = func() []key.Binding { return []key.Binding{choose} }
	l.AdditionalFullHelpKeys = l.AdditionalShortHelpKeys
	return pickerModel{list: l}
}

// pickerDelegate draws items in the scheme's colours: the chosen one in
// the accent colour with a bar, descriptions dim, filter matches as
// search matches are.
func pickerDelegate() list.DefaultDelegate {
	d := list.NewDefaultDelegate()
	st := &d.Styles
	st.SelectedTitle = st.SelectedTitle.Foreground(accentColor).BorderForeground(accentColor)
	st.SelectedDesc = st.SelectedDesc.Foreground(dimColor).BorderForeground(accentColor)
	st.NormalDesc = st.NormalDesc.Foreground(dimColor)
	st.DimmedDesc = st.DimmedDesc.Foreground(dimColor)
	st.FilterMatch = lipgloss.NewStyle().Bold(true).Foreground(matchColor)
	return d
}

func (m pickerModel) Init() tea.Cmd { return nil }

func (m pickerModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.list.SetSize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyPressMsg:
		if msg.String() == "enter" {
			var cmd tea.Cmd
			if m.list.FilterState() == list.Filtering {
				// Enter while typing a filter takes the best match at
				// once instead of asking for a second enter.
				m.list, cmd = m.list.Update(msg)
			}
			if it, ok := m.list.SelectedItem().(sessionItem); ok {
				m.chosen, m.done = it.s, true
				return m, tea.Quit
			}
			return m, cmd
		}
	}
	var cmd tea.Cmd
	m.list, cmd = m.list.Update(msg)
	return m, cmd
}

func (m pickerModel) View() tea.View {
	if m.done {
		return tea.NewView("")
	}
	v := tea.NewView(m.list.View())
	v.AltScreen = true
	return v
}

// PickSession lets the user choose one of sessions on the terminal. It
// returns ErrNoChoice when the user leaves without choosing.
func PickSession(ctx context.Context, ios *IOStreams, title string, sessions []*loom.Session, now time.Time) (*loom.Session, error) {
	if len(sessions) == 0 {
		return nil, loom.Errorf(loom.ENOTFOUND, "no sessions to choose from")
	}
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(ios.In), tea.WithOutput(ios.Out)}
	if !ios.ColorEnabled() {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	m := newPickerModel(title, sessions, now, ios.TerminalWidth(), 24)
	final, err := tea.NewProgram(m, opts...).Run()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("session picker: %w", err)
	}
	if pm, ok := final.(pickerModel); ok && pm.chosen != nil {
		return pm.chosen, nil
	}
	return nil, ErrNoChoice
}
