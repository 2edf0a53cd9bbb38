package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/synclog"
)

// ErrSyncGap reports a record whose index is not the next one of its
// host: the records between were lost on the way, and applying past them
// would leave this store without their changes for good.
var ErrSyncGap = errors.New("sync record out of order")

// ErrSyncWaits reports a record that follows a change this store does
// not hold yet (a message, a session): it is applied after that change.
var ErrSyncWaits = errors.New("sync record waits")

// NotAppliedError reports a record of a kind, or in a case, that this
// loom does not apply yet. The record is never skipped: skipping it would
// make this store's copy differ from the others' for good.
type NotAppliedError struct {
	Type synclog.Type
	// Why names the case, "" when no record of the type applies.
	Why string
}

func (e *NotAppliedError) Error() string {
	msg := fmt.Sprintf("this loom cannot apply %s records yet", e.Type)
	if e.Why != "" {
		msg += ": " + e.Why
	}
	return msg
}

// ApplySync applies record p of another host, whose header is h, to the
// store, in one transaction, by the merge rules of docs/sync.md. It
// records nothing in the store's own sync log: applying is not a change
// of this host's. The store keeps the index of the last record it applied
// of each host: a record applied already changes nothing, and one that
// does not follow it is ErrSyncGap. A record stamped too far ahead of
// this machine's clock is synclog.ErrClockAhead.
func (s *Store) ApplySync(ctx context.Context, h synclog.Header, p synclog.Payload) error {
	if err := h.Host.Validate(); err != nil {
		return fmt.Errorf("apply sync record: %w", err)
	}
	if h.Index == 0 {
		return fmt.Errorf("apply sync record of host %s: index 0 (a host's records are numbered from 1)", h.Host)
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		w := writes{s, tx}
		self, err := syncHost(ctx, w)
		switch {
		case err != nil:
			return err
		case self == "":
			return loom.Errorf(loom.EINVALID, "sync is not set up on this store")
		case self == h.Host:
			return fmt.Errorf("apply sync record %d of host %s: that is this store's own host", h.Index, h.Host)
		}
		var last uint64
		err = tx.QueryRowContext(ctx, `SELECT idx FROM sync_applied WHERE host = ?`, string(h.Host)).Scan(&last)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read sync state: %w", err)
		}
		if h.Index <= last {
			return nil
		}
		if h.Index != last+1 {
			return fmt.Errorf("%w: record %d of host %s, and this store has applied its records up to %d: records %d to %d are missing",
				ErrSyncGap, h.Index, h.Host, last, last+1, h.Index-1)
		}
		if err := s.clock.Observe(h.HLC); err != nil {
			return err
		}
		if err := s.applyRecord(ctx, w, h, p); err != nil {
			return fmt.Errorf("apply record %d of host %s (%s): %w", h.Index, h.Host, p.Type(), err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sync_applied (host, idx) VALUES (?, ?)
			ON CONFLICT (host) DO UPDATE SET idx = excluded.idx`, string(h.Host), h.Index); err != nil {
			return fmt.Errorf("write sync state: %w", err)
		}
		return nil
	})
}

// applyRecord makes the change p, the record h heads, to the store. A
// record for a session purged here is dropped; one that works in a
// session counts in the session's life (synclog.Life).
func (s *Store) applyRecord(ctx context.Context, w writes, h synclog.Header, p synclog.Payload) error {
	if gone, err := forPurged(ctx, w, p); err != nil || gone {
		return err
	}
	if err := s.applyChange(ctx, w, h.Stamp(), p); err != nil {
		return err
	}
	if id := workedIn(p); id != "" {
		return worked(ctx, w, p.Type(), id, h.Host, h.Index)
	}
	return nil
}

// applyChange makes the change p, stamped st, to the store.
func (s *Store) applyChange(ctx context.Context, w writes, st synclog.Stamp, p synclog.Payload) error {
	switch p := p.(type) {
	case *synclog.SessionCreated:
		return applyCreated(ctx, w, st, p)
	case *synclog.MessagesAppended:
		return applyAppend(ctx, w, st, p)
	case *synclog.Imported:
		return s.applyImported(ctx, w, st, p)
	case *synclog.SessionChanged:
		return applyChanged(ctx, w, st, p)
	case *synclog.PartUpdated:
		return applyPart(ctx, w, st, p)
	case *synclog.UsageUpdated:
		return applyUsage(ctx, w, st, p)
	case *synclog.Forked:
		return applyForked(ctx, w, st, p)
	case *synclog.Rewound:
		return s.applyRewound(ctx, w, st, p)
	case *synclog.Trashed:
		return applyTrashed(ctx, w, st, p)
	case *synclog.Restored:
		return applyRestored(ctx, w, st, p)
	case *synclog.Purged:
		return s.applyPurged(ctx, w, p)
	}
	return &NotAppliedError{Type: p.Type()}
}

// applyCreated creates the session p's row describes, unless it is here
// already.
func applyCreated(ctx context.Context, w writes, st synclog.Stamp, p *synclog.SessionCreated) error {
	cur, err := w.SessionForWrite(ctx, p.Session.ID)
	if err != nil || cur != nil {
		return err
	}
	if err := w.CreateSession(ctx, p.Session); err != nil {
		if loom.ErrorCode(err) == loom.ECONFLICT {
			return &NotAppliedError{Type: p.Type(), Why: fmt.Sprintf("another session here has key %q (two machines started sessions with one key)", p.Session.Key)}
		}
		return err
	}
	return saveMeta(ctx, w, p.Session.ID, synclog.NewMeta(p.Session, st))
}

// applyAppend appends p's messages to the session that ends where p's
// writer appended them (synclog.PlanAppend), keeping their ids, seq and
// times; messages the session holds already are left as they are.
func applyAppend(ctx context.Context, w writes, st synclog.Stamp, p *synclog.MessagesAppended) error {
	cur, err := w.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("%w: messages for session %s, which this store does not hold", ErrSyncWaits, p.SessionID)
	}
	win, err := appendWindow(ctx, w, cur, p)
	if err != nil {
		return err
	}
	plan := synclog.PlanAppend(win, st, p)
	switch plan.Action {
	case synclog.Applied:
		return nil
	case synclog.Append:
	case synclog.Elsewhere:
		return &NotAppliedError{Type: p.Type(), Why: fmt.Sprintf(
			"session %s holds %d messages and not message %s at seq %d, which the record follows (a rewind or a conflict moved it, or its record has not arrived)",
			cur.ID, cur.MessageCount, p.PrevID, p.FirstSeq-1)}
	default:
		return &NotAppliedError{Type: p.Type(), Why: fmt.Sprintf(
			"two machines appended to session %s at once, from seq %d (a conflict fork)", cur.ID, plan.At)}
	}
	// ApplyAppend numbers the messages it is given: copies, so that the
	// record stays as decoded.
	msgs := make([]*loom.Message, 0, len(p.Messages)-plan.Skip)
	for _, m := range p.Messages[plan.Skip:] {
		c := *m
		msgs = append(msgs, &c)
	}
	cur.ApplyAppend(p.At, msgs...)
	if err := w.StoreAppend(ctx, cur, msgs); err != nil {
		return fmt.Errorf("append to %s: %w", cur.ID, err)
	}
	if err := stampMessages(ctx, w, st, msgs); err != nil {
		return err
	}
	return appendUnarchives(ctx, w, cur.ID, st)
}

// appendWindow reads the rows of session cur that PlanAppend needs for
// record p.
func appendWindow(ctx context.Context, w writes, cur *loom.Session, p *synclog.MessagesAppended) (synclog.Window, error) {
	win := synclog.Window{Count: int64(cur.MessageCount)}
	if p.FirstSeq > 1 && win.Count >= p.FirstSeq-1 {
		id, err := w.MessageID(ctx, cur.ID, p.FirstSeq-1)
		if err != nil {
			return win, err
		}
		win.Prev = id
	}
	if win.Count < p.FirstSeq {
		return win, nil
	}
	last := min(win.Count, p.FirstSeq+int64(len(p.Messages))-1)
	held, err := spanMessages(ctx, w, cur.ID, p.FirstSeq, last, "", false, 0)
	if err != nil {
		return win, err
	}
	for _, m := range held {
		e := synclog.Entry{ID: m.ID}
		err := w.QueryRowContext(ctx, `SELECT hlc, host FROM sync_messages WHERE id = ?`, m.ID).Scan(&e.Stamp.HLC, &e.Stamp.Host)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return win, err
		}
		win.Next = append(win.Next, e)
	}
	return win, nil
}

// appendUnarchives merges what an append does to the archived state
// (StoreAppend takes a session out of the archive) into the metadata of
// session id: an archive stamped after the append keeps the session
// archived, whichever arrived first.
func appendUnarchives(ctx context.Context, w writes, id string, st synclog.Stamp) error {
	m, err := loadMeta(ctx, w, id)
	if err != nil {
		return err
	}
	if !m.Apply(st, &synclog.SessionChanged{SessionID: id, Archive: &synclog.Archive{}}, 0) && m.Archived.Value != nil {
		if _, err := w.ExecContext(ctx, `UPDATE sessions SET archived_at = ? WHERE id = ?`, nullTime(m.Archived.Value), id); err != nil {
			return fmt.Errorf("archive %s: %w", id, err)
		}
	}
	return saveMeta(ctx, w, id, m)
}

// applyImported imports p's sessions that are not here, with their
// messages as they are.
func (s *Store) applyImported(ctx context.Context, w writes, st synclog.Stamp, p *synclog.Imported) error {
	var data []*loom.SessionData
	for _, d := range p.Sessions {
		cur, err := w.SessionForWrite(ctx, d.Session.ID)
		if err != nil {
			return err
		}
		gone, err := purged(ctx, w, d.Session.ID)
		if err != nil {
			return err
		}
		if cur == nil && !gone {
			data = append(data, d)
		}
	}
	if len(data) == 0 {
		return nil
	}
	if err := loom.ValidateImport(data); err != nil {
		return err
	}
	if err := s.importTx(ctx, w.tx, data); err != nil {
		return err
	}
	return stampImported(ctx, w, st, data)
}

// stampImported keeps the stamps of imported sessions and their
// messages.
func stampImported(ctx context.Context, w writes, st synclog.Stamp, data []*loom.SessionData) error {
	for _, d := range data {
		if err := saveMeta(ctx, w, d.Session.ID, synclog.NewMeta(d.Session, st)); err != nil {
			return err
		}
		if err := stampMessages(ctx, w, st, d.Messages); err != nil {
			return err
		}
	}
	return nil
}

// stampLocal keeps what the merge rules need of a change this store
// made, p, recorded at st as record idx of its log: the same stamps and
// trash state applying it elsewhere keeps, so that a change of another
// host older than this one does not overwrite it.
func stampLocal(ctx context.Context, w writes, st synclog.Stamp, idx uint64, p synclog.Payload) error {
	if id := workedIn(p); id != "" {
		if err := worked(ctx, w, p.Type(), id, st.Host, idx); err != nil {
			return err
		}
	}
	switch p := p.(type) {
	case *synclog.Trashed:
		return eachLocalLife(ctx, w, p.SessionIDs, func(l *synclog.Life) { l.Trashed(st, p) })
	case *synclog.Restored:
		return eachLocalLife(ctx, w, p.SessionIDs, func(l *synclog.Life) { l.Restored(st) })
	case *synclog.Purged:
		return markPurged(ctx, w, p.SessionIDs)
	case *synclog.SessionCreated:
		return saveMeta(ctx, w, p.Session.ID, synclog.NewMeta(p.Session, st))
	case *synclog.MessagesAppended:
		if err := stampMessages(ctx, w, st, p.Messages); err != nil {
			return err
		}
		return appendUnarchives(ctx, w, p.SessionID, st)
	case *synclog.Imported:
		return stampImported(ctx, w, st, p.Sessions)
	case *synclog.SessionChanged:
		m, err := loadMeta(ctx, w, p.SessionID)
		if err != nil {
			return err
		}
		m.Apply(st, p, 0)
		return saveMeta(ctx, w, p.SessionID, m)
	case *synclog.PartUpdated:
		return stampPart(ctx, w, st, p.MessageID, p.Part.ID)
	case *synclog.UsageUpdated:
		return stampUsage(ctx, w, st, p.MessageID)
	case *synclog.Forked:
		return saveMeta(ctx, w, p.Session.ID, synclog.NewMeta(p.Session, st))
	case *synclog.Rewound:
		return saveMeta(ctx, w, p.Fork.ID, synclog.NewMeta(p.Fork, st))
	}
	return nil
}

// stampMessages keeps the stamp of the record that appended msgs.
func stampMessages(ctx context.Context, w writes, st synclog.Stamp, msgs []*loom.Message) error {
	for _, m := range msgs {
		if _, err := w.ExecContext(ctx, `INSERT INTO sync_messages (id, hlc, host) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			m.ID, st.HLC, string(st.Host)); err != nil {
			return fmt.Errorf("stamp message %s: %w", m.ID, err)
		}
	}
	return nil
}

