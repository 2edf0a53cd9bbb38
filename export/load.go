package export

import (
	"context"

	"github.com/loomhq/loom"
)

// Store is what an export reads from: a part of loom.Store.
type Store interface {
	Family(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error)
	Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error)
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
	return Load(ctx, st, family)
}

// Load reads every message of each session.
func Load(ctx context.Context, st Store, sessions []*loom.Session) ([]*loom.SessionData, error) {
	data := make([]*loom.SessionData, 0, len(sessions))
	for _, s := range sessions {
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
		if err != nil {
			return nil, err
		}
		data = append(data, &loom.SessionData{Session: s, Messages: msgs})
	}
	return data, nil
}
