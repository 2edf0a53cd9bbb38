package memstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

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

// Family implements sessionstore.TrashSteps.
func (t *tx) Family(ctx context.Context, id string, trashed bool) ([]*loom.Session, error) {
	var out []*loom.Session
	for _, fid := range t.st.family(id) {
		x, ok := t.st.sessions[fid]
		if ok && (trashed || live(x)) {
			out = append(out, t.s.session(t.st, x))
		}
	}
	return out, nil
}

// Prunable implements sessionstore.TrashSteps: live sessions, neither archived
// nor sub-agents', of the user and project, not updated since
// now-opts.OlderThan, oldest first.
func (t *tx) Prunable(ctx context.Context, opts loom.PruneOptions, now time.Time) ([]*loom.Session, error) {
	bound := stored(loom.ClampTime(now.Add(-opts.OlderThan)))
	var out []*loom.Session
	for _, x := range t.st.sessions {
		if !live(x) || x.ArchivedAt != nil || x.Kind == loom.KindSubagent || x.UpdatedAt.After(bound) ||
			opts.UserID != "" && x.UserID != opts.UserID || opts.ProjectID != "" && x.Project.ID != opts.ProjectID {
			continue
		}
		out = append(out, t.s.session(t.st, x))
	}
	oldestFirst(out, func(x *loom.Session) time.Time { return x.UpdatedAt })
	return out, nil
}

// EmptyTrash implements sessionstore.TrashSteps.
func (t *tx) EmptyTrash(ctx context.Context, before time.Time) ([]string, error) {
	bound := stored(before)
	var out []string
	for id, x := range t.st.sessions {
		if x.DeletedAt != nil && x.DeletedAt.Before(bound) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	for _, id := range out {
		t.st.deleteSession(id)
	}
	return out, nil
}

// Purge implements sessionstore.TrashSteps.
func (t *tx) Purge(ctx context.Context, id string) error {
	for _, fid := range t.st.family(id) {
		t.st.deleteSession(fid)
	}
	return nil
}

// Trash implements sessionstore.TrashSteps.
func (t *tx) Trash(ctx context.Context, ids []string, at time.Time) ([]string, error) {
	var out []string
	for _, id := range ids {
		for _, fid := range t.st.family(id) {
			x, ok := t.st.sessions[fid]
			if !ok || !live(x) {
				continue
			}
			x.DeletedAt = &at
			if err := t.st.put(x); err != nil {
				return nil, err
			}
			out = append(out, fid)
		}
	}
	return out, nil
}

// Untrash implements sessionstore.TrashSteps: none is restored when a key
// another live session took meanwhile stops one.
func (t *tx) Untrash(ctx context.Context, id string, at time.Time) ([]string, bool, error) {
	var back []loom.Session
	for _, fid := range t.st.family(id) {
		x, ok := t.st.sessions[fid]
		if ok && sameTime(x.DeletedAt, &at) {
			x.DeletedAt = nil
			back = append(back, x)
		}
	}
	var out []string
	for _, x := range back {
		// A key taken fails the restore, and the transaction, which
		// puts back what it changed.
		if err := t.st.put(x); err != nil {
			return nil, true, err
		}
		out = append(out, x.ID)
	}
	return out, false, nil
}

// TurnFrom implements sessionstore.ForkReads.
func (t *tx) TurnFrom(ctx context.Context, src string, seq int64) (int, bool, error) {
	msgs := t.st.through(src, seq, span.OpenSeq)
	if len(msgs) == 0 {
		return 0, false, nil
	}
	return msgs[0].r.turn, true, nil
}

// LastUser implements sessionstore.ForkReads.
func (t *tx) LastUser(ctx context.Context, src string, seq int64) (*loom.Message, error) {
	msgs := t.st.through(src, 1, seq)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].r.role == loom.RoleUser {
			return t.st.message(src, msgs[i].seq, msgs[i].r)
		}
	}
	return nil, nil
}

// LastSummary implements sessionstore.ForkReads.
func (t *tx) LastSummary(ctx context.Context, src string, seq int64) (int64, error) {
	msgs := t.st.through(src, 1, seq)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].r.role == loom.RoleSummary {
			return msgs[i].seq, nil
		}
	}
	return 0, nil
}

// UsageOf implements sessionstore.ForkReads, and is what a history reads beside
// sessionstore.HistorySteps.
func (t *tx) UsageOf(ctx context.Context, src string, from, to int64) (loom.Usage, error) {
	return t.st.usageOf(src, from, to), nil
}

// TitlesLike implements sessionstore.ForkReads: compared as SQLite's
// NOCASE and lower() compare, folding ASCII letters only.
func (t *tx) TitlesLike(ctx context.Context, user, base string) ([]string, error) {
	n := utf8.RuneCountInString(base)
	var out []string
	for _, x := range t.st.sessions {
		if x.UserID != user || !live(x) {
			continue
		}
		prefix := x.Title
		if i := runeOffset(prefix, n); i >= 0 {
			prefix = prefix[:i]
		}
		if asciiLower(prefix) == asciiLower(base) {
			out = append(out, x.Title)
		}
	}
	slices.Sort(out)
	return out, nil
}