// loadMeta returns the merged metadata of session id; none when the
// session's fields were never stamped (it was made before sync was set
// up, and has not changed since).
func loadMeta(ctx context.Context, w writes, id string) (synclog.Meta, error) {
	return loadState[synclog.Meta](ctx, w, metaState, id)
}

// saveMeta stores m as the merged metadata of session id.
func saveMeta(ctx context.Context, w writes, id string, m synclog.Meta) error {
	return saveState(ctx, w, metaState, id, m)
}

// sessionState is what sync keeps of each session beside its row, as
// JSON in column col of table, keyed by session_id; what names it in
// errors.
type sessionState struct{ table, col, what string }

var (
	metaState = sessionState{"sync_meta", "meta", "stamps"}
	lifeState = sessionState{"sync_life", "life", "trash state"}
)

// loadState returns st of session id, the zero value when none is kept.
func loadState[T any](ctx context.Context, w writes, st sessionState, id string) (T, error) {
	var v T
	var text string
	err := w.QueryRowContext(ctx, `SELECT `+st.col+` FROM `+st.table+` WHERE session_id = ?`, id).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return v, nil
	}
	if err != nil {
		return v, fmt.Errorf("read %s of %s: %w", st.what, id, err)
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return v, fmt.Errorf("read %s of %s: %w", st.what, id, err)
	}
	return v, nil
}

