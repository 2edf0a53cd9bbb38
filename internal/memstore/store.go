// Package memstore is a store engine that keeps everything in memory:
// the steps sessionstore's write and sync rules call, each with the
// meaning the SQLite engine gives it, over Go maps under one mutex. It
// is for testing the rules (sessionstore's tests run the sync rules over
// it, machines and a hub in one process, in milliseconds), not a store
// anyone keeps sessions in: it has no search, no usage report and no
// files. What keeps the real engines to the same meaning is the
// conformance suite, which runs on them.
//
// Its transaction serves every role of sessionstore.Tx, as SQLite's
// does: SessionSteps 12, BodySteps 9, ForkSteps 8, TrashSteps 6,
// ImportSteps 3, PromptTx 1, Ender 1, LogRows 12, ApplySteps 8,
// MergeSteps 9, LineageSteps 6, StampSteps 8, KeySteps 4, FragmentSteps
// 3, HistorySteps 2 (the number is the role's methods).
package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// Store is a store in memory: its writes are sessionstore's, over this
// engine's transactions, and its reads a few the rules' tests need,
// named as sqlite.Store's are.
type Store struct {
	*sessionstore.Store
	*sessionstore.Replica

	// Now returns the current time; tests replace it.
	Now func() time.Time
	// LeaseTTL is how long this handle's locks stay trusted by handles
	// on other hosts without renewal.
	LeaseTTL time.Duration

	holder sessionstore.Holder
	clock  *synclog.Clock

	// mu is held by a transaction from its beginning to its end, and by
	// each read.
	mu sync.Mutex
	st *state
}

// New returns an empty store, its writes set as opts say.
func New(opts ...sessionstore.Option) *Store {
	s := &Store{Now: loom.Now, LeaseTTL: loom.LeaseTTL, holder: sessionstore.NewHolder(), st: newState()}
	s.clock = synclog.NewClock(func() time.Time { return s.Now() }, 0)
	s.Store = sessionstore.New(engine{s}, opts...)
	s.Replica = sessionstore.NewReplica(engine{s})
	return s
}

// engine is the store as sessionstore's writes take it.
type engine struct{ s *Store }

var (
	_ sessionstore.Engine        = engine{}
	_ sessionstore.ReplicaEngine = engine{}
)

// begin starts a write transaction: it holds the mutex until it ends,
// and keeps a copy of the state to go back to.
func (s *Store) begin() *tx {
	s.mu.Lock()
	return &tx{s: s, st: s.st, saved: s.st.clone()}
}

// Begin implements sessionstore.Engine and sessionstore.ReplicaEngine:
// a transaction serving every role of sessionstore.Tx.
func (e engine) Begin(ctx context.Context) (sessionstore.Tx, error) {
	return e.s.begin().steps(), nil
}

// BeginPut implements sessionstore.Engine.
func (e engine) BeginPut(ctx context.Context) (sessionstore.PutWrites, error) {
	return e.s.begin(), nil
}

// Now implements sessionstore.Engine.
func (e engine) Now() time.Time { return e.s.Now() }

// Holder implements sessionstore.Locker.
func (e engine) Holder() sessionstore.Holder { return e.s.holder }

// LeaseTTL implements sessionstore.Locker.
func (e engine) LeaseTTL() time.Duration { return e.s.LeaseTTL }

// BeginLock implements sessionstore.Locker.
func (e engine) BeginLock(ctx context.Context) (sessionstore.LockWrites, error) {
	return e.s.begin(), nil
}

// ExtendLock implements sessionstore.Locker.
func (e engine) ExtendLock(ctx context.Context, id string, expires time.Time) (bool, error) {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	l, ok := e.s.st.locks[id]
	if !ok || l.Owner != e.s.holder.Owner {
		return false, nil
	}
	l.Expires = stored(expires)
	e.s.st.locks[id] = l
	return true, nil
}

