package export

import (
	"context"

	"github.com/loomhq/loom"
)

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
	if data == nil {
		data = []*loom.SessionData{}
	}
	return data, nil
}