// saveState stores v as st of session id.
func saveState(ctx context.Context, w writes, st sessionState, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("write %s of %s: %w", st.what, id, err)
	}
	if _, err := w.ExecContext(ctx, `INSERT INTO `+st.table+` (session_id, `+st.col+`) VALUES (?, ?)
		ON CONFLICT (session_id) DO UPDATE SET `+st.col+` = excluded.`+st.col, id, string(b)); err != nil {
		return fmt.Errorf("write %s of %s: %w", st.what, id, err)
	}
	return nil
}

// applyChanged merges metadata change p into its session, field by field:
// each field keeps the write with the greatest stamp (synclog.Meta), and
// the session's updated_at the greatest time of the changes it holds.
func applyChanged(ctx context.Context, w writes, st synclog.Stamp, p *synclog.SessionChanged) error {
	cur, err := w.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("%w: a change of session %s, which this store does not hold", ErrSyncWaits, p.SessionID)
	}
	m, err := loadMeta(ctx, w, cur.ID)
	if err != nil {
		return err
	}
	before := m
	m.Apply(st, p, 0)
	var set []string
	var args []any
	col := func(name string, v any) {
		set = append(set, name+" = ?")
		args = append(args, v)
	}
	took := func(a, b synclog.Stamp) bool { return a != b }
	for _, f := range []struct {
		name          string
		before, after *synclog.Field[string]
	}{{"title", &before.Title, &m.Title}, {"description", &before.Description, &m.Description},
		{"cwd", &before.Cwd, &m.Cwd}, {"model", &before.Model, &m.Model}, {"provider", &before.Provider, &m.Provider},
		{"profile", &before.Profile, &m.Profile}, {"git_branch", &before.GitBranch, &m.GitBranch}} {
		if took(f.before.Stamp, f.after.Stamp) {
			col(f.name, f.after.Value)
		}
	}
	if took(before.Key.Stamp, m.Key.Stamp) {
		col("key", nullString(m.Key.Value))
		if m.Key.Value != "" {
			col("surface", loom.SurfaceOf(m.Key.Value))
		}
	}
	if took(before.Project.Stamp, m.Project.Stamp) {
		col("project_id", m.Project.Value.ID)
		col("project_name", m.Project.Value.Name)
		col("project_root", m.Project.Value.Root)
	}
	if took(before.Archived.Stamp, m.Archived.Stamp) {
		col("archived_at", nullTime(m.Archived.Value))
	}
	if p.At != nil {
		set = append(set, "updated_at = max(updated_at, ?)")
		args = append(args, loom.FormatTime(*p.At))
	}
	if len(set) > 0 {
		_, err := w.ExecContext(ctx, `UPDATE sessions SET `+strings.Join(set, ", ")+` WHERE id = ?`, append(args, cur.ID)...)
		if isUnique(err) {
			return &NotAppliedError{Type: p.Type(), Why: fmt.Sprintf("another session here has key %q (two machines gave one key to two sessions)", m.Key.Value)}
		}
		if err != nil {
			return fmt.Errorf("update session %s: %w", cur.ID, err)
		}
	}
	return saveMeta(ctx, w, cur.ID, m)
}

