package sessionstore

import (
	"time"

	"github.com/loomhq/loom"
)

// Repair collects what Store.RepairInterrupted changes: the messages of a
// session's last turn whose tool parts were left unfinished by a process
// that died, already repaired (RepairInterrupted). Only the last turn can
// hold such parts: every turn is repaired before the next starts.
type Repair struct {
	// Messages are the messages repaired, to store again.
	Messages []*loom.Message
	// Parts is how many parts were repaired.
	Parts int
	now   time.Time
}

// newRepair starts a repair at now.
func newRepair(now time.Time) *Repair { return &Repair{now: now} }

// Add takes the session's messages newest first, repairing each; it
// returns false at the user message that opens the last turn, where
// reading may stop.
func (r *Repair) Add(m *loom.Message) bool {
	if m.Role == loom.RoleUser {
		return false
	}
	if n := m.RepairInterrupted(r.now); n > 0 {
		r.Parts += n
		r.Messages = append(r.Messages, m)
	}
	return true
}
