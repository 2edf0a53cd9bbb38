package sqlstore

import "github.com/loomhq/loom"

// ReadSessions is the loop of loom.Store.ReadSessions for both engines,
// run inside the engine's read transaction: each session of ids with its
// messages (as session and messages read them there), in the order of
// ids, leaving out the sessions that do not exist.
func ReadSessions(ids []string, session func(id string) (*loom.Session, error), messages func(id string) ([]*loom.Message, error)) ([]*loom.SessionData, error) {
	out := make([]*loom.SessionData, 0, len(ids))
	for _, id := range ids {
		x, err := session(id)
		if loom.ErrorCode(err) == loom.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, err
		}
		msgs, err := messages(x.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, &loom.SessionData{Session: x, Messages: msgs})
	}
	return out, nil
}