// heldMessage returns message seq of session id as the session reads
// it, and the store that holds its row, when its id is mid; otherwise
// the record that names it cannot apply here yet.
func heldMessage(ctx context.Context, w writes, t synclog.Type, id string, seq int64, mid string) (*loom.Message, string, error) {
	msgs, err := spanMessages(ctx, w, id, seq, seq, "", false, 0)
	if err != nil {
		return nil, "", err
	}
	if len(msgs) == 0 || msgs[0].ID != mid {
		return nil, "", &NotAppliedError{Type: t, Why: fmt.Sprintf(
			"session %s holds no message %s at seq %d (a rewind or a conflict moved it, or it is not here yet)", id, mid, seq)}
	}
	var store string
	if err := w.QueryRowContext(ctx, `SELECT store_id FROM spans WHERE session_id = ?1 AND first_seq <= ?2 AND last_seq >= ?2`,
		id, seq).Scan(&store); err != nil {
		return nil, "", fmt.Errorf("read spans of %s: %w", id, err)
	}
	return msgs[0], store, nil
}

// messageStamp returns the stamp of the append of message id, or of its
// latest usage update with usage; zero for a message stored before sync
// was set up.
func messageStamp(ctx context.Context, w writes, id string, usage bool) (synclog.Stamp, error) {
	var st synclog.Stamp
	var uh sql.NullInt64
	var uhost sql.NullString
	err := w.QueryRowContext(ctx, `SELECT hlc, host, usage_hlc, usage_host FROM sync_messages WHERE id = ?`, id).Scan(
		&st.HLC, &st.Host, &uh, &uhost)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read stamp of message %s: %w", id, err)
	}
	if usage && uh.Valid {
		st = synclog.Stamp{HLC: synclog.HLC(uh.Int64), Host: synclog.HostID(uhost.String)}
	}
	return st, nil
}

