package loom

import (
	"slices"
	"strings"
)

// ArrangeFamily puts the sessions an engine's family query found in the
// order Store.Family promises: depth first from each family's root,
// siblings oldest first, families in the order of q.IDs, each session
// once. found holds every session of the families (in any order) and
// nothing else; engines use this so that both order alike.
func ArrangeFamily(q FamilyQuery, found []*Session) []*Session {
	byID := make(map[string]*Session, len(found))
	for _, s := range found {
		byID[s.ID] = s
	}
	children := make(map[string][]*Session)
	for _, s := range found {
		if s.ParentID == "" || s.ParentID == s.ID || byID[s.ParentID] == nil {
			continue
		}
		if q.SubagentsOnly && s.Kind != KindSubagent {
			continue
		}
		children[s.ParentID] = append(children[s.ParentID], s)
	}
	for _, kids := range children {
		slices.SortFunc(kids, func(a, b *Session) int {
			if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
	}
	out := make([]*Session, 0, len(found))
	seen := make(map[string]bool, len(found))
	var walk func(s *Session)
	walk = func(s *Session) {
		if seen[s.ID] {
			return
		}
		seen[s.ID] = true
		out = append(out, s)
		for _, c := range children[s.ID] {
			walk(c)
		}
	}
	for _, id := range q.IDs {
		root := byID[id]
		if root == nil {
			continue
		}
		if q.FromRoot {
			// Climb as far as what was found reaches, stopping where a
			// cycle of parent links would come back.
			climbed := map[string]bool{root.ID: true}
			for {
				p := byID[root.ParentID]
				if p == nil || climbed[p.ID] || (q.SubagentsOnly && root.Kind != KindSubagent) {
					break
				}
				climbed[p.ID] = true
				root = p
			}
		}
		walk(root)
	}
	return out
}

// Depth returns the bound on generations a family query follows:
// q.MaxDepth, at most MaxFamilyDepth.
func (q FamilyQuery) Depth() int {
	if q.MaxDepth <= 0 || q.MaxDepth > MaxFamilyDepth {
		return MaxFamilyDepth
	}
	return q.MaxDepth
}

// Nested is a session of a list and how deep it stands under the listed
// session that ran it: 0 for one that stands on its own.
type Nested struct {
	S     *Session
	Depth int
}

// NestSubagents orders a list of sessions for people to read: each
// sub-agent session (a compaction's among them) right after the session
// that ran it when that session is listed too, after the sub-agents of
// it listed before, one deeper; every other session where the list has
// it. The list's order holds among siblings and among the others.
func NestSubagents(list []*Session) []Nested {
	listed := make(map[string]bool, len(list))
	for _, s := range list {
		listed[s.ID] = true
	}
	nested := func(s *Session) bool {
		return s.Kind == KindSubagent && s.ParentID != "" && s.ParentID != s.ID && listed[s.ParentID]
	}
	children := make(map[string][]*Session)
	for _, s := range list {
		if nested(s) {
			children[s.ParentID] = append(children[s.ParentID], s)
		}
	}
	out := make([]Nested, 0, len(list))
	seen := make(map[*Session]bool, len(list))
	var walk func(s *Session, depth int)
	walk = func(s *Session, depth int) {
		if seen[s] {
			return
		}
		seen[s] = true
		out = append(out, Nested{S: s, Depth: depth})
		for _, c := range children[s.ID] {
			walk(c, depth+1)
		}
	}
	for _, s := range list {
		if !nested(s) {
			walk(s, 0)
		}
	}
	// Sub-agents whose parent links go round in a cycle: where the
	// list has them.
	for _, s := range list {
		walk(s, 0)
	}
	return out
}
