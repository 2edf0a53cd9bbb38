package importer

import (
	"context"

	"github.com/loomhq/loom"
)

// An agent can write one model call into several files: Claude Code
// copies a conversation into a new file when a session is resumed or
// forked, and a renamed file is a new file to an import. Each reply
// that names its call (loom.Message.Call) is counted in the session
// that counted it first: in another, it is kept without its usage. The
// store keeps which session counts each call (loom.CallCounter), with
// the batch that writes the session.

// countOnce returns msgs, session id's, with no usage on the replies
// whose call another session counts already (in the store, or in a
// batch of this run).
func (im *Importer) countOnce(ctx context.Context, id string, msgs []*loom.Message) ([]*loom.Message, error) {
	var calls []string
	for _, m := range msgs {
		if m.Call != "" && !m.Usage.IsZero() && im.counter(m.Call) == "" {
			calls = append(calls, m.Call)
		}
	}
	if len(calls) > 0 {
		stored, err := im.Store.CountingSessions(ctx, im.UserID, calls)
		if err != nil {
			return nil, err
		}
		if im.counted == nil {
			im.counted = map[string]string{}
		}
		for call, s := range stored {
			im.counted[call] = s
		}
	}
	out := msgs
	for i, m := range msgs {
		if m.Call == "" || m.Usage.IsZero() {
			continue
		}
		if s := im.counter(m.Call); s != "" && s != id {
			if &out[0] == &msgs[0] {
				out = append([]*loom.Message(nil), msgs...)
			}
			c := *m
			c.Usage = loom.Usage{}
			out[i] = &c
		}
	}
	return out, nil
}

// counter is the session that counts call: the store's, or one of the
// batch being read.
func (im *Importer) counter(call string) string {
	if s := im.pending.calls[call]; s != "" {
		return s
	}
	return im.counted[call]
}

// count records, with the batch that writes session id, that it counts
// the calls of msgs that no session counts yet.
func (im *Importer) count(id string, msgs []*loom.Message) {
	if im.DryRun {
		return
	}
	b := &im.pending
	for _, m := range msgs {
		if m.Call == "" || m.Usage.IsZero() || im.counter(m.Call) != "" || len(m.Call) > loom.MaxCallID {
			continue
		}
		if b.calls == nil {
			b.calls = map[string]string{}
		}
		b.calls[m.Call] = id
		b.w.Calls = append(b.w.Calls, loom.CountedCall{UserID: im.UserID, Call: m.Call, SessionID: id})
	}
}
