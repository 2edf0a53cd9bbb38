package memstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/sessionstore"
)

// tx is a write transaction: it holds the store's mutex from its
// beginning to its end, writes the store's state in place and, ended
// with an error, puts back the copy it took at its beginning. It is
// every transaction the rules take (a write's, with its sync log; an
// apply's; a lock's; a hub's put).
type tx struct {
	s     *Store
	st    *state
	saved *state
	ended bool
}

var (
	_ sessionstore.LockWrites = (*tx)(nil)
	_ sessionstore.PutWrites  = (*tx)(nil)
)

// steps returns t as every role of a transaction.
func (t *tx) steps() sessionstore.Tx {
	return sessionstore.Tx{
		SessionSteps: t, BodySteps: t, ForkSteps: t, TrashSteps: t, ImportSteps: t, SettleSteps: t, PromptTx: t,
		SyncSteps: t, Ender: t,
	}
}

// End implements sessionstore.Ender.
func (t *tx) End(err error) error {
	if t.ended {
		return errors.New("transaction ended twice")
	}
	t.ended = true
	if err != nil {
		t.s.st = t.saved
	}
	t.s.mu.Unlock()
	return err
}

// Session implements sessionstore.SessionSteps.
func (t *tx) Session(ctx context.Context, id string) (*loom.Session, error) {
	return t.s.sessionIn(t.st, id)
}

// SessionForWrite implements sessionstore.SessionSteps.
func (t *tx) SessionForWrite(ctx context.Context, id string) (*loom.Session, error) {
	x, ok := t.st.sessions[id]
	if !ok {
		return nil, nil
	}
	return t.s.session(t.st, x), nil
}

// ForkSource implements sessionstore.ForkSteps.
func (t *tx) ForkSource(ctx context.Context, id string) (*loom.Session, error) {
	return t.s.sessionIn(t.st, id)
}

// SessionForUpdate implements sessionstore.SessionSteps.
func (t *tx) SessionForUpdate(ctx context.Context, id string) (*loom.Session, error) {
	return t.s.sessionIn(t.st, id)
}

// RecordFiles implements sessionstore.ImportSteps.
func (t *tx) RecordFiles(ctx context.Context, files []loom.ImportedFile) error {
	for _, f := range files {
		f.ImportedAt = stored(t.s.Now())
		f.ModTime = time.Unix(0, f.ModTime.UnixNano())
		t.st.files[[2]string{f.UserID, f.Path}] = f
	}
	return nil
}

// KeepOriginals implements sessionstore.ImportSteps: the store in
// memory keeps no originals (it is no loom.OriginalsKeeper).
func (t *tx) KeepOriginals(context.Context, []loom.OriginalChunk, bool) error { return nil }

// RecordCalls implements sessionstore.ImportSteps: a call counted already
// keeps its session.
func (t *tx) RecordCalls(ctx context.Context, calls []loom.CountedCall) error {
	for _, c := range calls {
		k := [2]string{c.UserID, c.Call}
		if _, ok := t.st.calls[k]; !ok {
			t.st.calls[k] = c.SessionID
		}
	}
	return nil
}

// CheckWriter implements sessionstore.LockTx and sessionstore.SessionSteps.
func (t *tx) CheckWriter(ctx context.Context, id string) error {
	l, ok := t.st.locks[id]
	if !ok {
		return nil
	}
	if other := t.s.holder.Foreign(&l, t.s.Now(), sqlstore.Alive); other != nil {
		return loom.Locked(id, other)
	}
	return nil
}

// BeginUpdate implements sessionstore.SessionSteps.
func (t *tx) BeginUpdate(ctx context.Context, id string) error { return t.CheckWriter(ctx, id) }

// PutLock implements sessionstore.LockTx.
func (t *tx) PutLock(ctx context.Context, id string, l loom.Lock) error {
	l.Since, l.Expires = stored(l.Since), stored(l.Expires)
	t.st.locks[id] = l
	return nil
}