// DropLock implements sessionstore.Locker.
func (e engine) DropLock(ctx context.Context, id string) error {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	if l, ok := e.s.st.locks[id]; ok && l.Owner == e.s.holder.Owner {
		delete(e.s.st.locks, id)
	}
	return nil
}

// InsertToken implements sessionstore.Grants.
func (e engine) InsertToken(ctx context.Context, t *loom.Token, hash string) error {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	for _, o := range e.s.st.tokens {
		if o.hash == hash {
			return loom.Errorf(loom.ECONFLICT, "a token with that secret exists")
		}
	}
	if _, ok := e.s.st.tokens[t.ID]; ok {
		return loom.Errorf(loom.ECONFLICT, "token %s exists", t.ID)
	}
	e.s.st.tokens[t.ID] = token{t: *t, hash: hash}
	return nil
}

// MarkTokenRevoked implements sessionstore.Grants.
func (e engine) MarkTokenRevoked(ctx context.Context, id string, now time.Time) (bool, error) {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	t, ok := e.s.st.tokens[id]
	if !ok {
		return false, nil
	}
	if t.t.RevokedAt == nil {
		t.t.RevokedAt = storedPtr(&now)
		e.s.st.tokens[id] = t
	}
	return true, nil
}

// InsertShare implements sessionstore.Grants.
func (e engine) InsertShare(ctx context.Context, sh *loom.Share, blob []byte, now time.Time) error {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	for id, o := range e.s.st.shares {
		if o.blob != nil && !o.sh.ExpiresAt.After(stored(now)) {
			o.blob = nil
			e.s.st.shares[id] = o
		}
	}
	if _, ok := e.s.st.shares[sh.ID]; ok {
		return loom.Errorf(loom.ECONFLICT, "share %s exists", sh.ID)
	}
	e.s.st.shares[sh.ID] = share{sh: *sh, blob: slices.Clone(blob)}
	return nil
}

// MarkShareRevoked implements sessionstore.Grants.
func (e engine) MarkShareRevoked(ctx context.Context, user, id string, now time.Time) (bool, error) {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	o, ok := e.s.st.shares[id]
	if !ok || o.sh.UserID != user {
		return false, nil
	}
	if o.sh.RevokedAt == nil {
		o.sh.RevokedAt = storedPtr(&now)
	}
	o.blob = nil
	e.s.st.shares[id] = o
	return true, nil
}

// session returns row x as the store reads it: with its lock when the
// lock still binds anyone.
func (s *Store) session(st *state, x loom.Session) *loom.Session {
	out := x
	out.DeletedAt, out.ArchivedAt = storedPtr(x.DeletedAt), storedPtr(x.ArchivedAt)
	if x.Source != nil {
		src := *x.Source
		out.Source = &src
	}
	if l, ok := st.locks[x.ID]; ok && s.holder.Live(&l, s.Now(), sqlstore.Alive) {
		out.Lock = &l
	}
	return &out
}

// sessionIn returns session id of st; ENOTFOUND when there is none.
func (s *Store) sessionIn(st *state, id string) (*loom.Session, error) {
	x, ok := st.sessions[id]
	if !ok {
		return nil, loom.NotFound(id)
	}
	return s.session(st, x), nil
}

// Session implements loom.Store: session id, in the trash or not.
func (s *Store) Session(ctx context.Context, id string) (*loom.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionIn(s.st, id)
}