// runeOffset returns the byte offset of s's n-th rune, -1 when s has no
// more than n runes.
func runeOffset(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return -1
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// forkRow returns the row a fork of src inserts: src's user, surface,
// description, project, places and model, as a fork.
func forkRow(src loom.Session, id, key, title, parent string, turn int) loom.Session {
	return loom.Session{ID: id, UserID: src.UserID, Key: key, Surface: src.Surface, Title: title,
		Description: src.Description, Kind: loom.KindFork, ParentID: parent, ForkTurn: turn, Project: src.Project,
		Cwd: src.Cwd, Model: src.Model, Provider: src.Provider, Profile: src.Profile, GitBranch: src.GitBranch}
}

// CreateFork implements sessionstore.ForkSteps.
func (t *tx) CreateFork(ctx context.Context, src *loom.Session, plan *sessionstore.ForkPlan, spans []span.Span) (*loom.Session, error) {
	from, ok := t.st.sessions[src.ID]
	if !ok {
		return nil, loom.NotFound(src.ID)
	}
	now := stored(t.s.Now())
	x := forkRow(from, plan.ID, plan.Key, plan.Title, src.ID, plan.Turn)
	x.MessageCount, x.TurnCount, x.SummarySeq, x.LastPrompt = int(plan.LastSeq), plan.Turn, plan.SummarySeq, plan.LastPrompt
	x.CreatedAt, x.UpdatedAt = now, now
	if err := t.st.insertSession(x); err != nil {
		return nil, err
	}
	t.st.spans[plan.ID] = slices.Clone(spans)
	return t.s.sessionIn(t.st, plan.ID)
}

// StoreRewind implements sessionstore.ForkSteps.
func (t *tx) StoreRewind(ctx context.Context, src *loom.Session, plan *sessionstore.RewindPlan, forkSpans, keepSpans []span.Span) (*loom.Session, error) {
	from, ok := t.st.sessions[src.ID]
	if !ok {
		return nil, loom.NotFound(src.ID)
	}
	f := plan.Fork
	at := stored(plan.At)
	x := forkRow(from, f.ID, "", f.Title, src.ID, f.Turn)
	x.MessageCount, x.TurnCount, x.SummarySeq, x.LastPrompt = from.MessageCount, from.TurnCount, from.SummarySeq, from.LastPrompt
	x.Usage = plan.ForkUsage
	x.CreatedAt, x.UpdatedAt = from.CreatedAt, from.UpdatedAt
	if at.Before(from.CreatedAt) {
		x.CreatedAt = at
	}
	if err := t.st.insertSession(x); err != nil {
		return nil, fmt.Errorf("rewind %s: %w", src.ID, err)
	}
	t.st.spans[f.ID] = slices.Clone(forkSpans)
	t.st.spans[src.ID] = slices.Clone(keepSpans)
	from.MessageCount, from.TurnCount, from.LastPrompt, from.SummarySeq = int(plan.KeepSeq), f.Turn, plan.KeepPrompt, plan.KeepSummarySeq
	from.Usage, from.UpdatedAt = plan.KeepUsage, at
	if err := t.st.put(from); err != nil {
		return nil, err
	}
	return t.s.sessionIn(t.st, f.ID)
}

// Spans implements sessionstore.BodySteps.
func (t *tx) Spans(ctx context.Context, id string) ([]span.Span, error) {
	return slices.Clone(t.st.spans[id]), nil
}

// WriteSpans implements sessionstore.BodySteps: the rows the old spans read are
// left as they are.
func (t *tx) WriteSpans(ctx context.Context, id string, spans []span.Span) error {
	t.st.spans[id] = slices.Clone(spans)
	return nil
}

// Readers implements sessionstore.BodySteps.
func (t *tx) Readers(ctx context.Context, store string, seq int64, id string) ([]string, error) {
	var out []string
	for sid, spans := range t.st.spans {
		if sid == id {
			continue
		}
		for _, sp := range spans {
			if sp.RowsOf == store && sp.First <= seq && seq <= sp.Last {
				out = append(out, sid)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// CopyRow implements sessionstore.BodySteps.
func (t *tx) CopyRow(ctx context.Context, to, from string, seq int64, b *sqlstore.Body) error {
	r, ok := t.st.rows[from][seq]
	if !ok {
		return nil
	}
	if b != nil {
		r.body = t.st.newBody(*b)
	}
	return t.st.putRow(to, seq, r)
}

// DropUnread implements sessionstore.BodySteps.
func (t *tx) DropUnread(ctx context.Context, store string, seq int64) error {
	if _, ok := t.st.rows[store][seq]; !ok || t.st.read(store, seq) {
		return nil
	}
	rows := t.st.rows[store]
	delete(rows, seq)
	t.st.setRows(store, rows)
	return nil
}

// Rewrite implements sessionstore.BodySteps: a body another row shares is
// copied first.
func (t *tx) Rewrite(ctx context.Context, store string, seq int64, b sqlstore.Body) error {
	r, ok := t.st.rows[store][seq]
	if !ok {
		return fmt.Errorf("no message %d stored under %s", seq, store)
	}
	shared := false
	for s, rows := range t.st.rows {
		for q, o := range rows {
			if o.body == r.body && (s != store || q != seq) {
				shared = true
			}
		}
	}
	if !shared {
		t.st.bodies[r.body] = b
		return nil
	}
	r.body = t.st.newBody(b)
	t.st.setRow(store, seq, r)
	return nil
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
