package memstore

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// state is everything a store holds, as the SQLite engine's tables hold
// it. Values held in its maps are never changed in place (a write puts a
// new value), nor are the spans' slices, so that a copy of each map
// (clone) is a snapshot a failed transaction goes back to.
type state struct {
	// sessions are the rows of sessions, each without its lock.
	sessions map[string]loom.Session
	// rows are the stored messages, by the store they are stored under
	// (a session's own id, or another's it reads: span.Span) and
	// seq; each names its body.
	rows map[string]map[int64]row
	// bodies are what messages say, by id; rows copied share one.
	bodies   map[int64]sqlstore.Body
	lastBody int64
	// spans are how each session reads its messages.
	spans map[string][]span.Span
	locks map[string]loom.Lock

	files  map[[2]string]loom.ImportedFile // by user and path
	calls  map[[2]string]string            // the session counting a user's call
	tokens map[string]token
	shares map[string]share
	// hub is the records a hub's put stored, by user and host, in
	// index order.
	hub map[[2]string][]loom.SyncRecord

	// host is the store's host id once sync is set up, base how many
	// rows of the log are of hosts it was before.
	host synclog.HostID
	base int64
	// log is the store's sync log: row i+1 is log[i].
	log []logRow
	// appliedHLC is the latest stamp of the records applied.
	appliedHLC synclog.HLC
	applied    map[synclog.HostID]int64
	retired    map[synclog.HostID]int64
	meta, life map[string]string
	// purgeKept is sync_purge_kept: a purge's stamp and view per session
	// it took, kept after the session's row is gone.
	purgeKept  map[string]string
	stamps     map[string]msgStamp
	partStamps map[[2]string]synclog.Stamp
	purged     map[string]bool
	forks      map[string]fork
	fragments  map[fragKey][]byte
}

// row is a stored message.
type row struct {
	id, role        string
	turn            int
	body            int64
	model, provider string
	usage           loom.Usage
	err             *string // the error as sqlstore.EncodeError stores it
	created         time.Time
	completed       *time.Time
}

type logRow struct {
	hlc     synclog.HLC
	payload []byte
}

// msgStamp is the stamp of a message's append, and of its latest usage
// update.
type msgStamp struct {
	st    synclog.Stamp
	usage *synclog.Stamp
}

type fork struct {
	parent string
	base   int64
	kind   sessionstore.ForkKind
}

type fragKey struct {
	host synclog.HostID
	idx  int64
}

type token struct {
	t    loom.Token
	hash string
}

type share struct {
	sh   loom.Share
	blob []byte
}

func newState() *state {
	return &state{
		sessions: map[string]loom.Session{}, rows: map[string]map[int64]row{}, bodies: map[int64]sqlstore.Body{},
		spans: map[string][]span.Span{}, locks: map[string]loom.Lock{},
		files: map[[2]string]loom.ImportedFile{}, calls: map[[2]string]string{},
		tokens: map[string]token{}, shares: map[string]share{}, hub: map[[2]string][]loom.SyncRecord{},
		applied: map[synclog.HostID]int64{}, retired: map[synclog.HostID]int64{},
		meta: map[string]string{}, life: map[string]string{}, purgeKept: map[string]string{}, stamps: map[string]msgStamp{},
		partStamps: map[[2]string]synclog.Stamp{}, purged: map[string]bool{}, forks: map[string]fork{},
		fragments: map[fragKey][]byte{},
	}
}

// clone returns a copy of st that no write to st changes.
func (st *state) clone() *state {
	c := *st
	c.sessions = maps.Clone(st.sessions)
	c.rows = make(map[string]map[int64]row, len(st.rows))
	for k, v := range st.rows {
		c.rows[k] = maps.Clone(v)
	}
	c.bodies = maps.Clone(st.bodies)
	c.spans = maps.Clone(st.spans)
	c.locks = maps.Clone(st.locks)
	c.files = maps.Clone(st.files)
	c.calls = maps.Clone(st.calls)
	c.tokens = maps.Clone(st.tokens)
	c.shares = maps.Clone(st.shares)
	c.hub = maps.Clone(st.hub)
	c.log = slices.Clone(st.log)
	c.applied = maps.Clone(st.applied)
	c.retired = maps.Clone(st.retired)
	c.meta = maps.Clone(st.meta)
	c.life = maps.Clone(st.life)
	c.purgeKept = maps.Clone(st.purgeKept)
	c.stamps = maps.Clone(st.stamps)
	c.partStamps = maps.Clone(st.partStamps)
	c.purged = maps.Clone(st.purged)
	c.forks = maps.Clone(st.forks)
	c.fragments = maps.Clone(st.fragments)
	return &c
}

