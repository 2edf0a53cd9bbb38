package synclog

import "time"

// TypeTimesSettled records the times an import settled (loom.
// SettledTimes): the completion of a stored message, the session's last
// activity, as a reading of the whole source file gives them where a
// reading of less of it gave earlier ones.
const TypeTimesSettled Type = 15

// TimesSettled records that session SessionID was last active at At,
// and that its message Seq, whose id is MessageID, completed at
// CompletedAt (Seq 0 and no MessageID when only the session's time
// settled). Each time is applied as the later of the one a host holds
// and the record's, so that hosts agree whatever order they apply
// such records in.
type TimesSettled struct {
	SessionID   string     `json:"session_id"`
	Seq         int64      `json:"seq,omitempty"`
	MessageID   string     `json:"message_id,omitempty"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	At          *time.Time `json:"at,omitempty"`
}

// Type implements Payload.
func (*TimesSettled) Type() Type { return TypeTimesSettled }

// Validate implements Payload.
func (p *TimesSettled) Validate() error {
	if p.CompletedAt == nil {
		if err := validID(p.SessionID, "session"); err != nil {
			return err
		}
		if p.Seq != 0 || p.MessageID != "" {
			return invalid("session %s: a message named with no completion", p.SessionID)
		}
	} else if err := validAnchor(p.SessionID, p.Seq, p.MessageID); err != nil {
		return err
	}
	if p.CompletedAt == nil && p.At == nil {
		return invalid("session %s: settles no time", p.SessionID)
	}
	return nil
}