// CreateSession implements sessionstore.SessionSteps: the columns of a new
// session's insert, its counters and usage at zero.
func (t *tx) CreateSession(ctx context.Context, row *loom.Session) error {
	x := loom.Session{ID: row.ID, UserID: row.UserID, Key: row.Key, Surface: row.Surface, Title: row.Title,
		Description: row.Description, Kind: row.Kind, ParentID: row.ParentID, ForkTurn: row.ForkTurn, Project: row.Project,
		Cwd: row.Cwd, Model: row.Model, Provider: row.Provider, Profile: row.Profile, CreatedAt: row.CreatedAt,
		UpdatedAt: row.UpdatedAt, GitBranch: row.GitBranch, Source: row.Source, Team: row.Team, Member: row.Member}
	if err := t.st.insertSession(x); err != nil {
		return err
	}
	return nil
}

// StoreAppend implements sessionstore.SessionSteps.
func (t *tx) StoreAppend(ctx context.Context, cur *loom.Session, msgs []*loom.Message) error {
	store := cur.ID
	if spans := t.st.spans[cur.ID]; len(spans) > 0 {
		store = span.OwnStore(spans)
	}
	for _, m := range msgs {
		r, err := t.st.newRow(m)
		if err != nil {
			return err
		}
		if err := t.st.putRow(store, m.Seq, r); err != nil {
			return fmt.Errorf("store message %d: %w", m.Seq, err)
		}
	}
	x, ok := t.st.sessions[cur.ID]
	if !ok {
		return nil
	}
	x.MessageCount, x.TurnCount, x.LastPrompt, x.Title, x.SummarySeq = cur.MessageCount, cur.TurnCount, cur.LastPrompt, cur.Title, cur.SummarySeq
	x.Usage, x.UpdatedAt, x.ArchivedAt = cur.Usage, cur.UpdatedAt, nil
	return t.st.put(x)
}

// UpdateRow implements sessionstore.SessionSteps: the columns of
// query.UpdateColumns.
func (t *tx) UpdateRow(ctx context.Context, id string, u loom.SessionUpdate, now time.Time) error {
	x, ok := t.st.sessions[id]
	if !ok {
		return nil
	}
	changed := false
	set := func(dst *string, v *string) {
		if v != nil {
			*dst, changed = *v, true
		}
	}
	if u.Title != nil {
		title := strings.TrimSpace(*u.Title)
		set(&x.Title, &title)
	}
	set(&x.Description, u.Description)
	if u.Key != nil {
		x.Key, changed = *u.Key, true
		if *u.Key != "" {
			x.Surface = loom.SurfaceOf(*u.Key)
		}
	}
	if u.Project != nil {
		x.Project, changed = *u.Project, true
	}
	set(&x.Cwd, u.Cwd)
	set(&x.Model, u.Model)
	set(&x.Provider, u.Provider)
	set(&x.Profile, u.Profile)
	set(&x.GitBranch, u.GitBranch)
	set(&x.Team, u.Team)
	set(&x.Member, u.Member)
	if changed && !u.KeepUpdatedAt {
		x.UpdatedAt = now
	}
	if u.Archived != nil {
		x.ArchivedAt = nil
		if *u.Archived {
			x.ArchivedAt = &now
		}
	}
	if err := t.st.put(x); err != nil {
		return loom.Errorf(loom.ECONFLICT, "another session already has that key in that project")
	}
	return nil
}

// Message implements sessionstore.BodySteps.
func (t *tx) Message(ctx context.Context, id string, seq int64) (*loom.Message, error) {
	msgs, err := t.st.messages(id, seq, seq)
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	return msgs[0], nil
}

// EncodeBody implements sessionstore.BodySteps: the search text apart, as
// SQLite keeps it (sqlstore.EncodeBody).
func (t *tx) EncodeBody(m *loom.Message) (sqlstore.Body, error) {
	parts, text, err := sqlstore.EncodeBody(m)
	return sqlstore.Body{Parts: parts, Text: text}, err
}

