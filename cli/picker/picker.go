// Package picker is the session picker of loom chat -r and loom session
// resume: a Bubble Tea model over a store's listing, its search and a
// preview, with keys to rename, archive and delete in place.
package picker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
)

// ErrNoChoice is returned when the user leaves the picker without
// choosing.
var ErrNoChoice = errors.New("no session chosen")

// Store is what the session picker reads and changes; a loom.Store
// is one.
type Store interface {
	Summaries(ctx context.Context, f loom.SessionFilter) ([]*loom.SessionSummary, error)
	Session(ctx context.Context, id string) (*loom.Session, error)
	Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error)
	Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error)
	UpdateSession(ctx context.Context, id string, u loom.SessionUpdate) (*loom.Session, error)
	Delete(ctx context.Context, id string, opts loom.DeleteOptions) ([]*loom.Session, error)
}

// Options say whose sessions the picker lists and how it draws
// them.
type Options struct {
	UserID string
	// Project is this project: the picker starts with its sessions, and
	// a key widens the list to every project and back.
	Project loom.Project
	// AllProjects starts with the sessions of every project.
	AllProjects bool
	// Color colours the picker; without it only bold and the selection
	// bar tell things apart (--no-color, NO_COLOR).
	Color bool
	// Now is the clock that ages are counted from; time.Now when nil.
	Now func() time.Time
	// Width and Height are the terminal's size until the terminal says
	// otherwise (default 80 × 24).
	Width, Height int
}

// How much the picker reads at a time. Opening reads one page, so it
// costs the same with 50 sessions or 100,000; scrolling near the end of
// what is loaded reads the next. A filter has to see every session to
// be right, so while one is typed the rest of the list is read in larger
// pages, and the matches are ranked again as each page arrives.
const (
	pickerPage          = 100
	pickerFilterPage    = 1000
	pickerNearEnd       = 20
	pickerSearchHits    = 100
	pickerMaxSearchHits = 1600
	previewMessages     = 6
	previewCacheSize    = 64
	searchDelay         = 250 * time.Millisecond
)

// pickerMode is what the list shows: sessions, or the sessions whose
// messages match a full-text search.
type pickerMode int

const (
	modeSessions pickerMode = iota
	modeSearch
)

// pickerInput is the text input that has the keyboard.
type pickerInput int

const (
	inputFilter pickerInput = iota
	inputSearch
	inputRename
)

// searchRow is one session of a search's results, with its best hit.
type searchRow struct {
	id, title, key string
	best           loom.SearchHit
	hits           int
}

// Model is the session picker, a Bubble Tea model: sessions newest
// first with a fuzzy filter, full-text search over messages, a preview
// of the selected session, and rename, archive and delete in place. All
// reading and writing happens in commands, through the store it was made
// with; Update only applies their results.
type Model struct {
	ctx  context.Context
	st   Store
	opts Options
	now  time.Time
	sty  pickerStyles

	width, height int
	mode          pickerMode
	all           bool // every project, not only opts.Project
	input         pickerInput

	// The sessions listed, newest first, as far as they are loaded; gen
	// counts scope changes so that pages of an older scope are dropped.
	gen      int
	sessions []*loom.SessionSummary
	targets  []string // what the filter matches first, per session
	descs    []string // and then, per session: its description
	seen     map[string]bool
	next     *loom.Cursor // where the next page starts; nil once all are loaded
	loaded   bool         // the first page has arrived
	loading  bool
	idLen    int
	filterIn textinput.Model
	// matches are the sessions the filter keeps, best first (filter
	// set) as indexes into sessions.
	matches []filterMatch

	// Search: the query typed, the one searched for, its rows.
	searchIn    textinput.Model
	searchSeq   int
	searched    string
	searchLimit int
	searching   bool
	searchMore  bool // the last search filled its limit
	hits        []searchRow
	searchDelay time.Duration

	cursor, offset int

	renameIn textinput.Model
	renameID string
	// renameTo is the title a rename waits a confirming y for.
	renameTo string
	// confirmID is the session a delete, or an archive when
	// confirmArchive, waits a confirming y for.
	confirmID      string
	confirmArchive bool
	status         string
	isErr          bool

	previews map[string]*preview

	chosen *loom.Session
	done   bool
}

// filterMatch is a session the filter keeps and where the filter
// matched its title.
type filterMatch struct {
	index   int
	matched []int // byte offsets in the title
}

// New makes a picker over st. It reads nothing until its commands
// run: Init reads the first page.
func New(ctx context.Context, st Store, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Width <= 0 {
		opts.Width = 80
	}
	if opts.Height <= 0 {
		opts.Height = 24
	}
	m := &Model{
		ctx: ctx, st: st, opts: opts, now: opts.Now(), sty: newPickerStyles(opts.Color),
		width: opts.Width, height: opts.Height, all: opts.AllProjects || opts.Project.ID == "",
		seen: map[string]bool{}, previews: map[string]*preview{}, searchDelay: searchDelay, idLen: term.ShortIDLen,
	}
	m.filterIn = m.newInput("filter: ")
	m.filterIn.Placeholder = "title, key, last prompt or summary"
	m.searchIn = m.newInput("search: ")
	m.searchIn.Placeholder = "words to find in the messages"
	m.renameIn = m.newInput("title: ")
	m.renameIn.CharLimit = loom.MaxTitleBytes
	m.typeInto()
	return m
}