// applyPart merges part update p into its message: the part keeps the
// update that synclog.NewerPart ranks first.
func applyPart(ctx context.Context, w writes, st synclog.Stamp, p *synclog.PartUpdated) error {
	m, _, err := heldMessage(ctx, w, p.Type(), p.SessionID, p.Seq, p.MessageID)
	if err != nil {
		return err
	}
	// As UpdatePart: the session is as recent as the update, whether or
	// not the part keeps it (its writer's copy took it), unless it is
	// imported (as recent as its source).
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ? AND source_tool = ''`,
		loom.FormatTime(st.HLC.Wall()), m.SessionID); err != nil {
		return fmt.Errorf("update session %s: %w", m.SessionID, err)
	}
	if i := slices.IndexFunc(m.Parts, func(x loom.Part) bool { return x.ID == p.Part.ID }); i >= 0 {
		cs, err := messageStamp(ctx, w, m.ID, false)
		if err != nil {
			return err
		}
		err = w.QueryRowContext(ctx, `SELECT hlc, host FROM sync_parts WHERE message_id = ? AND part_id = ?`, m.ID, p.Part.ID).Scan(&cs.HLC, &cs.Host)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read stamp of part %s: %w", p.Part.ID, err)
		}
		if !synclog.NewerPart(m.Parts[i], cs, p.Part, st) {
			return nil
		}
	}
	if err := sqlstore.ReplacePart(m, p.SessionID, p.Seq, p.Part); err != nil {
		return err
	}
	parts, text, err := sqlstore.EncodeBody(m)
	if err != nil {
		return err
	}
	if err := sqlstore.WriteMessage(ctx, w, m.SessionID, m.Seq, sqlstore.Body{Parts: parts, Text: text}); err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	return stampPart(ctx, w, st, m.ID, p.Part.ID)
}

// applyUsage sets the usage of its message when p is the latest update
// of it.
func applyUsage(ctx context.Context, w writes, st synclog.Stamp, p *synclog.UsageUpdated) error {
	m, store, err := heldMessage(ctx, w, p.Type(), p.SessionID, p.Seq, p.MessageID)
	if err != nil {
		return err
	}
	cs, err := messageStamp(ctx, w, m.ID, true)
	if err != nil {
		return err
	}
	if !cs.Less(st) {
		return nil
	}
	if err := setUsage(ctx, w.tx, p.SessionID, store, p.Seq, m.Usage, p.Usage); err != nil {
		return err
	}
	return stampUsage(ctx, w, st, m.ID)
}

// stampPart keeps the stamp of the latest update of part pid of message
// mid.
func stampPart(ctx context.Context, w writes, st synclog.Stamp, mid, pid string) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_parts (message_id, part_id, hlc, host) VALUES (?, ?, ?, ?)
		ON CONFLICT (message_id, part_id) DO UPDATE SET hlc = excluded.hlc, host = excluded.host`,
		mid, pid, st.HLC, string(st.Host)); err != nil {
		return fmt.Errorf("stamp part %s: %w", pid, err)
	}
	return nil
}

