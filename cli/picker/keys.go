package picker

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/list"
	tea "charm.land/bubbletea/v2"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
)

// pickerKeys are the picker's keys. Typing filters the sessions (or
// types the search query), as in fzf, so the keys that act on a session
// are control keys, which type nothing.
var pickerKeys = struct {
	up, down, pageUp, pageDown, choose, mode, scope, cancel key.Binding
	rename, archive, del, back                              key.Binding
	// while renaming
	save, cancelEdit key.Binding
}{
	up:         key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑↓", "move")),
	down:       key.NewBinding(key.WithKeys("down", "ctrl+n")),
	pageUp:     key.NewBinding(key.WithKeys("pgup")),
	pageDown:   key.NewBinding(key.WithKeys("pgdown")),
	choose:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "choose")),
	mode:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "search messages")),
	scope:      key.NewBinding(key.WithKeys("ctrl+a"), key.WithHelp("ctrl+a", "all projects")),
	cancel:     key.NewBinding(key.WithKeys("ctrl+c")),
	rename:     key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "rename")),
	archive:    key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "archive")),
	del:        key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "delete")),
	back:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "quit")),
	save:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "save")),
	cancelEdit: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
}

// helpKeys are the keys the help line lists now, with what they do now.
func (m *Model) helpKeys() []key.Binding {
	k := pickerKeys
	switch {
	case m.confirmID != "" && m.confirmArchive:
		return []key.Binding{key.NewBinding(key.WithHelp("y", "archive")), key.NewBinding(key.WithHelp("any other key", "keep it"))}
	case m.confirmID != "":
		return []key.Binding{key.NewBinding(key.WithHelp("y", "move to the trash")), key.NewBinding(key.WithHelp("any other key", "keep it"))}
	case m.renameTo != "":
		return []key.Binding{key.NewBinding(key.WithHelp("y", "save the title")), key.NewBinding(key.WithHelp("any other key", "keep the old one"))}
	case m.input == inputRename:
		return []key.Binding{k.save, k.cancelEdit}
	}
	mode, scope, back := k.mode, k.scope, k.back
	if m.mode == modeSearch {
		mode.SetHelp("tab", "sessions")
	}
	if m.all {
		scope.SetHelp("ctrl+a", "this project")
	}
	if m.opts.Project.ID == "" {
		scope.SetEnabled(false)
	}
	switch {
	case m.mode == modeSearch:
		back.SetHelp("esc", "sessions")
	case m.filterIn.Value() != "":
		back.SetHelp("esc", "clear filter")
	}
	return []key.Binding{k.up, k.choose, mode, scope, k.rename, k.archive, k.del, back}
}

// key applies one key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	keys := pickerKeys
	if key.Matches(k, keys.cancel) {
		return m.quit()
	}
	// A status line says what the last key did, until the next one.
	m.setStatus("", false)
	if m.confirmID != "" {
		id, archive := m.confirmID, m.confirmArchive
		m.confirmID, m.confirmArchive = "", false
		switch {
		case k.String() != "y":
		case archive:
			return m.archiveCmd(id)
		default:
			return m.deleteCmd(id)
		}
		m.setStatus("Kept.", false)
		return nil
	}
	if m.renameTo != "" {
		return m.confirmRename(k)
	}
	if m.input == inputRename {
		return m.renameKey(k)
	}
	switch {
	case key.Matches(k, keys.choose):
		return m.choose()
	case key.Matches(k, keys.mode):
		return m.switchMode()
	case key.Matches(k, keys.scope):
		return m.widen()
	case key.Matches(k, keys.up):
		m.move(-1)
	case key.Matches(k, keys.down):
		m.move(1)
	case key.Matches(k, keys.pageUp):
		m.move(-m.listRows())
	case key.Matches(k, keys.pageDown):
		m.move(m.listRows())
	case key.Matches(k, keys.rename):
		return m.startRename()
	case key.Matches(k, keys.archive):
		// Asked first, as a delete is: an archived session leaves the
		// list, and only loom session unarchive brings it back.
		if id := m.selectedID(); id != "" {
			m.confirmID, m.confirmArchive = id, true
			m.setStatus(fmt.Sprintf("Archive %s? y to confirm, any other key keeps it.", m.titleOf(id)), false)
		}
	case key.Matches(k, keys.del):
		if id := m.selectedID(); id != "" {
			m.confirmID = id
			m.setStatus(fmt.Sprintf("Move %s to the trash? y to confirm, any other key keeps it.", m.titleOf(id)), false)
		}
	case key.Matches(k, keys.back):
		return m.back()
	default:
		return m.typed(k)
	}
	return nil
}

