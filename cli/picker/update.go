package picker

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
)

// Messages of the picker's commands.
type (
	pageMsg struct {
		gen      int
		sessions []*loom.SessionSummary
		limit    int
		err      error
	}
	searchMsg struct {
		gen, limit int
		query      string
		hits       []loom.SearchHit
		err        error
	}
	searchTickMsg struct{ seq int }
	previewMsg    struct {
		key   string
		focus int64
		msgs  []*loom.Message
		err   error
	}
	renamedMsg struct {
		s   *loom.Session
		err error
	}
	removedMsg struct {
		id      string
		removed []string
		archive bool
		err     error
	}
	pickedMsg struct {
		s   *loom.Session
		err error
	}
)

// scopeFilter is the session filter of the current scope.
func (m *Model) scopeFilter() loom.SessionFilter {
	f := loom.SessionFilter{UserID: m.opts.UserID}
	if !m.all {
		f.ProjectID = m.opts.Project.ID
	}
	return f
}

// loadPage reads the next limit sessions of the scope.
func (m *Model) loadPage(limit int) tea.Cmd {
	m.loading = true
	f := m.scopeFilter()
	f.Limit, f.Before = limit, m.next
	gen, ctx, st := m.gen, m.ctx, m.st
	return func() tea.Msg {
		ss, err := st.Summaries(ctx, f)
		return pageMsg{gen: gen, sessions: ss, limit: limit, err: err}
	}
}

// runSearch searches the messages of the scope for query.
func (m *Model) runSearch(query string, limit int) tea.Cmd {
	m.searching = true
	q := loom.SearchQuery{Text: query, UserID: m.opts.UserID, Limit: limit, MarkStart: markOpen, MarkEnd: markClose}
	if !m.all {
		q.ProjectID = m.opts.Project.ID
	}
	gen, ctx, st := m.gen, m.ctx, m.st
	return func() tea.Msg {
		hits, err := st.Search(ctx, q)
		return searchMsg{gen: gen, limit: limit, query: query, hits: hits, err: err}
	}
}

// loadPreview reads what the preview of the selected row shows: a
// session's newest messages, or a search result's best hit, the message
// before it and those after.
func (m *Model) loadPreview(key, id string, focus int64) tea.Cmd {
	m.previews[key] = &preview{loading: true, focus: focus}
	ctx, st := m.ctx, m.st
	q := loom.MessageQuery{Limit: previewMessages}
	if focus > 0 {
		q.After, q.Oldest = max(focus-2, 0), true
	}
	return func() tea.Msg {
		msgs, err := st.Messages(ctx, id, q)
		return previewMsg{key: key, focus: focus, msgs: msgs, err: err}
	}
}

// previewKey is what the selected row's preview is kept under, and
// the hit it shows first (0: the newest messages).
func (m *Model) previewKey() (key, id string, focus int64) {
	id = m.selectedID()
	if id == "" || m.mode != modeSearch {
		return id, id, 0
	}
	focus = m.hits[m.cursor].best.Seq
	return fmt.Sprintf("%s#%d", id, focus), id, focus
}

// Update applies a key, a resize or a command's result.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		cmd = m.key(msg)
	case tea.PasteMsg:
		cmd = m.typed(msg)
	case pageMsg:
		m.page(msg)
	case searchMsg:
		m.searchResult(msg)
	case searchTickMsg:
		if msg.seq == m.searchSeq {
			cmd = m.searchNow()
		}
	case previewMsg:
		m.previews[msg.key] = &preview{msgs: msg.msgs, err: msg.err, focus: msg.focus}
		if len(m.previews) > previewCacheSize {
			m.trimPreviews()
		}
	case renamedMsg:
		m.renamed(msg)
	case removedMsg:
		m.removed(msg)
	case pickedMsg:
		if msg.err != nil {
			m.setStatus(loom.ErrorMessage(msg.err), true)
			break
		}
		m.chosen, m.done = msg.s, true
		return m, tea.Quit
	}
	if m.done {
		return m, cmd
	}
	return m, tea.Batch(cmd, m.follow())
}

// follow reads what the screen now needs: the next page when the
// selection nears the end of what is loaded (or every page, while a
// filter is set), more search results likewise, and the selected
// session's preview.
func (m *Model) follow() tea.Cmd {
	var cmds []tea.Cmd
	switch m.mode {
	case modeSessions:
		if m.loaded && m.next != nil && !m.loading {
			if m.filterIn.Value() != "" {
				cmds = append(cmds, m.loadPage(pickerFilterPage))
			} else if m.cursor >= len(m.sessions)-pickerNearEnd {
				cmds = append(cmds, m.loadPage(pickerPage))
			}
		}
	case modeSearch:
		if m.searchMore && !m.searching && m.searched != "" && m.cursor >= len(m.hits)-pickerNearEnd && m.searchLimit < pickerMaxSearchHits {
			cmds = append(cmds, m.runSearch(m.searched, m.searchLimit*2))
		}
	}
	if key, id, focus := m.previewKey(); id != "" && m.previews[key] == nil {
		cmds = append(cmds, m.loadPreview(key, id, focus))
	}
	return tea.Batch(cmds...)
}

