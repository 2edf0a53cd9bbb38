package sessionstore

import (
	"cmp"
	"slices"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// Field is one field of a session's metadata as merged from records: its
// value, the stamp of the write that set it, and how far from the session
// that write was made. Depth 0 is a write to the session itself; depth n
// a write to the session n generations above it, for a conflict fork,
// which follows the metadata of the session it split from (ConflictFork)
// until its own field is set. An unset field has the zero stamp.
type Field[T any] struct {
	Value T
	Stamp synclog.Stamp
	Depth int
}

// set writes v at stamp s from depth d when that write wins over f's: a
// nearer write wins over a farther one (a conflict fork's own title over
// its parent's), and between writes from as near, the later stamp wins.
// The order is total and does not depend on when writes arrive, so any
// set of writes gives every host the same field.
func (f *Field[T]) set(v T, s synclog.Stamp, d int) bool {
	if !f.Stamp.IsZero() && (d > f.Depth || d == f.Depth && !f.Stamp.Less(s)) {
		return false
	}
	f.Value, f.Stamp, f.Depth = v, s, d
	return true
}

// Meta is a session's metadata as merged from records, each field on its
// own: last writer wins, by stamp, per field (Field.set), so two hosts
// that rename, move or archive the same session converge on one value for
// each field whatever order the records arrive in. A session's title when
// Title is empty is made from its first prompt (Meta.TitleOf), the rule of
// loom.Session.ApplyAppend.
type Meta struct {
	Title, Description, Key       Field[string]
	Cwd, Model, Provider, Profile Field[string]
	GitBranch                     Field[string]
	Project                       Field[loom.Project]
	Archived                      Field[*time.Time]
}

// newMeta returns the metadata of a session row a record creates (a
// session created, a fork, a rewind's fork, an imported session), every
// field written at stamp s.
func newMeta(row *loom.Session, s synclog.Stamp) Meta {
	var m Meta
	m.Title.set(row.Title, s, 0)
	m.Description.set(row.Description, s, 0)
	m.Key.set(row.Key, s, 0)
	m.Cwd.set(row.Cwd, s, 0)
	m.Model.set(row.Model, s, 0)
	m.Provider.set(row.Provider, s, 0)
	m.Profile.set(row.Profile, s, 0)
	m.GitBranch.set(row.GitBranch, s, 0)
	m.Project.set(row.Project, s, 0)
	m.Archived.set(row.ArchivedAt, s, 0)
	return m
}

// rowChange is the change that writes every field of session row, as
// newMeta does: how a store merges the row of a session it holds already
// (an imported session that two machines imported from one source) by
// last writer per field, so that every host ends with the fields of the
// latest write whichever copy it holds first. It is not activity (no
// At): the session's time is its messages'.
func rowChange(row *loom.Session) *synclog.SessionChanged {
	r := *row
	return &synclog.SessionChanged{SessionID: r.ID, Title: &r.Title, Description: &r.Description, Key: &r.Key,
		Project: &r.Project, Cwd: &r.Cwd, Model: &r.Model, Provider: &r.Provider, Profile: &r.Profile,
		GitBranch: &r.GitBranch, Archive: &synclog.Archive{At: r.ArchivedAt}}
}

// Apply merges change c, stamped s, into m, and reports whether any
// field took its value. depth is 0 for a change to the session itself
// and n for a change to the session n conflict-fork generations above
// it: a conflict fork's store applies its ancestors' changes too, all but
// the key, which names one session only.
func (m *Meta) Apply(s synclog.Stamp, c *synclog.SessionChanged, depth int) bool {
	changed := false
	str := func(f *Field[string], v *string) {
		if v != nil && f.set(*v, s, depth) {
			changed = true
		}
	}
	str(&m.Title, c.Title)
	str(&m.Description, c.Description)
	if depth == 0 {
		str(&m.Key, c.Key)
	}
	str(&m.Cwd, c.Cwd)
	str(&m.Model, c.Model)
	str(&m.Provider, c.Provider)
	str(&m.Profile, c.Profile)
	str(&m.GitBranch, c.GitBranch)
	if c.Project != nil && m.Project.set(*c.Project, s, depth) {
		changed = true
	}
	if c.Archive != nil && m.Archived.set(c.Archive.At, s, depth) {
		changed = true
	}
	return changed
}

// Inherit returns the metadata a conflict fork of the session starts
// with: every field as the session has it, one generation farther, and no
// key. Changes to the session then reach the fork through Apply with
// depth 1, so the fork has the same fields on every host, whether it was
// made before or after they arrived.
func (m Meta) Inherit() Meta {
	for _, f := range []*Field[string]{&m.Title, &m.Description, &m.Cwd, &m.Model, &m.Provider, &m.Profile, &m.GitBranch} {
		if !f.Stamp.IsZero() {
			f.Depth++
		}
	}
	if !m.Project.Stamp.IsZero() {
		m.Project.Depth++
	}
	if !m.Archived.Stamp.IsZero() {
		m.Archived.Depth++
	}
	m.Key = Field[string]{}
	return m
}

// TitleOf returns the title a session with this metadata shows: Title,
// or when that is empty the title made from firstPrompt, the text of the
// session's first user message (loom.TitleFrom). A title the session
// takes from the session it split from is marked as a conflict copy's
// (conflictTitle).
func (m Meta) TitleOf(firstPrompt string) string {
	t := m.Title.Value
	if t == "" {
		t = loom.TitleFrom(firstPrompt)
	}
	if m.Title.Depth > 0 {
		return conflictTitle(t)
	}
	return t
}

// Row writes m's fields into row, the session's stored row, with the
// title TitleOf gives.
func (m Meta) Row(row *loom.Session, firstPrompt string) {
	row.Title = m.TitleOf(firstPrompt)
	row.Description = m.Description.Value
	row.Key = m.Key.Value
	row.Cwd = m.Cwd.Value
	row.Model = m.Model.Value
	row.Provider = m.Provider.Value
	row.Profile = m.Profile.Value
	row.GitBranch = m.GitBranch.Value
	row.Project = m.Project.Value
	row.ArchivedAt = m.Archived.Value
}

// conflictTitle returns the title of a conflict fork of a session titled
// t: "t (conflict)", once however deep the fork.
func conflictTitle(t string) string {
	const suffix = " (conflict)"
	if t == "" || len(t) >= len(suffix) && t[len(t)-len(suffix):] == suffix {
		return t
	}
	return t + suffix
}

// KeyClaim is a session's claim on a key: the session and the stamp of the
// write that gave it the key (Meta.Key.Stamp).
type KeyClaim struct {
	SessionID string
	Stamp     synclog.Stamp
}

// keyHolder returns which of the sessions that claim one key (within one
// user and project, where a key names one session) keeps it: the earliest
// claim, by stamp, then by session id. The others are stored without a
// key until the holder lets it go. Two machines that each start "cli:api"
// in the same repository get two sessions; after a sync the one started
// first answers to the key, and the other keeps everything but the key.
func keyHolder(claims []KeyClaim) (KeyClaim, bool) {
	if len(claims) == 0 {
		return KeyClaim{}, false
	}
	return slices.MinFunc(claims, func(a, b KeyClaim) int {
		if c := a.Stamp.Compare(b.Stamp); c != 0 {
			return c
		}
		return cmp.Compare(a.SessionID, b.SessionID)
	}), true
}