// stored returns t as the SQLite engine stores a time: UTC, to the
// millisecond (loom.FormatTime).
func stored(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// storedPtr is stored of *t, nil for nil.
func storedPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := stored(*t)
	return &v
}

// sameTime reports whether a and b are stored as the same value (both
// nil included).
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return stored(*a).Equal(stored(*b))
}

// normal returns x as a row keeps it: no lock, times as stored, a
// source without a tool as none.
func normal(x loom.Session) loom.Session {
	x.Lock = nil
	x.CreatedAt, x.UpdatedAt = stored(x.CreatedAt), stored(x.UpdatedAt)
	x.DeletedAt, x.ArchivedAt = storedPtr(x.DeletedAt), storedPtr(x.ArchivedAt)
	if x.Source != nil {
		if x.Source.Tool == "" {
			x.Source = nil
		} else {
			src := *x.Source
			x.Source = &src
		}
	}
	return x
}

// live reports whether row x is out of the trash.
func live(x loom.Session) bool { return x.DeletedAt == nil }

// insertSession adds row x, as its insert into sessions does: ECONFLICT
// when its id or, live, its key is taken. A new session reads its own
// rows; rows already stored under its id are a purged session's that
// others still read, and move to a name of their own first.
func (st *state) insertSession(x loom.Session) error {
	x = normal(x)
	if _, ok := st.sessions[x.ID]; ok {
		return loom.Errorf(loom.ECONFLICT, "a session with id %s already exists", x.ID)
	}
	if err := st.checkKey(x); err != nil {
		return err
	}
	st.sessions[x.ID] = x
	var readers []string
	for id, spans := range st.spans {
		for _, sp := range spans {
			if sp.RowsOf == x.ID {
				readers = append(readers, id)
				break
			}
		}
	}
	if len(readers) > 0 {
		moved := slices.Min(readers) + "/" + x.ID
		st.rows[moved] = st.rows[x.ID]
		delete(st.rows, x.ID)
		for id, spans := range st.spans {
			out := slices.Clone(spans)
			for i := range out {
				if out[i].RowsOf == x.ID {
					out[i].RowsOf = moved
				}
			}
			st.spans[id] = out
		}
	}
	st.spans[x.ID] = []span.Span{{First: 1, Last: span.OpenSeq, RowsOf: x.ID}}
	return nil
}

// checkKey fails with ECONFLICT when x, live with a key, would share it
// with another live session of its user's project (of the same team and
// member: a teammate's session keeps its member's own key).
func (st *state) checkKey(x loom.Session) error {
	if x.Key == "" || !live(x) {
		return nil
	}
	for id, o := range st.sessions {
		if id != x.ID && live(o) && o.Key == x.Key && o.UserID == x.UserID && o.Project.ID == x.Project.ID &&
			o.Team == x.Team && o.Member == x.Member {
			return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", x.Key)
		}
	}
	return nil
}

// put replaces row x, which exists, checking its key.
func (st *state) put(x loom.Session) error {
	x = normal(x)
	if err := st.checkKey(x); err != nil {
		return err
	}
	st.sessions[x.ID] = x
	return nil
}

// deleteSession removes session id as deleting its row does: its spans,
// and with them the rows no other session reads, its lock, and what
// sync keeps of it beside the row.
func (st *state) deleteSession(id string) {
	if _, ok := st.sessions[id]; !ok {
		return
	}
	delete(st.sessions, id)
	gone := st.spans[id]
	delete(st.spans, id)
	for _, sp := range gone {
		rows := st.rows[sp.RowsOf]
		if len(rows) == 0 {
			continue
		}
		var drop []int64
		for seq := range rows {
			if seq >= sp.First && seq <= sp.Last && !st.read(sp.RowsOf, seq) {
				drop = append(drop, seq)
			}
		}
		for _, seq := range drop {
			delete(rows, seq)
		}
		st.setRows(sp.RowsOf, rows)
	}
	delete(st.locks, id)
	delete(st.meta, id)
	delete(st.life, id)
	delete(st.forks, id)
	for k, s := range st.calls {
		if s == id {
			delete(st.calls, k)
		}
	}
}

// setRows replaces the rows stored under store.
func (st *state) setRows(store string, rows map[int64]row) {
	if len(rows) == 0 {
		delete(st.rows, store)
		return
	}
	st.rows[store] = rows
}

// putRow stores r as row seq of store: an error when there is one.
func (st *state) putRow(store string, seq int64, r row) error {
	rows := st.rows[store]
	if _, ok := rows[seq]; ok {
		return loom.Errorf(loom.ECONFLICT, "message %d of %s is stored already", seq, store)
	}
	if rows == nil {
		rows = map[int64]row{}
		st.rows[store] = rows
	}
	rows[seq] = r
	return nil
}

