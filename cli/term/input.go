package term

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// ErrInputAborted is returned by ReadInput when Ctrl+C is pressed at the
// prompt.
var ErrInputAborted = errors.New("input aborted")

// inputKeys are the keys of the message input besides the editing keys
// of the text area.
var inputKeys = struct {
	submit, newline, abort, eof, prev, next key.Binding
}{
	submit: key.NewBinding(key.WithKeys("enter")),
	// Alt+Enter works on every terminal; Shift+Enter on those that
	// report it; Ctrl+J is a line feed.
	newline: key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j")),
	abort:   key.NewBinding(key.WithKeys("ctrl+c")),
	eof:     key.NewBinding(key.WithKeys("ctrl+d")),
	prev:    key.NewBinding(key.WithKeys("up")),
	next:    key.NewBinding(key.WithKeys("down")),
}

// answerKeys are the keys of an answer besides those of the message
// input.
var answerKeys = struct{ escape key.Binding }{
	escape: key.NewBinding(key.WithKeys("esc")),
}

// InputHelp says how to write a message of several lines.
const InputHelp = "Alt+Enter or \\ then Enter for a new line"

// ReadInput reads one message on the terminal after prompt: the input
// wraps to the terminal's width and grows a line at a time, a paste is
// text of the message (its line breaks too), Alt+Enter (or a \ ending
// the line) starts a new line, and Enter sends. Up and Down on the first
// and last line recall history, oldest first. Once sent, the message
// stays on the screen whole. It returns io.EOF for Ctrl+D on an empty
// input and ErrInputAborted for Ctrl+C.
func ReadInput(ctx context.Context, ios *IOStreams, prompt string, history []string) (string, error) {
	return readInput(ctx, ios, newInputModel(prompt, history, ios.TerminalWidth()))
}

// readAnswer reads the answer to a question on the terminal: one line,
// sent by Enter (or Ctrl+J, the Enter of a terminal in line mode); Esc
// gives up as Ctrl+C does.
func readAnswer(ctx context.Context, ios *IOStreams, prompt string) (string, error) {
	m := newInputModel(prompt, nil, ios.TerminalWidth())
	m.answer = true
	return readInput(ctx, ios, m)
}

func readInput(ctx context.Context, ios *IOStreams, m *inputModel) (string, error) {
	m.height = ios.TerminalHeight()
	var in io.Reader = ios.In
	if f, ok := ios.In.(*os.File); ok {
		m.gate = &inputGate{f: f, lineEnds: m.answer}
		in = m.gate
	}
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(ios.Out)}
	if !ios.ColorEnabled() {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	final, err := tea.NewProgram(m, opts...).Run()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("read the message: %w", err)
	}
	m = final.(*inputModel)
	if m.pad > 0 {
		// The program ends on the frame's last row: back to the row
		// after the message.
		fmt.Fprint(ios.Out, ansi.CursorUp(m.pad))
	}
	switch {
	case m.eof:
		return "", io.EOF
	case m.aborted:
		return "", ErrInputAborted
	}
	return m.ta.Value(), nil
}

type inputModel struct {
	ta     textarea.Model
	prompt string
	width  int
	// height is the terminal's; rows the most the frame has had, and
	// pad the empty rows that keep the frame at that height.
	height, rows, pad int
	history           []string
	// hpos is the history entry shown; len(history) is the draft.
	hpos  int
	draft string

	done, aborted, eof bool
	// answer: the input is one line answering a question (readAnswer).
	answer bool
	// gate holds the terminal's input after a key that may end it.
	gate *inputGate
}

func newInputModel(prompt string, history []string, width int) *inputModel {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 20
	// The whole message is kept, however many lines; only the view
	// scrolls.
	ta.MaxContentHeight = 1 << 20
	ta.MaxWidth = 0
	ta.KeyMap.InsertNewline.SetEnabled(false)
	cont := strings.Repeat(" ", ansi.StringWidth(prompt))
	ta.SetPromptFunc(ansi.StringWidth(prompt), func(info textarea.PromptInfo) string {
		if info.LineNumber == 0 {
			return prompt
		}
		return cont
	})
	st := textarea.Styles{}
	st.Cursor.Blink = false // a blinking cursor redraws the screen forever
	ta.SetStyles(st)
	ta.Focus()
	m := &inputModel{ta: ta, prompt: prompt, history: history, hpos: len(history)}
	m.setWidth(width)
	return m
}

func (m *inputModel) setWidth(w int) {
	if w <= 0 {
		w = 80
	}
	m.width = w
	// One column spare: a line that fills the width would make some
	// terminals wrap on their own.
	m.ta.SetWidth(max(w-1, 10))
}