// Written implements sessionstore.SessionSteps.
func (t *tx) Written(ctx context.Context, id string, now time.Time) error {
	if x, ok := t.st.sessions[id]; ok && x.Source == nil {
		x.UpdatedAt = now
		return t.st.put(x)
	}
	return nil
}

// ReplacePrompt implements sessionstore.PromptTx.
func (t *tx) ReplacePrompt(ctx context.Context, old, next string) error {
	for id, x := range t.st.sessions {
		if x.LastPrompt == old {
			x.LastPrompt = next
			t.st.sessions[id] = x
		}
	}
	return nil
}

// OwnUsage implements sessionstore.SessionSteps.
func (t *tx) OwnUsage(ctx context.Context, id string, seq int64) (string, loom.Usage, error) {
	r, ok := t.st.rows[id][seq]
	if !ok {
		return "", loom.Usage{}, loom.Errorf(loom.ENOTFOUND, "session %s stores no message %d of its own", id, seq)
	}
	return r.id, r.usage, nil
}

// MoveUsage implements sessionstore.SessionSteps.
func (t *tx) MoveUsage(ctx context.Context, id, store string, seq int64, old, u loom.Usage) error {
	if r, ok := t.st.rows[store][seq]; ok {
		r.usage = u
		t.st.setRow(store, seq, r)
	}
	if x, ok := t.st.sessions[id]; ok {
		d := u
		d.Sub(old)
		x.Usage.Add(d)
		t.st.sessions[id] = x
	}
	return nil
}

// LastTurn implements sessionstore.BodySteps.
func (t *tx) LastTurn(ctx context.Context, id string, r *sessionstore.Repair) error {
	msgs := t.st.through(id, 1, span.OpenSeq)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, err := t.st.message(id, msgs[i].seq, msgs[i].r)
		if err != nil {
			return fmt.Errorf("repair %s: %w", id, err)
		}
		if !r.Add(m) {
			break
		}
	}
	return nil
}

// ImportRows implements sessionstore.ImportSteps: nothing is written when a
// session is there already or a key is taken.
func (t *tx) ImportRows(ctx context.Context, data []*loom.SessionData) error {
	for _, d := range data {
		if _, ok := t.st.sessions[d.Session.ID]; ok {
			return loom.Errorf(loom.ECONFLICT, "session %s already exists", d.Session.ID)
		}
	}
	// An error fails the import, and the transaction, which puts back
	// what it changed.
	return t.importRows(data)
}

func (t *tx) importRows(data []*loom.SessionData) error {
	for _, d := range data {
		if err := t.st.insertSession(*d.Session); err != nil {
			return loom.Errorf(loom.ECONFLICT, "import %s: another session already has key %q", d.Session.ID, d.Session.Key)
		}
		for _, m := range d.Messages {
			r, err := t.st.newRow(m)
			if err != nil {
				return err
			}
			if err := t.st.putRow(m.SessionID, m.Seq, r); err != nil {
				return fmt.Errorf("import %s: %w", d.Session.ID, err)
			}
		}
	}
	return nil
}

// ProjectSessions implements sessionstore.SessionSteps: the live ones
// newest first, then the trashed ones newest first.
func (t *tx) ProjectSessions(ctx context.Context, userID, projectID string) ([]*loom.Session, error) {
	var out []*loom.Session
	for _, x := range t.st.sessions {
		if x.UserID == userID && x.Project.ID == projectID {
			out = append(out, t.s.session(t.st, x))
		}
	}
	slices.SortFunc(out, func(a, b *loom.Session) int {
		return cmp.Or(cmp.Compare(btoi(a.DeletedAt != nil), btoi(b.DeletedAt != nil)),
			b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(b.ID, a.ID))
	})
	return out, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