// setRow replaces row seq of store, which exists.
func (st *state) setRow(store string, seq int64, r row) { st.rows[store][seq] = r }

// read reports whether a span of any session reads row seq of store.
func (st *state) read(store string, seq int64) bool {
	for _, spans := range st.spans {
		for _, sp := range spans {
			if sp.RowsOf == store && sp.First <= seq && seq <= sp.Last {
				return true
			}
		}
	}
	return false
}

// newBody keeps b as a body of its own and returns its id.
func (st *state) newBody(b sqlstore.Body) int64 {
	st.lastBody++
	st.bodies[st.lastBody] = b
	return st.lastBody
}

// newRow returns m as stored under a body of its own.
func (st *state) newRow(m *loom.Message) (row, error) {
	parts, text, err := sqlstore.EncodeBody(m)
	if err != nil {
		return row{}, err
	}
	r := row{id: m.ID, role: m.Role, turn: m.Turn, body: st.newBody(sqlstore.Body{Parts: parts, Text: text}),
		model: m.Model, provider: m.Provider, usage: m.Usage, created: stored(m.CreatedAt), completed: storedPtr(m.CompletedAt)}
	if e := sqlstore.EncodeError(m.Error); e != nil {
		s := e.(string)
		r.err = &s
	}
	return r, nil
}

// located is a message as a session reads it: where its row is stored.
type located struct {
	store string
	seq   int64
	r     row
}

// through returns the messages lo to hi of session id as it reads them
// through its spans, in seq order.
func (st *state) through(id string, lo, hi int64) []located {
	var out []located
	for _, sp := range st.spans[id] {
		from, to := max(sp.First, lo), min(sp.Last, hi)
		if from > to {
			continue
		}
		rows := st.rows[sp.RowsOf]
		seqs := make([]int64, 0, len(rows))
		for seq := range rows {
			if seq >= from && seq <= to {
				seqs = append(seqs, seq)
			}
		}
		slices.Sort(seqs)
		for _, seq := range seqs {
			out = append(out, located{sp.RowsOf, seq, rows[seq]})
		}
	}
	return out
}

// message returns row r, seq seq, as a message of session id.
func (st *state) message(id string, seq int64, r row) (*loom.Message, error) {
	b := st.bodies[r.body]
	parts, err := sqlstore.DecodeParts([]byte(b.Parts))
	if err != nil {
		return nil, err
	}
	// The search text is given back only to parts stored as a body that
	// keeps it once (see sqlstore.EncodeBody).
	if strings.HasSuffix(b.Parts, sqlstore.TextOnlyEnds[0]) || strings.HasSuffix(b.Parts, sqlstore.TextOnlyEnds[1]) {
		sqlstore.JoinText(parts, []byte(b.Text))
	}
	m := &loom.Message{ID: r.id, SessionID: id, Seq: seq, Role: r.role, Parts: parts, Model: r.model, Provider: r.provider,
		Usage: r.usage, CreatedAt: r.created, CompletedAt: storedPtr(r.completed), Turn: r.turn}
	if r.err != nil {
		m.Error = sqlstore.DecodeError([]byte(*r.err), true)
	}
	return m, nil
}

// messages returns messages lo to hi of session id as it reads them.
func (st *state) messages(id string, lo, hi int64) ([]*loom.Message, error) {
	var out []*loom.Message
	for _, l := range st.through(id, lo, hi) {
		m, err := st.message(id, l.seq, l.r)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// family returns session id and its sub-agent sessions, of every
// generation, sorted by id.
func (st *state) family(id string) []string {
	fam := []string{id}
	seen := map[string]bool{id: true}
	for i := 0; i < len(fam); i++ {
		for cid, c := range st.sessions {
			if c.ParentID == fam[i] && c.Kind == loom.KindSubagent && !seen[cid] {
				seen[cid] = true
				fam = append(fam, cid)
			}
		}
	}
	slices.Sort(fam)
	return fam
}

// usageOf sums the usage of messages from to to of session id.
func (st *state) usageOf(id string, from, to int64) loom.Usage {
	var u loom.Usage
	for _, l := range st.through(id, from, to) {
		u.Add(l.r.usage)
	}
	return u
}

// oldestFirst sorts sessions by the time at gives, then by id.
func oldestFirst(sessions []*loom.Session, at func(*loom.Session) time.Time) {
	slices.SortFunc(sessions, func(a, b *loom.Session) int {
		if c := at(a).Compare(at(b)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
