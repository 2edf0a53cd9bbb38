package importer

import "github.com/loomhq/loom"

// BranchOf is the fork of session s that an abandoned branch of its
// tree is (a prompt edited, a reply regenerated, in a format that keeps
// them): msgs is the whole branch from its first message, onMain names
// the ids of the messages s holds, and first is the id of the branch's
// first message of its own, which keys the fork (<s's id>@<first>).
// The fork is at the last turn the branch shares whole with s, and
// titled by its own first prompt.
func BranchOf(s *Session, first string, msgs []*loom.Message, onMain map[string]bool) *Session {
	turns, j := 0, 0
	for j < len(msgs) && onMain[msgs[j].ID] {
		if msgs[j].Role == loom.RoleUser {
			turns++
		}
		j++
	}
	if j < len(msgs) && msgs[j].Role != loom.RoleUser && turns > 0 {
		turns-- // they part inside a turn: the fork shares the turns before it
	}
	f := *s
	f.SourceID, f.Kind, f.ParentSourceID, f.ForkTurn = s.SourceID+"@"+first, loom.KindFork, s.SourceID, turns
	f.Messages, f.Title = msgs, ""
	return &f
}