// trimPreviews forgets the previews of every session but the selected
// one, so that scrolling through thousands keeps little.
func (m *Model) trimPreviews() {
	key, _, _ := m.previewKey()
	for k := range m.previews {
		if k != key {
			delete(m.previews, k)
		}
	}
}

func (m *Model) page(msg pageMsg) {
	if msg.gen != m.gen {
		return
	}
	m.loading = false
	if msg.err != nil {
		m.setStatus(loom.ErrorMessage(msg.err), true)
		return
	}
	keep := m.selectedID()
	m.loaded = true
	m.next = nil
	if len(msg.sessions) == msg.limit && msg.limit > 0 {
		last := msg.sessions[len(msg.sessions)-1]
		m.next = &loom.Cursor{UpdatedAt: last.UpdatedAt, ID: last.ID}
	}
	for _, s := range msg.sessions {
		if m.seen[s.ID] {
			continue
		}
		m.seen[s.ID] = true
		m.sessions = append(m.sessions, s)
		m.targets, m.descs = append(m.targets, filterTarget(s)), append(m.descs, descTarget(s))
	}
	ids := make([]string, len(m.sessions))
	for i, s := range m.sessions {
		ids[i] = s.ID
	}
	m.idLen = term.AbbrevLen(ids)
	if m.mode == modeSessions && m.filterIn.Value() != "" {
		m.refilter()
		m.selectID(keep)
	}
}

func (m *Model) searchResult(msg searchMsg) {
	if msg.gen != m.gen || msg.query != m.searchIn.Value() {
		return
	}
	m.searching = false
	if msg.err != nil {
		m.setStatus(loom.ErrorMessage(msg.err), true)
		return
	}
	keep := ""
	if msg.query == m.searched {
		keep = m.selectedID()
	}
	m.searched, m.searchLimit = msg.query, msg.limit
	m.searchMore = len(msg.hits) >= msg.limit
	m.hits = groupHits(msg.hits)
	if m.mode == modeSearch {
		m.cursor, m.offset = 0, 0
		m.selectID(keep)
	}
}

// groupHits makes one row per session, in the order of its best hit.
func groupHits(hits []loom.SearchHit) []searchRow {
	var rows []searchRow
	at := map[string]int{}
	for _, h := range hits {
		if i, ok := at[h.SessionID]; ok {
			rows[i].hits++
			continue
		}
		at[h.SessionID] = len(rows)
		rows = append(rows, searchRow{id: h.SessionID, title: h.SessionTitle, key: h.SessionKey, best: h, hits: 1})
	}
	return rows
}

func (m *Model) renamed(msg renamedMsg) {
	if msg.err != nil {
		m.setStatus(loom.ErrorMessage(msg.err), true)
		return
	}
	s := msg.s.Summary()
	// A rename is activity (updated_at is now): ages count from now, not
	// from when the picker opened, or the row would show a time to come.
	m.now = m.opts.Now()
	for i, x := range m.sessions {
		if x.ID == s.ID {
			m.sessions[i], m.targets[i], m.descs[i] = s, filterTarget(s), descTarget(s)
		}
	}
	for i := range m.hits {
		if m.hits[i].id == s.ID {
			m.hits[i].title = s.Title
		}
	}
	if m.filterIn.Value() != "" {
		keep := m.selectedID()
		m.refilter()
		m.selectID(keep)
	}
	m.setStatus(fmt.Sprintf("Renamed to %q.", term.SanitizeLine(s.Title)), false)
}

func (m *Model) removed(msg removedMsg) {
	if msg.err != nil {
		m.setStatus(loom.ErrorMessage(msg.err), true)
		return
	}
	gone := map[string]bool{}
	for _, id := range msg.removed {
		gone[id] = true
	}
	title := m.titleOf(msg.id)
	sessions, targets, descs := m.sessions[:0], m.targets[:0], m.descs[:0]
	for i, s := range m.sessions {
		if !gone[s.ID] {
			sessions, targets, descs = append(sessions, s), append(targets, m.targets[i]), append(descs, m.descs[i])
		}
	}
	m.sessions, m.targets, m.descs = sessions, targets, descs
	hits := m.hits[:0]
	for _, h := range m.hits {
		if !gone[h.id] {
			hits = append(hits, h)
		}
	}
	m.hits = hits
	if m.filterIn.Value() != "" {
		m.refilter()
	}
	m.clamp()
	short := msg.id[:min(len(msg.id), m.idLen)]
	if msg.archive {
		m.setStatus(fmt.Sprintf("Archived %s; loom session unarchive %s brings it back.", title, short), false)
	} else {
		m.setStatus(fmt.Sprintf("Moved %s to the trash; loom session restore %s brings it back.", title, short), false)
	}
}

// titleOf is how a status line names a session: its title, quoted, or
// its short id.
func (m *Model) titleOf(id string) string {
	for _, s := range m.sessions {
		if s.ID == id && s.Title != "" {
			return fmt.Sprintf("%q", term.SanitizeLine(s.Title))
		}
	}
	for _, h := range m.hits {
		if h.id == id && h.title != "" {
			return fmt.Sprintf("%q", term.SanitizeLine(h.title))
		}
	}
	return id[:min(len(id), m.idLen)]
}

func (m *Model) setStatus(s string, isErr bool) { m.status, m.isErr = s, isErr }
