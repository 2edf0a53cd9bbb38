package export

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
)

// Unreadable is a session that could not be read, and why.
type Unreadable struct {
	ID  string
	Err error
}

// Store is what an export reads from: a part of loom.Store.
type Store interface {
	Family(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error)
	ReadSessions(ctx context.Context, ids []string, q loom.MessageQuery) ([]*loom.SessionData, error)
}

// Family reads what an export of one session holds: root, then its
// sub-agent sessions of user depth first (each parent's children oldest
// first, read in one store query), each with all its messages.
func Family(ctx context.Context, st Store, user string, root *loom.Session) ([]*loom.SessionData, error) {
	family, err := st.Family(ctx, loom.FamilyQuery{IDs: []string{root.ID}, UserID: user, SubagentsOnly: true})
	if err != nil {
		return nil, err
	}
	if len(family) == 0 || family[0].ID != root.ID {
		// The session left the store (or the trash took it) since it
		// was found.
		return nil, loom.NotFound(root.ID)
	}
	data, err := Load(ctx, st, family)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 || data[0].Session.ID != root.ID {
		return nil, loom.NotFound(root.ID)
	}
	return data, nil
}

// Load reads each session again with every one of its messages, all in
// one snapshot of the store (see loom.Store.ReadSessions), so that what
// an export says of a session (its counts, its usage) is what it holds,
// even while the session is written. A session removed since it was
// listed is left out.
func Load(ctx context.Context, st Store, sessions []*loom.Session) ([]*loom.SessionData, error) {
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	data, err := st.ReadSessions(ctx, ids, loom.MessageQuery{})
	if err != nil {
		return nil, err
	}
	// An export that import would refuse is no backup: a message a
	// damaged store lost is said here, not when the file is imported.
	for _, d := range data {
		for i, m := range d.Messages {
			if m.Seq != int64(i+1) {
				return nil, fmt.Errorf("session %s: message %d is missing from the store", d.Session.ID, i+1)
			}
		}
	}
	if data == nil {
		data = []*loom.SessionData{}
	}
	return data, nil
}

// Rescue is what LoadReadable could read of a damaged store.
type Rescue struct {
	// Salvaged are sessions read with loom.MessageQuery.Salvage: some of
	// their messages are notes saying they could not be read (Err says
	// why the first could not).
	Salvaged []Unreadable
	// Left are sessions left out: they could not be read at all, or are
	// sub-agent sessions of one that could not (an import needs a
	// sub-agent session's parent).
	Left []Unreadable
}

// LoadReadable is Load for a store that may be damaged: when the
// sessions cannot all be read, each is read again on its own, salvaging
// messages whose stored parts no longer decode (loom.MessageQuery.Salvage)
// and leaving out sessions that still cannot be read (a page the engine
// reports malformed), with their sub-agent sessions. A cancelled ctx
// still fails the whole load. sessions must be in Order.
func LoadReadable(ctx context.Context, st Store, sessions []*loom.Session) ([]*loom.SessionData, Rescue, error) {
	data, err := Load(ctx, st, sessions)
	if err == nil || ctx.Err() != nil {
		return data, Rescue{}, err
	}
	data = []*loom.SessionData{}
	var r Rescue
	left := map[string]bool{}
	for _, s := range sessions {
		if s.Kind == loom.KindSubagent && left[s.ParentID] {
			left[s.ID] = true
			r.Left = append(r.Left, Unreadable{ID: s.ID, Err: fmt.Errorf("a sub-agent session of %s, which could not be read", s.ParentID)})
			continue
		}
		one, salvaged, err := readRescued(ctx, st, s.ID)
		if ctx.Err() != nil {
			return nil, Rescue{}, ctx.Err()
		}
		if err != nil {
			left[s.ID] = true
			r.Left = append(r.Left, Unreadable{ID: s.ID, Err: err})
			continue
		}
		if salvaged != nil {
			r.Salvaged = append(r.Salvaged, Unreadable{ID: s.ID, Err: salvaged})
		}
		data = append(data, one...)
	}
	return data, r, nil
}

// readRescued reads session id on its own, salvaging messages whose
// parts do not decode and putting notes in the place of lost ones;
// salvaged says what it could not read as stored, nil when nothing.
func readRescued(ctx context.Context, st Store, id string) (data []*loom.SessionData, salvaged, err error) {
	data, err = st.ReadSessions(ctx, []string{id}, loom.MessageQuery{})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		salvaged = err
		if data, err = st.ReadSessions(ctx, []string{id}, loom.MessageQuery{Salvage: true}); err != nil {
			return nil, nil, err
		}
	}
	for _, d := range data {
		n, first := fillGaps(d)
		if n < 0 {
			return nil, nil, fmt.Errorf("%s: its message numbers are damaged (%d messages, the last numbered %d)",
				id, len(d.Messages), d.Messages[len(d.Messages)-1].Seq)
		}
		if n > 0 {
			gaps := fmt.Errorf("%d of its messages missing from the store, the first message %d", n, first)
			if salvaged == nil {
				salvaged = gaps
			} else {
				salvaged = fmt.Errorf("%w; %w", salvaged, gaps)
			}
		}
	}
	return data, salvaged, nil
}

// maxLost is the most messages fillGaps puts notes for in one session:
// a seq read from a damaged page may be any number.
const maxLost = 100_000

// fillGaps puts a note in the place of each message of d that a damaged
// store lost (a row or its body gone with a page) before its last one,
// so that seq runs 1, 2, 3 … without gaps again and the rescue imports.
// It returns how many it put, and the first one's seq; -1 when there
// would be more than maxLost. (Messages lost after the last are not
// guessed from the session's count, which a damaged row may hold wrong.)
func fillGaps(d *loom.SessionData) (n int, first int64) {
	if len(d.Messages) == 0 {
		return 0, 0
	}
	total := d.Messages[len(d.Messages)-1].Seq
	if total == int64(len(d.Messages)) {
		return 0, 0
	}
	if total > int64(len(d.Messages))+maxLost {
		return -1, 0
	}
	filled := make([]*loom.Message, 0, total)
	next := 0
	for seq := int64(1); seq <= total; seq++ {
		if next < len(d.Messages) && d.Messages[next].Seq == seq {
			filled = append(filled, d.Messages[next])
			next++
			continue
		}
		// The note stands where the lost message stood: after the one
		// before it, in its turn.
		at, turn := d.Session.CreatedAt, 0
		if len(filled) > 0 {
			prev := filled[len(filled)-1]
			at, turn = prev.CreatedAt, prev.Turn
		}
		filled = append(filled, &loom.Message{ID: loom.NewID(), SessionID: d.Session.ID, Seq: seq,
			Role: loom.RoleSystem, Turn: turn, CreatedAt: at, CompletedAt: &at,
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText,
				Text: "[loom could not read this message: it is missing from the damaged store]"}}})
		if n++; n == 1 {
			first = seq
		}
	}
	// A message out of order (which the store's reads never give) is
	// kept, after.
	filled = append(filled, d.Messages[next:]...)
	d.Messages = filled
	return n, first
}