func (m *Model) newInput(prompt string) textinput.Model {
	in := textinput.New()
	in.Prompt = prompt
	st := in.Styles()
	st.Cursor.Blink = false // a blinking cursor redraws the screen forever
	st.Focused.Prompt = m.sty.accent
	st.Blurred.Prompt = m.sty.dim
	st.Focused.Text, st.Blurred.Text = m.sty.plain, m.sty.plain
	st.Focused.Placeholder, st.Blurred.Placeholder = m.sty.dim, m.sty.dim
	if !m.opts.Color {
		st.Cursor.Color = nil
	}
	in.SetStyles(st)
	return in
}

// Pick lets the user choose a session on the terminal, starting
// with this project's (opts.Project) and widening to every project on a
// key. A project without sessions starts widened; a user without any is
// ENOTFOUND. It returns ErrNoChoice when the user leaves without
// choosing.
func Pick(ctx context.Context, ios *term.IOStreams, st Store, opts Options) (*loom.Session, error) {
	opts.Color = ios.ColorEnabled()
	opts.Width = ios.TerminalWidth()
	m := New(ctx, st, opts)
	// The first page is read before the terminal is taken over, so that
	// an empty store is an error on one line and not an empty screen.
	first := func() error {
		msg := m.loadPage(pickerPage)().(pageMsg)
		m.page(msg)
		return msg.err
	}
	if err := first(); err != nil {
		return nil, err
	}
	if len(m.sessions) == 0 && !m.all {
		m.setScope(true)
		if err := first(); err != nil {
			return nil, err
		}
		if len(m.sessions) > 0 {
			m.setStatus(fmt.Sprintf("No sessions in %s: showing every project's.", m.opts.Project.Name), false)
		}
	}
	if len(m.sessions) == 0 {
		if m.opts.Project.ID != "" {
			return nil, loom.Errorf(loom.ENOTFOUND, "no sessions in %s (%s)", m.opts.Project.Name, m.opts.Project.Root)
		}
		return nil, loom.Errorf(loom.ENOTFOUND, "no sessions to choose from")
	}
	topts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(ios.In), tea.WithOutput(ios.Out)}
	if !ios.ColorEnabled() {
		topts = append(topts, tea.WithColorProfile(colorprofile.Ascii))
	}
	final, err := tea.NewProgram(m, topts...).Run()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("session picker: %w", err)
	}
	if pm, ok := final.(*Model); ok && pm.chosen != nil {
		return pm.chosen, nil
	}
	return nil, ErrNoChoice
}

// Settle runs cmd, and the commands that follow from its result, in this
// goroutine, applying each result as the program would: how a benchmark
// or a test drives the picker without a terminal. It reports whether one
// of them ended the picker. Only the search waits (for a pause in the
// typing) before it runs.
func (m *Model) Settle(cmd tea.Cmd) (quit bool) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case tea.QuitMsg:
			quit = true
		default:
			_, next := m.Update(msg)
			queue = append(queue, next)
		}
	}
	return quit
}

// Chosen is the session the user chose, nil while none is.
func (m *Model) Chosen() *loom.Session { return m.chosen }

// Init reads the first page, or, when it is already read, the preview of
// the selected session.
func (m *Model) Init() tea.Cmd {
	if !m.loaded && !m.loading {
		return m.loadPage(pickerPage)
	}
	return m.follow()
}

// setScope switches between this project and every project: the list
// starts again from its first page, and a search is run again.
func (m *Model) setScope(all bool) {
	m.all = all
	m.gen++
	m.sessions, m.targets, m.descs, m.matches, m.hits = nil, nil, nil, nil, nil
	m.seen = map[string]bool{}
	m.next, m.loaded, m.loading, m.searching = nil, false, false, false
	m.searched, m.searchMore = "", false
	m.cursor, m.offset = 0, 0
}

// rowCount is how many rows the list has now.
func (m *Model) rowCount() int {
	switch {
	case m.mode == modeSearch:
		return len(m.hits)
	case m.filterIn.Value() != "":
		return len(m.matches)
	}
	return len(m.sessions)
}

// sessionAt is the session of row i in the sessions mode, and where the
// filter matched its title.
func (m *Model) sessionAt(i int) (*loom.SessionSummary, []int) {
	if m.filterIn.Value() != "" {
		fm := m.matches[i]
		return m.sessions[fm.index], fm.matched
	}
	return m.sessions[i], nil
}

// selectedID is the id of the selected row's session, "" when the list
// is empty.
func (m *Model) selectedID() string {
	if m.cursor < 0 || m.cursor >= m.rowCount() {
		return ""
	}
	if m.mode == modeSearch {
		return m.hits[m.cursor].id
	}
	s, _ := m.sessionAt(m.cursor)
	return s.ID
}

// selectID moves the selection to the row of session id, if it is
// listed.
func (m *Model) selectID(id string) {
	if id != "" {
		for i := range m.rowCount() {
			if m.idAt(i) == id {
				m.cursor = i
				break
			}
		}
	}
	m.clamp()
}

func (m *Model) idAt(i int) string {
	if m.mode == modeSearch {
		return m.hits[i].id
	}
	s, _ := m.sessionAt(i)
	return s.ID
}

func (m *Model) clamp() {
	m.cursor = max(0, min(m.cursor, m.rowCount()-1))
}

func (m *Model) move(by int) {
	m.cursor += by
	m.clamp()
}
