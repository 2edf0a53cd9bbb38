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