// stampUsage keeps the stamp of the latest usage update of message mid.
func stampUsage(ctx context.Context, w writes, st synclog.Stamp, mid string) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_messages (id, hlc, host, usage_hlc, usage_host) VALUES (?1, 0, '', ?2, ?3)
		ON CONFLICT (id) DO UPDATE SET usage_hlc = ?2, usage_host = ?3`, mid, st.HLC, string(st.Host)); err != nil {
		return fmt.Errorf("stamp usage of %s: %w", mid, err)
	}
	return nil
}

// applyForked makes the fork p describes, its row as its writer made it,
// holding its parent's messages up to p.LastID, which the parent must
// hold at p.LastSeq.
func applyForked(ctx context.Context, w writes, st synclog.Stamp, p *synclog.Forked) error {
	row := p.Session
	if cur, err := w.SessionForWrite(ctx, row.ID); err != nil || cur != nil {
		return err
	}
	parent, err := w.SessionForWrite(ctx, row.ParentID)
	if err != nil {
		return err
	}
	if parent == nil {
		return fmt.Errorf("%w: fork %s of session %s, which this store does not hold", ErrSyncWaits, row.ID, row.ParentID)
	}
	if p.LastSeq > 0 {
		last, err := w.MessageID(ctx, parent.ID, p.LastSeq)
		if err != nil {
			return err
		}
		if last != p.LastID {
			return &NotAppliedError{Type: p.Type(), Why: fmt.Sprintf(
				"session %s holds no message %s at seq %d, where fork %s ends (a rewind or a conflict moved it, or it is not here yet)",
				parent.ID, p.LastID, p.LastSeq, row.ID)}
		}
	}
	spans, err := w.Spans(ctx, parent.ID)
	if err != nil {
		return err
	}
	plan := &sqlstore.ForkPlan{ID: row.ID, Key: row.Key, Title: row.Title, Turn: row.ForkTurn, LastSeq: p.LastSeq,
		LastPrompt: row.LastPrompt, SummarySeq: row.SummarySeq}
	if _, err := w.CreateFork(ctx, parent, plan, sqlstore.InheritSpans(spans, p.LastSeq, row.ID)); err != nil {
		if loom.ErrorCode(err) == loom.ECONFLICT {
			return &NotAppliedError{Type: p.Type(), Why: fmt.Sprintf("another session here has key %q (two machines gave one key to two sessions)", row.Key)}
		}
		return err
	}
	return writerRow(ctx, w, st, row)
}

// writerRow gives fork row, just made here from its parent as the parent
// is here, the metadata and times its writer's row says it took there
// and then, and stamps them.
func writerRow(ctx context.Context, w writes, st synclog.Stamp, row *loom.Session) error {
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET surface = ?, description = ?, project_id = ?, project_name = ?,
		project_root = ?, cwd = ?, model = ?, provider = ?, profile = ?, git_branch = ?, created_at = ?, updated_at = ?
		WHERE id = ?`, row.Surface, row.Description, row.Project.ID, row.Project.Name, row.Project.Root, row.Cwd, row.Model,
		row.Provider, row.Profile, row.GitBranch, loom.FormatTime(row.CreatedAt), loom.FormatTime(row.UpdatedAt), row.ID); err != nil {
		return fmt.Errorf("fork %s: %w", row.ID, err)
	}
	return saveMeta(ctx, w, row.ID, synclog.NewMeta(row, st))
}