// back is esc: from the search to the sessions, else clear the filter,
// else leave.
func (m *Model) back() tea.Cmd {
	switch {
	case m.mode == modeSearch:
		return m.switchMode()
	case m.filterIn.Value() != "":
		keep := m.selectedID()
		m.filterIn.Reset()
		m.matches = nil
		m.selectID(keep)
		return nil
	}
	return m.quit()
}

func (m *Model) quit() tea.Cmd {
	m.done = true
	return tea.Quit
}

// typed gives a key or a paste to the text input that has the keyboard,
// and filters or searches again when its text changed.
func (m *Model) typed(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch m.input {
	case inputFilter:
		before := m.filterIn.Value()
		m.filterIn, cmd = m.filterIn.Update(msg)
		if m.filterIn.Value() != before {
			m.refilter()
			m.cursor, m.offset = 0, 0
		}
	case inputSearch:
		before := m.searchIn.Value()
		m.searchIn, cmd = m.searchIn.Update(msg)
		if m.searchIn.Value() != before {
			return tea.Batch(cmd, m.queryChanged())
		}
	case inputRename:
		m.renameIn, cmd = m.renameIn.Update(msg)
	}
	return cmd
}

// typeInto gives the keyboard to the input of the mode: the filter of
// the sessions or the search query.
func (m *Model) typeInto() tea.Cmd {
	m.renameIn.Blur()
	if m.mode == modeSearch {
		m.filterIn.Blur()
		m.input = inputSearch
		return m.searchIn.Focus()
	}
	m.searchIn.Blur()
	m.input = inputFilter
	return m.filterIn.Focus()
}

// refilter ranks the loaded sessions against the filter, best first:
// those it matches by title, key or last prompt, then those it matches
// only by their description (a summary), so that a word of a summary
// finds its session without pushing the titles that match below it.
func (m *Model) refilter() {
	q := m.filterIn.Value()
	m.matches = m.matches[:0]
	if q == "" {
		return
	}
	kept := make([]bool, len(m.sessions))
	for _, r := range list.DefaultFilter(q, m.targets) {
		kept[r.Index] = true
		titleLen := len(term.SanitizeLine(m.sessions[r.Index].Title))
		var in []int
		for _, b := range r.MatchedIndexes {
			if b < titleLen {
				in = append(in, b)
			}
		}
		m.matches = append(m.matches, filterMatch{index: r.Index, matched: in})
	}
	var descs []string
	var at []int
	for i, d := range m.descs {
		if d != "" && !kept[i] {
			descs, at = append(descs, d), append(at, i)
		}
	}
	for _, r := range list.DefaultFilter(q, descs) {
		m.matches = append(m.matches, filterMatch{index: at[r.Index]})
	}
}

// filterTarget is what the filter matches of a session first: its
// title, key and last prompt (the start of it: a pasted file as a prompt
// would otherwise match any filter).
func filterTarget(s *loom.SessionSummary) string {
	prompt := term.SanitizeLine(s.LastPrompt)
	if len(prompt) > 300 {
		prompt = prompt[:300]
	}
	return term.SanitizeLine(s.Title) + "  " + term.SanitizeLine(s.Key) + "  " + prompt
}

// descTarget is what the filter matches of a session after that: its
// description, its lines joined; the start of it, which holds a whole
// summary (three lines of at most 120 characters), where a description
// a user wrote may hold 10 KB.
func descTarget(s *loom.SessionSummary) string {
	return term.SanitizeLine(loom.TruncateBytes(s.Description, 1500))
}

// queryChanged searches for the query after a pause in typing, so that
// a word typed is one search and not one per letter.
func (m *Model) queryChanged() tea.Cmd {
	m.searchSeq++
	if strings.TrimSpace(m.searchIn.Value()) == "" {
		m.hits, m.searched, m.searchMore, m.searching = nil, "", false, false
		m.cursor, m.offset = 0, 0
		return nil
	}
	if m.searchDelay <= 0 {
		return m.searchNow()
	}
	seq := m.searchSeq
	return tea.Tick(m.searchDelay, func(time.Time) tea.Msg { return searchTickMsg{seq: seq} })
}

// searchNow searches for the query at once.
func (m *Model) searchNow() tea.Cmd {
	m.searchSeq++
	q := m.searchIn.Value()
	if strings.TrimSpace(q) == "" {
		return nil
	}
	return m.runSearch(q, pickerSearchHits)
}