func (m *inputModel) Init() tea.Cmd { return nil }

func (m *inputModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.setWidth(msg.Width)
		m.height = msg.Height
		return m, nil
	case tea.KeyPressMsg:
		if cmd, ok := m.key(msg); ok {
			return m, cmd
		}
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(msg)
	return m, cmd
}

// key handles the keys the text area does not: ok is false for the
// others.
func (m *inputModel) key(k tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	keys := inputKeys
	if m.answer {
		switch {
		case key.Matches(k, answerKeys.escape):
			m.aborted = true
			return m.finish(), true
		case key.Matches(k, keys.submit, keys.newline):
			return m.finish(), true
		case key.Matches(k, keys.eof):
			m.eof = true
			return m.finish(), true
		case key.Matches(k, keys.prev, keys.next):
			return nil, true
		}
	}
	switch {
	case key.Matches(k, keys.abort):
		m.aborted = true
		return m.finish(), true
	case key.Matches(k, keys.eof) && m.ta.Value() == "":
		m.eof = true
		return m.finish(), true
	case key.Matches(k, keys.eof):
		m.release()
		return nil, false
	case key.Matches(k, keys.newline):
		m.release()
		m.ta.InsertString("\n")
		return nil, true
	case key.Matches(k, keys.submit):
		if m.continued() {
			m.release()
			return nil, true
		}
		return m.finish(), true
	case key.Matches(k, keys.prev) && m.ta.Line() == 0 && m.ta.LineInfo().RowOffset == 0:
		return nil, m.recall(-1)
	case key.Matches(k, keys.next) && m.ta.Line() == m.ta.LineCount()-1:
		return nil, m.recall(1)
	}
	return nil, false
}

// continued turns a \ that ends the input into a new line, as a shell
// does, and reports whether it did.
func (m *inputModel) continued() bool {
	v := m.ta.Value()
	if !strings.HasSuffix(v, "\\") || m.ta.Line() != m.ta.LineCount()-1 {
		return false
	}
	m.ta.SetValue(strings.TrimSuffix(v, "\\") + "\n")
	return true
}

// recall shows the history entry d steps away; false when there is none.
func (m *inputModel) recall(d int) bool {
	to := m.hpos + d
	if to < 0 || to > len(m.history) {
		return false
	}
	if m.hpos == len(m.history) {
		m.draft = m.ta.Value()
	}
	m.hpos = to
	if to == len(m.history) {
		m.ta.SetValue(m.draft)
	} else {
		m.ta.SetValue(m.history[to])
	}
	return true
}

// release lets input go on after a key that did not end it.
func (m *inputModel) release() {
	if m.gate != nil {
		m.gate.release()
	}
}

func (m *inputModel) finish() tea.Cmd {
	if m.gate != nil {
		m.gate.close()
	}
	m.done = true
	m.ta.Blur()
	return tea.Quit
}

func (m *inputModel) View() tea.View {
	if m.done {
		// The last frame stays on the screen: the message whole, and
		// a last line, empty, that the program clears as it ends.
		return tea.NewView(m.keepRows(m.transcript()))
	}
	return tea.NewView(m.keepRows(m.ta.View()))
}

// keepRows pads the frame s with empty rows to the height it has had:
// the renderer draws an inline frame that shrinks from a row too low,
// leaving rows of the old one above it (charmbracelet/ultraviolet issue
// 155), so the frame gives up no row while the program runs, unless it
// would not fit on the screen.
func (m *inputModel) keepRows(s string) string {
	n := strings.Count(s, "\n") + 1
	m.rows = max(m.rows, n)
	m.pad = 0
	if m.rows <= m.height {
		m.pad = m.rows - n
	}
	return s + strings.Repeat("\n", m.pad)
}

// transcript is the message as sent: the prompt, then every line of the
// message wrapped to the terminal, continuation lines indented.
func (m *inputModel) transcript() string {
	if m.eof {
		return m.prompt + "\n"
	}
	pw := ansi.StringWidth(m.prompt)
	cont := strings.Repeat(" ", pw)
	var b strings.Builder
	for i, line := range strings.Split(Sanitize(m.ta.Value()), "\n") {
		wrapped := strings.Split(ansi.Wrap(line, max(m.width-1-pw, 10), ""), "\n")
		for j, w := range wrapped {
			if i == 0 && j == 0 {
				b.WriteString(m.prompt)
			} else {
				b.WriteString(cont)
			}
			b.WriteString(w + "\n")
		}
	}
	return b.String()
}