// applyRewound takes the session p names back to message p.KeepID at
// p.KeepSeq, as sqlstore.Rewind does on its writer: every message after
// it here, including ones another host appended meanwhile, moves to the
// fork p.Fork, and the session stores its next messages under p.Store.
func (s *Store) applyRewound(ctx context.Context, w writes, st synclog.Stamp, p *synclog.Rewound) error {
	if f, err := w.SessionForWrite(ctx, p.Fork.ID); err != nil || f != nil {
		return err
	}
	cur, err := w.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("%w: a rewind of session %s, which this store does not hold", ErrSyncWaits, p.SessionID)
	}
	if err := loom.CheckNotHeld([]*loom.Session{cur}, s.holder.Owner); err != nil {
		return fmt.Errorf("%w: %w", ErrSyncWaits, err)
	}
	if err := keptHere(ctx, w, p.Type(), cur, p.KeepSeq, p.KeepID); err != nil {
		return err
	}
	// A rewind is work: a trash here that had not seen it is undone
	// after it (worked), so it applies to a session in the trash too.
	live := *cur
	live.DeletedAt = nil
	plan, err := sqlstore.PlanRewind(ctx, &live, loom.RewindOptions{Turn: p.Turn, ID: p.Fork.ID}, w)
	if err != nil {
		return err
	}
	if plan.KeepSeq != p.KeepSeq {
		return fmt.Errorf("rewind of %s to turn %d: turn %d ends at seq %d here, at %d on its writer",
			cur.ID, p.Turn, p.Turn, plan.KeepSeq, p.KeepSeq)
	}
	plan.Fork.Title, plan.Store, plan.At = p.Fork.Title, p.Store, p.At
	spans, err := w.Spans(ctx, cur.ID)
	if err != nil {
		return err
	}
	if _, err := w.StoreRewind(ctx, cur, plan,
		sqlstore.InheritSpans(spans, plan.Fork.LastSeq, plan.Fork.ID), sqlstore.InheritSpans(spans, plan.KeepSeq, plan.Store)); err != nil {
		return err
	}
	return writerRow(ctx, w, st, p.Fork)
}

// keptHere checks that session cur holds message mid at seq, where a
// record of type t says its writer's copy held it: if the message is
// not here at all, the record that appended it has not arrived yet; if
// it is somewhere else, a rewind or a conflict moved it.
func keptHere(ctx context.Context, w writes, t synclog.Type, cur *loom.Session, seq int64, mid string) error {
	id, err := w.MessageID(ctx, cur.ID, seq)
	if err != nil || id == mid {
		return err
	}
	// Every message a record brought, or this store recorded, has its
	// stamp; sync_messages is keyed by id, where messages is not.
	var held bool
	if err := w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sync_messages WHERE id = ?)`, mid).Scan(&held); err != nil {
		return fmt.Errorf("find message %s: %w", mid, err)
	}
	if !held {
		return fmt.Errorf("%w: message %s of session %s, which this store does not hold", ErrSyncWaits, mid, cur.ID)
	}
	return &NotAppliedError{Type: t, Why: fmt.Sprintf(
		"session %s holds no message %s at seq %d (a rewind or a conflict moved it)", cur.ID, mid, seq)}
}
