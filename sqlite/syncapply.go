package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// ErrSyncGap reports a record whose index is not the next one of its
// host: the records between were lost on the way, and applying past them
// would leave this store without their changes for good.
var ErrSyncGap = errors.New("sync record out of order")

// ErrSyncWaits reports a record that follows a change this store does
// not hold yet (a message, a session): it is applied after that change.
// It is synclog.ErrWait, which hub.Pull looks for.
var ErrSyncWaits = synclog.ErrWait

// NotAppliedError reports a record of a kind this loom does not know, as
// a newer loom may write. The record is never skipped: skipping it would
// make this store's copy differ from the others' for good.
type NotAppliedError struct {
	Type synclog.Type
}

func (e *NotAppliedError) Error() string {
	return fmt.Sprintf("this loom cannot apply %s records: a newer loom wrote them; update loom on this machine", e.Type)
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
		// Other processes, and this one once restarted, stamp their
		// changes after it too.
		if _, err := tx.ExecContext(ctx, syncAppliedStampSQL, int64(h.HLC)); err != nil {
			return fmt.Errorf("write sync state: %w", err)
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
	if f, ok := p.(*synclog.Fragment); ok {
		whole, err := s.fragment(ctx, w, h, f)
		if err != nil || whole == nil {
			return err
		}
		p = whole
	}
	if gone, err := forPurged(ctx, w, p); err != nil || gone {
		return err
	}
	if err := s.applyChange(ctx, w, h.Stamp(), p); err != nil {
		return err
	}
	if id := workedIn(p); id != "" {
		return worked(ctx, w, id, h.Host, h.Index)
	}
	return nil
}

// applyChange makes the change p, stamped st, to the store.
func (s *Store) applyChange(ctx context.Context, w writes, st synclog.Stamp, p synclog.Payload) error {
	switch p := p.(type) {
	case *synclog.Retired:
		return retire(ctx, w, p.Host, p.After)
	case *synclog.SessionCreated:
		return applyCreated(ctx, w, st, p)
	case *synclog.MessagesAppended:
		return s.applyAppend(ctx, w, st, p)
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
// already. When another session here has its key, the earlier claim
// keeps it (settleKey).
func applyCreated(ctx context.Context, w writes, st synclog.Stamp, p *synclog.SessionCreated) error {
	cur, err := w.SessionForWrite(ctx, p.Session.ID)
	if err != nil || cur != nil {
		return err
	}
	row, k, taken, err := keyless(ctx, w, p.Session)
	if err != nil {
		return err
	}
	if err := w.CreateSession(ctx, row); err != nil {
		return err
	}
	if err := saveMeta(ctx, w, p.Session.ID, synclog.NewMeta(p.Session, st)); err != nil {
		return err
	}
	if taken {
		return settleKey(ctx, w, k)
	}
	return nil
}

// keyless returns row, or a copy without its key when another live
// session here has it (to store first, and then give the key to the
// earlier claim: settleKey), the key's scope, and whether it was taken.
func keyless(ctx context.Context, w writes, row *loom.Session) (*loom.Session, keyScope, bool, error) {
	k := keyScope{row.UserID, row.Project.ID, row.Key}
	taken, err := keyTaken(ctx, w, k, row.ID)
	if err != nil || !taken {
		return row, k, taken, err
	}
	c := *row
	c.Key = ""
	return &c, k, true, nil
}

// applyAppend appends p's messages, keeping their ids, seq and times,
// to the session that holds the message p follows: the session p names,
// or the one a rewind or a conflict moved that message to (locate). Where
// that session holds other messages from p's seq on, two hosts appended
// at once, and one chain continues in a conflict fork (synclog.PlanAppend).
func (s *Store) applyAppend(ctx context.Context, w writes, st synclog.Stamp, p *synclog.MessagesAppended) error {
	named, err := w.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if named == nil {
		return fmt.Errorf("%w: messages for session %s, which this store does not hold", ErrSyncWaits, p.SessionID)
	}
	cur, err := locateOrWait(ctx, w, named, p.FirstSeq-1, p.PrevID)
	if err != nil {
		return err
	}
	return s.appendTo(ctx, w, st, p, named, cur, 0)
}

// maxConflictDepth bounds how many conflict forks one record goes down
// through.
const maxConflictDepth = 1000

// appendTo applies append record p, of session named, to session cur,
// which holds the message p follows, as PlanAppend says; depth is how
// many conflict forks it went down through.
func (s *Store) appendTo(ctx context.Context, w writes, st synclog.Stamp, p *synclog.MessagesAppended, named, cur *loom.Session, depth int) error {
	win, err := appendWindow(ctx, w, cur, p)
	if err != nil {
		return err
	}
	plan := synclog.PlanAppend(win, st, p)
	switch plan.Action {
	case synclog.Applied:
		return nil
	case synclog.Append:
		return appendMessages(ctx, w, st, p, plan.Skip, named, cur)
	case synclog.MoveLocal:
		kept, err := s.moveLocal(ctx, w, cur, plan)
		if err != nil {
			return err
		}
		return appendMessages(ctx, w, st, p, plan.Skip, named, kept)
	case synclog.ForkIncoming:
		if depth >= maxConflictDepth {
			return fmt.Errorf("append to %s: more than %d conflict forks deep", cur.ID, maxConflictDepth)
		}
		f, err := w.SessionForWrite(ctx, plan.Fork)
		if err == nil && f == nil {
			f, err = forkIncoming(ctx, w, cur, plan, p.Messages[plan.Skip])
		}
		if err != nil {
			return err
		}
		return s.appendTo(ctx, w, st, p, named, f, depth+1)
	}
	return fmt.Errorf("append to %s: it holds %d messages and not message %s at seq %d", cur.ID, cur.MessageCount, p.PrevID, p.FirstSeq-1)
}

// appendMessages stores p's messages from skip on in session cur, which
// ends where they start. A record makes the session it names, named, as
// recent as its time, and not a session it went to because a rewind or a
// conflict moved what it follows there (so hosts that applied the move
// and the record in either order agree on both sessions' times).
func appendMessages(ctx context.Context, w writes, st synclog.Stamp, p *synclog.MessagesAppended, skip int, named, cur *loom.Session) error {
	// ApplyAppend numbers the messages it is given: copies, so that the
	// record stays as decoded.
	msgs := make([]*loom.Message, 0, len(p.Messages)-skip)
	for _, m := range p.Messages[skip:] {
		c := *m
		msgs = append(msgs, &c)
	}
	was := cur.UpdatedAt
	cur.ApplyAppend(p.At, msgs...)
	routed := cur.ID != named.ID
	if routed || cur.UpdatedAt.Before(was) {
		// Never back in time: a change stamped later may have been
		// applied first.
		cur.UpdatedAt = was
	}
	if err := w.StoreAppend(ctx, cur, msgs); err != nil {
		return fmt.Errorf("append to %s: %w", cur.ID, err)
	}
	if err := stampMessages(ctx, w, st, msgs); err != nil {
		return err
	}
	if routed {
		if err := touch(ctx, w, named.ID, p.At); err != nil {
			return err
		}
	}
	return appendUnarchives(ctx, w, cur.ID, st)
}

// touch makes session id as recent as at, unless it is more recent or
// imported (as recent as its source).
func touch(ctx context.Context, w writes, id string, at time.Time) error {
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ? AND source_tool = ''`,
		loom.FormatTime(at), id); err != nil {
		return fmt.Errorf("update session %s: %w", id, err)
	}
	return nil
}

// appendWindow reads the rows of session cur that PlanAppend needs for
// record p.
func appendWindow(ctx context.Context, w writes, cur *loom.Session, p *synclog.MessagesAppended) (synclog.Window, error) {
	// cur holds p.PrevID at p.FirstSeq-1: locate found it there, and a
	// conflict fork shares the messages before its own with its parent.
	win := synclog.Window{Count: int64(cur.MessageCount), Prev: p.PrevID}
	if win.Count < p.FirstSeq {
		return win, nil
	}
	last := min(win.Count, p.FirstSeq+int64(len(p.Messages))-1)
	held, err := spanMessages(ctx, w, cur.ID, p.FirstSeq, last, "", false, 0)
	if err != nil {
		return win, err
	}
	for _, m := range held {
		st, err := messageStamp(ctx, w, m.ID, false)
		if err != nil {
			return win, err
		}
		win.Next = append(win.Next, synclog.Entry{ID: m.ID, Stamp: st})
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
// messages as they are. A session here already is the same source
// imported on this machine too (an imported session's id is derived from
// its source): its row merges by last writer per field
// (synclog.RowChange), and its messages as an append from seq 1
// (synclog.ImportAsAppend): the ones it holds are left alone, the ones it
// lacks appended, so the two copies are one session.
func (s *Store) applyImported(ctx context.Context, w writes, st synclog.Stamp, p *synclog.Imported) error {
	var data, held []*loom.SessionData
	for _, d := range p.Sessions {
		cur, err := w.SessionForWrite(ctx, d.Session.ID)
		if err != nil {
			return err
		}
		gone, err := purged(ctx, w, d.Session.ID)
		if err != nil {
			return err
		}
		switch {
		case gone:
		case cur == nil:
			data = append(data, d)
		default:
			held = append(held, d)
		}
	}
	if len(data) > 0 {
		if err := s.importNew(ctx, w, st, data); err != nil {
			return err
		}
	}
	for _, d := range held {
		if err := s.mergeImported(ctx, w, st, d); err != nil {
			return err
		}
	}
	return nil
}

// importNew imports data, sessions not here, as their writer did.
func (s *Store) importNew(ctx context.Context, w writes, st synclog.Stamp, data []*loom.SessionData) error {
	if err := loom.ValidateImport(data); err != nil {
		return err
	}
	// Sessions whose key another session here has are stored without
	// it, and then the earlier claim keeps it (settleKey).
	rows := make([]*loom.SessionData, len(data))
	var clashes []keyScope
	for i, d := range data {
		row, k, taken, err := keyless(ctx, w, d.Session)
		if err != nil {
			return err
		}
		rows[i] = d
		if taken {
			c := *d
			c.Session = row
			rows[i] = &c
			clashes = append(clashes, k)
		}
	}
	if err := s.importTx(ctx, w.tx, rows); err != nil {
		return err
	}
	if err := stampImported(ctx, w, st, data); err != nil {
		return err
	}
	for _, k := range clashes {
		if err := settleKey(ctx, w, k); err != nil {
			return err
		}
	}
	return nil
}

// fragment keeps fragment f of host h.Host until the last one has
// arrived; then it returns the record they make, which applies under
// the last one's header (the index that marks the change's work), and
// lets them go. Fragments apply in index order like any record, so the
// ones before the last are the host's records just before it.
func (s *Store) fragment(ctx context.Context, w writes, h synclog.Header, f *synclog.Fragment) (synclog.Payload, error) {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_fragments (host, idx, data) VALUES (?, ?, ?)
		ON CONFLICT (host, idx) DO UPDATE SET data = excluded.data`, string(h.Host), h.Index, f.Data); err != nil {
		return nil, fmt.Errorf("keep fragment %d of %d: %w", f.Part, f.Of, err)
	}
	if f.Part < f.Of {
		return nil, nil
	}
	first := h.Index - uint64(f.Of) + 1
	rows, err := w.QueryContext(ctx, `SELECT idx, data FROM sync_fragments WHERE host = ? AND idx BETWEEN ? AND ? ORDER BY idx`,
		string(h.Host), first, h.Index)
	if err != nil {
		return nil, fmt.Errorf("read fragments: %w", err)
	}
	var frags []*synclog.Fragment
	for rows.Next() {
		var idx uint64
		x := &synclog.Fragment{Of: f.Of}
		if err := rows.Scan(&idx, &x.Data); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read fragments: %w", err)
		}
		x.Part = uint32(idx - first + 1)
		frags = append(frags, x)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("read fragments: %w", err)
	}
	if len(frags) != int(f.Of) {
		return nil, fmt.Errorf("%w: record %d of host %s is the last of %d fragments, and %d of them are here", synclog.ErrCorrupt, h.Index, h.Host, f.Of, len(frags))
	}
	p, err := synclog.Join(frags)
	if err != nil {
		return nil, err
	}
	if _, err := w.ExecContext(ctx, `DELETE FROM sync_fragments WHERE host = ? AND idx <= ?`, string(h.Host), h.Index); err != nil {
		return nil, fmt.Errorf("let fragments go: %w", err)
	}
	return p, nil
}

// mergeImported merges imported session d, stamped st, into the session
// with its id here.
func (s *Store) mergeImported(ctx context.Context, w writes, st synclog.Stamp, d *loom.SessionData) error {
	if err := loom.ValidateImport([]*loom.SessionData{d}); err != nil {
		return err
	}
	if err := mergeChange(ctx, w, d.Session.ID, st, synclog.RowChange(d.Session), 0); err != nil {
		return err
	}
	p := synclog.ImportAsAppend(d)
	if p == nil {
		return nil
	}
	cur, err := w.SessionForWrite(ctx, d.Session.ID)
	if err != nil {
		return err
	}
	return s.appendTo(ctx, w, st, p, cur, cur, 0)
}