// switchMode goes from the sessions to a search over their messages and
// back. A filter typed when switching becomes the query.
func (m *Model) switchMode() tea.Cmd {
	keep := m.selectedID()
	m.confirmID, m.confirmArchive = "", false
	if m.mode == modeSearch {
		m.mode = modeSessions
		cmd := m.typeInto()
		m.cursor, m.offset = 0, 0
		m.selectID(keep)
		return cmd
	}
	m.mode = modeSearch
	cmd := m.typeInto()
	if m.searchIn.Value() == "" && m.filterIn.Value() != "" {
		m.searchIn.SetValue(m.filterIn.Value())
		m.searchIn.CursorEnd()
	}
	m.cursor, m.offset = 0, 0
	if m.searchIn.Value() != m.searched {
		return tea.Batch(cmd, m.searchNow())
	}
	return cmd
}

// widen switches between this project's sessions and every project's.
func (m *Model) widen() tea.Cmd {
	if m.opts.Project.ID == "" {
		return nil
	}
	m.setScope(!m.all)
	if m.all {
		m.setStatus("Every project's sessions.", false)
	} else {
		m.setStatus(fmt.Sprintf("Sessions of %s only.", m.opts.Project.Name), false)
	}
	cmds := []tea.Cmd{m.loadPage(pickerPage)}
	if m.mode == modeSearch {
		cmds = append(cmds, m.searchNow())
	}
	return tea.Batch(cmds...)
}

// choose ends the picker with the selected session, read whole; in a
// search whose query changed since it ran, enter runs it instead.
func (m *Model) choose() tea.Cmd {
	if m.mode == modeSearch && m.searchIn.Value() != m.searched {
		return m.searchNow()
	}
	id := m.selectedID()
	if id == "" {
		return nil
	}
	ctx, st := m.ctx, m.st
	return func() tea.Msg {
		s, err := st.Session(ctx, id)
		return pickedMsg{s: s, err: err}
	}
}

func (m *Model) startRename() tea.Cmd {
	id := m.selectedID()
	if id == "" {
		return nil
	}
	title := ""
	if m.mode == modeSearch {
		title = m.hits[m.cursor].title
	} else {
		s, _ := m.sessionAt(m.cursor)
		title = s.Title
	}
	m.renameID = id
	// Sized before its value is set, which it scrolls to its end.
	m.sizeRename(m.layout().listW)
	m.renameIn.SetValue(term.SanitizeLine(title))
	m.renameIn.CursorEnd()
	m.filterIn.Blur()
	m.searchIn.Blur()
	m.input = inputRename
	return m.renameIn.Focus()
}

func (m *Model) renameKey(k tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(k, pickerKeys.cancelEdit):
		return m.endRename()
	case key.Matches(k, pickerKeys.save):
		title := strings.TrimSpace(m.renameIn.Value())
		if title == "" {
			m.setStatus("A title cannot be empty.", true)
			return nil
		}
		if err := loom.ValidTitle(title); err != nil {
			m.setStatus(loom.ErrorMessage(err), true)
			return nil
		}
		// Asked before it is saved: a key typed by mistake is not a
		// new title.
		m.renameTo = title
		m.setStatus(fmt.Sprintf("Rename %s to %q? y to save, any other key keeps the old title.", m.titleOf(m.renameID), title), false)
		return nil
	}
	return m.typed(k)
}

// confirmRename saves the title typed on y.
func (m *Model) confirmRename(k tea.KeyPressMsg) tea.Cmd {
	id, title := m.renameID, m.renameTo
	m.renameTo = ""
	cmd := m.endRename()
	if k.String() != "y" {
		m.setStatus("Kept the old title.", false)
		return cmd
	}
	ctx, st := m.ctx, m.st
	return tea.Batch(cmd, func() tea.Msg {
		s, err := st.UpdateSession(ctx, id, loom.SessionUpdate{Title: &title})
		return renamedMsg{s: s, err: err}
	})
}

// endRename leaves the title input; typing filters again.
func (m *Model) endRename() tea.Cmd {
	m.renameID = ""
	return m.typeInto()
}

func (m *Model) archiveCmd(id string) tea.Cmd {
	ctx, st := m.ctx, m.st
	return func() tea.Msg {
		archived := true
		_, err := st.UpdateSession(ctx, id, loom.SessionUpdate{Archived: &archived})
		return removedMsg{id: id, removed: []string{id}, archive: true, err: err}
	}
}

// deleteCmd moves a session to the trash, with its sub-agent sessions,
// which leave the list too.
func (m *Model) deleteCmd(id string) tea.Cmd {
	ctx, st := m.ctx, m.st
	return func() tea.Msg {
		gone, err := st.Delete(ctx, id, loom.DeleteOptions{})
		ids := make([]string, len(gone))
		for i, s := range gone {
			ids[i] = s.ID
		}
		return removedMsg{id: id, removed: ids, err: err}
	}
}
