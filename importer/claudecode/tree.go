package claudecode

import (
	"slices"
	"strings"

	"github.com/loomhq/loom/importer"
)

// tree is the parentUuid tree of a set of lines, folded into a tree of
// messages. Every line is a node of the line tree; the message tree has a
// node per message key along each path (see keyOf), so that lines which
// add nothing to the conversation (tool results, progress, hook lines,
// the second and later lines of one reply) stay in the message their
// parent belongs to instead of forming branches. Parallel tool calls,
// whose results Claude Code hangs off the call's own line, and progress
// lines off the main line, therefore are not branches; an edited prompt
// or a regenerated reply is.
type tree struct {
	recs   []*record
	parent []int // index into recs of each line's parent, -1 for a root
	node   []int // message node of each line
	nodes  []tnode
	kids   map[kidKey]int
	// byUUID finds a line by its uuid.
	byUUID map[string]int
	// byKey lists the lines of each message key, in file order.
	byKey map[string][]int
}

type kidKey struct {
	parent int
	key    string
}

// tnode is a node of the message tree. Node 0 is a virtual root above the
// tree's first messages.
type tnode struct {
	parent int
	key    string
	depth  int
	// top is the child of the root this node descends from: with inline
	// sub-agents (isSidechain lines of Claude Code 1.x), each one
	// transcript.
	top int
	// first and last are the first line mapped to the node and the one
	// with the latest time (ties: the later line).
	first, last int
	kids        int
}

// newTree builds the tree of recs, which are in file order. A line whose
// parent is named but missing from recs hangs under the line before it,
// so that a transcript whose first lines point into another file (a
// compaction agent's) stays one conversation. With joinRoots, a root that
// continues the conversation (a compaction summary without its boundary)
// hangs under the line before it too.
func newTree(recs []*record, joinRoots bool, res *importer.Result) *tree {
	t := &tree{
		recs:   recs,
		parent: make([]int, len(recs)),
		node:   make([]int, len(recs)),
		nodes:  []tnode{{parent: -1, first: -1, last: -1}},
		kids:   map[kidKey]int{},
		byUUID: make(map[string]int, len(recs)),
		byKey:  map[string][]int{},
	}
	for i, r := range recs {
		if r.hasUUID {
			if _, dup := t.byUUID[r.id]; !dup {
				t.byUUID[r.id] = i
			}
		}
	}
	for i, r := range recs {
		p := r.ParentUUID
		if p == "" {
			p = r.LogicalParentUUID
		}
		switch j, ok := t.byUUID[p]; {
		case p != "" && ok && j != i:
			t.parent[i] = j
		case p != "" && !ok && r.IsSidechain && i > 0 && recs[i-1].file == r.file && recs[i-1].n < r.n-2 && res.LostBefore(r.file, r.n):
			// An inline sub-agent's line whose parent is a line that
			// could not be read, after lines of the session between
			// them: that line began another transcript, of which this
			// is the first line read.
			t.parent[i] = -1
		case p != "" || !r.hasUUID || (joinRoots && i > 0 && continuesAsRoot(r)):
			t.parent[i] = i - 1 // -1 for the first line
		default:
			t.parent[i] = -1
		}
	}
	// Assign nodes parents first, walking up iteratively: a hostile file
	// can chain a million lines or loop.
	state := make([]int8, len(recs)) // 0 new, 1 on the walk, 2 done
	var stack []int
	for i := 0; i < len(recs); {
		if state[i] == 2 {
			i++
			continue
		}
		stack = stack[:0]
		j := i
		for j >= 0 && state[j] == 0 {
			state[j] = 1
			stack = append(stack, j)
			j = t.parent[j]
		}
		if j >= 0 && state[j] == 1 {
			// A cycle: cut it at j and walk again.
			res.Problemf(recs[j].file, recs[j].n, "parentUuid makes a cycle; the line is read as a root")
			t.parent[j] = -1
			for _, k := range stack {
				state[k] = 0
			}
			continue
		}
		for k := len(stack) - 1; k >= 0; k-- {
			t.assign(stack[k])
			state[stack[k]] = 2
		}
	}
	return t
}

// continuesAsRoot reports whether a root line continues the conversation
// before it rather than starting one: a compaction summary.
func continuesAsRoot(r *record) bool {
	return r.Type == "user" && isCompactSummary(r)
}