// Sessions returns the sessions f selects, newest first, as
// loom.Store's Sessions does; of f it reads the user, project, key,
// parent, kind, trash and archive filters and the limit only, and
// refuses a text.
func (s *Store) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	if f.Text != "" || f.Before != nil {
		return nil, loom.Errorf(loom.EINVALID, "the memory store lists sessions without a text or a cursor")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*loom.Session
	for _, x := range s.st.sessions {
		switch {
		case f.UserID != "" && x.UserID != f.UserID,
			f.ProjectID != "" && x.Project.ID != f.ProjectID,
			f.Key != "" && x.Key != f.Key,
			f.ParentID != "" && x.ParentID != f.ParentID,
			f.Kind != "" && x.Kind != f.Kind,
			f.Deleted != (x.DeletedAt != nil),
			f.Archived == loom.HideArchived && x.ArchivedAt != nil,
			f.Archived == loom.OnlyArchived && x.ArchivedAt == nil:
			continue
		}
		out = append(out, s.session(s.st, x))
	}
	slices.SortFunc(out, func(a, b *loom.Session) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return compareDesc(a.ID, b.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

func compareDesc(a, b string) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// Messages implements loom.Store's Messages: the session's messages as
// it reads them through its spans (none for a session not here).
func (s *Store) Messages(ctx context.Context, id string, q loom.MessageQuery) ([]*loom.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lo, hi := sqlstore.Window(q)
	all, err := s.st.messages(id, lo, hi)
	if err != nil {
		return nil, err
	}
	var msgs []*loom.Message
	for _, m := range all {
		if q.Turn == 0 || m.Turn == q.Turn {
			msgs = append(msgs, m)
		}
	}
	if q.Limit > 0 && len(msgs) > q.Limit {
		if q.Oldest {
			msgs = msgs[:q.Limit]
		} else {
			msgs = msgs[len(msgs)-q.Limit:]
		}
	}
	return msgs, nil
}

// SyncHost returns this store's host id in sync, "" when sync is not
// set up on it.
func (s *Store) SyncHost(ctx context.Context) (synclog.HostID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.host, nil
}

// SyncLog returns up to limit records of the store's sync log after
// index after, in order: the current host's records.
func (s *Store) SyncLog(ctx context.Context, after int64, limit int) ([]synclog.LogRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []synclog.LogRecord
	for i := s.st.base + after; i < int64(len(s.st.log)) && len(out) < limit; i++ {
		r := s.st.log[i]
		out = append(out, synclog.LogRecord{Index: i + 1 - s.st.base, HLC: r.hlc, Payload: slices.Clone(r.payload)})
	}
	return out, nil
}

// SyncLast returns the index of the last record of the store's own sync
// log, 0 when it has none.
func (s *Store) SyncLast(ctx context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.st.log)) - s.st.base, nil
}

// SyncApplied returns what the store has applied of each other host's
// log: the index of the last record of each.
func (s *Store) SyncApplied(ctx context.Context) (synclog.Vector, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := synclog.Vector{}
	for h, i := range s.st.applied {
		v[h] = i
	}
	return v, nil
}

// SyncRetired returns the hosts whose logs stop (synclog.Retired), with
// the index after which they do.
func (s *Store) SyncRetired(ctx context.Context) (map[synclog.HostID]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[synclog.HostID]int64{}
	for h, i := range s.st.retired {
		out[h] = i
	}
	return out, nil
}

// SyncConflicts returns the conflict forks the store holds, each with
// the host that wrote its first own message ("" when that is not
// known), by id.
func (s *Store) SyncConflicts(ctx context.Context) ([]sessionstore.Conflict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sessionstore.Conflict
	for id, f := range s.st.forks {
		c, ok := s.st.sessions[id]
		p, pok := s.st.sessions[f.parent]
		if f.kind != sessionstore.ConflictFork || !ok || !pok {
			continue
		}
		x := sessionstore.Conflict{ID: id, Title: c.Title, Session: f.parent, SessionTitle: p.Title}
		if first := s.st.through(id, f.base+1, f.base+1); len(first) > 0 {
			x.Host = s.st.stamps[first[0].r.id].st.Host
		}
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b sessionstore.Conflict) int { return compareDesc(b.ID, a.ID) })
	return out, nil
}

// Search implements synctest.Store: the store in memory keeps no
// search index, and says so.
func (s *Store) Search(context.Context, loom.SearchQuery) ([]loom.SearchHit, error) {
	return nil, fmt.Errorf("the store in memory does not search: %w", errors.ErrUnsupported)
}
