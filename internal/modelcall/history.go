package modelcall

import (
	"slices"

	"github.com/loomhq/loom"
)

// History is the part of a session's context that a model is sent: its
// user, assistant, tool and summary messages. System messages are left
// out: loom stores none of its own, and those a session imported from
// another agent holds (that tool's instructions, environment blocks,
// instruction files, reminders, slash-command lines) are a record for
// people and search, never input to loom's model, whose instructions are
// the request's system prompt alone. msgs is not changed; when it holds
// no system message it is returned as it is.
func History(msgs []*loom.Message) []*loom.Message {
	if !slices.ContainsFunc(msgs, isSystem) {
		return msgs
	}
	return slices.DeleteFunc(slices.Clone(msgs), isSystem)
}

func isSystem(m *loom.Message) bool { return m.Role == loom.RoleSystem }