// assign puts line i, whose parent is assigned, in its message node.
func (t *tree) assign(i int) {
	r := t.recs[i]
	pn := 0
	var parent *record
	if p := t.parent[i]; p >= 0 {
		pn, parent = t.node[p], t.recs[p]
	}
	r.key = keyOf(r, parent)
	n := pn
	if r.key != "" && t.nodes[pn].key != r.key {
		kk := kidKey{pn, r.key}
		c, ok := t.kids[kk]
		if !ok {
			c = len(t.nodes)
			top := t.nodes[pn].top
			if pn == 0 {
				top = c
			}
			t.nodes = append(t.nodes, tnode{parent: pn, key: r.key, depth: t.nodes[pn].depth + 1, top: top, first: i, last: i})
			t.nodes[pn].kids++
			t.kids[kk] = c
		}
		n = c
	}
	t.node[i] = n
	nd := &t.nodes[n]
	if nd.first < 0 {
		nd.first = i
	}
	if nd.last < 0 || !r.ts.Before(t.recs[nd.last].ts) {
		nd.last = i
	}
	if r.key != "" {
		t.byKey[r.key] = append(t.byKey[r.key], i)
	}
}

// leaves returns the leaf nodes grouped by top, tops in order of their
// first line.
func (t *tree) leaves() (tops []int, byTop map[int][]int) {
	byTop = map[int][]int{}
	for n := 1; n < len(t.nodes); n++ {
		if t.nodes[n].kids > 0 {
			continue
		}
		top := t.nodes[n].top
		if _, ok := byTop[top]; !ok {
			tops = append(tops, top)
		}
		byTop[top] = append(byTop[top], n)
	}
	slices.SortFunc(tops, func(a, b int) int { return t.nodes[a].first - t.nodes[b].first })
	return tops, byTop
}

// newest returns the leaf whose latest line is latest (ties: later in the
// file), and the others in the order of their first line.
func (t *tree) newest(leaves []int) (main int, others []int) {
	main = leaves[0]
	for _, n := range leaves[1:] {
		a, b := t.recs[t.nodes[n].last], t.recs[t.nodes[main].last]
		if a.ts.After(b.ts) || (a.ts.Equal(b.ts) && a.order > b.order) {
			main = n
		}
	}
	for _, n := range leaves {
		if n != main {
			others = append(others, n)
		}
	}
	slices.SortFunc(others, func(a, b int) int { return t.nodes[a].first - t.nodes[b].first })
	return main, others
}

// path is the nodes from the root's child down to n.
func (t *tree) path(n int) []int {
	p := make([]int, 0, t.nodes[n].depth)
	for ; n > 0; n = t.nodes[n].parent {
		p = append(p, n)
	}
	slices.Reverse(p)
	return p
}

// own is the first node of the part of leaf's branch that no other
// branch shares: the node below the branch's last fork. It names an
// abandoned branch; since later rewinds fork the main chain, never an
// abandoned branch, the name does not change as the file grows.
func (t *tree) own(leaf int) int {
	n := leaf
	for p := t.nodes[n].parent; p > 0 && t.nodes[p].kids == 1; p = t.nodes[n].parent {
		n = p
	}
	return n
}

// keyOf names the message a line belongs to: "a:<message.id>" for an
// assistant reply (all its lines share it), "u:<uuid>" for a user line
// with content of its own, "c:<uuid of the compact_boundary>" for a
// compaction (the boundary and the summary that follows it), "s:<uuid>"
// for a system line kept as a message. Lines with no message of their own
// (tool results, progress, hooks) have no key.
func keyOf(r, parent *record) string {
	switch r.Type {
	case "assistant":
		if r.Message == nil {
			return ""
		}
		if r.Message.ID != "" {
			return "a:" + r.Message.ID
		}
		return "a:" + r.id
	case "user":
		if isCompactSummary(r) {
			if parent != nil && parent.Type == "system" && parent.Subtype == "compact_boundary" {
				return "c:" + parent.id
			}
			return "c:" + r.id
		}
		for _, b := range r.blocks {
			if !isResultBlock(b) {
				return "u:" + r.id
			}
		}
	case "system":
		switch r.Subtype {
		case "compact_boundary":
			return "c:" + r.id
		case "local_command":
			return "s:" + r.id
		}
	case "attachment":
		if instructions(r) {
			return "s:" + r.id
		}
	}
	return ""
}

// compactPrefix opens the summary Claude Code writes after compacting,
// also in versions that do not flag it with isCompactSummary.
const compactPrefix = "This session is being continued from a previous conversation that ran out of context"

func isCompactSummary(r *record) bool {
	if r.IsCompactSummary {
		return true
	}
	return len(r.blocks) > 0 && r.blocks[0].Type == "text" && strings.HasPrefix(r.blocks[0].Text, compactPrefix)
}

// isResultBlock reports whether b answers a tool call: tool_result, or a
// server tool's result such as web_search_tool_result.
func isResultBlock(b block) bool {
	return b.ToolUseID != "" && strings.HasSuffix(b.Type, "tool_result")
}
