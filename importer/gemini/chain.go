package gemini

import (
	"strings"

	"github.com/loomhq/loom/importer"
)

// node is one message of a recording's conversation, in a doubly linked
// list so that a rewind cuts the list and a snapshot inserts into it
// without copying it.
type node struct {
	id         string
	msg        *message
	prev, next *node
	// alias is the id a message written again under a new id is also
	// known by (see snapshot).
	alias string
}

// chain is a recording's current conversation: its messages in the order
// each id first appeared, each holding the last copy written of it.
type chain struct {
	head, tail *node
	live       map[string]*node
	n          int
}

// branch is what a $rewindTo took out of the conversation: the messages
// before it (shared with what went on) and the ones it removed.
type branch struct {
	prefix  []*node
	removed []*node
}

// put records a copy of m: the copy replaces an earlier one with the same
// id in place, or is appended.
func (c *chain) put(id string, m *message) {
	if n, ok := c.live[id]; ok {
		n.replace(m)
		return
	}
	c.insertBefore(nil, &node{id: id, msg: m})
}

// replace makes m, a later copy of the node's message, the node's
// message. Gemini CLI writes a message again as it grows, each copy
// whole; but when it rewrites the conversation from the model's history
// (a $set of messages, after a resume) it may rebuild a message from its
// content alone, with the time of the rewrite. The message keeps the time
// it was first recorded with, and what the rebuilt copy lacks (its
// display, thoughts, usage, model and tool calls) is kept from the copy
// before.
func (n *node) replace(m *message) {
	old := n.msg
	if old.Timestamp != m.Timestamp && !importer.RFC3339Time(old.Timestamp).IsZero() {
		m.Timestamp = old.Timestamp
	}
	if m.Type == old.Type {
		if importer.IsNull(m.DisplayContent) {
			m.DisplayContent = old.DisplayContent
		}
		if len(m.Thoughts) == 0 {
			m.Thoughts = old.Thoughts
		}
		if m.Tokens == nil {
			m.Tokens = old.Tokens
		}
		if m.Model == "" {
			m.Model = old.Model
		}
		if len(m.ToolCalls) == 0 {
			m.ToolCalls = old.ToolCalls
		}
	}
	n.msg = m
}

// insertBefore links n before at, or at the end when at is nil.
func (c *chain) insertBefore(at, n *node) {
	if c.live == nil {
		c.live = map[string]*node{}
	}
	c.live[n.id] = n
	c.n++
	if at == nil {
		n.prev = c.tail
		if c.tail != nil {
			c.tail.next = n
		} else {
			c.head = n
		}
		c.tail = n
		return
	}
	n.next = at
	n.prev = at.prev
	if at.prev != nil {
		at.prev.next = n
	} else {
		c.head = n
	}
	at.prev = n
}

// snapshot applies a message list Gemini CLI wrote whole (a $set of
// messages, after it compressed or reloaded the conversation): listed
// messages replace their earlier copies, new ones are inserted before the
// next listed message already known, or appended. Messages the list
// leaves out stay where they are: loom keeps what the tool retired. A
// compression writes the turn in flight again under new ids, after the
// summary: a new message that is one the list leaves out written again
// (rerecorded) moves to its new place, keeping its first id.
func (c *chain) snapshot(ids []string, msgs []*message) {
	listed := make(map[string]bool, len(ids))
	for _, id := range ids {
		listed[id] = true
	}
	var pending []int
	flush := func(at *node) {
		for _, i := range pending {
			if n, ok := c.live[ids[i]]; ok {
				n.replace(msgs[i])
				continue
			}
			if n := c.rerecorded(msgs[i], listed); n != nil {
				c.unlink(n)
				msgs[i].ID, msgs[i].pos = n.msg.ID, n.msg.pos
				n.replace(msgs[i])
				c.insertBefore(at, n)
				n.alias, c.live[ids[i]] = ids[i], n
				listed[n.id] = true
				continue
			}
			c.insertBefore(at, &node{id: ids[i], msg: msgs[i]})
		}
		pending = pending[:0]
	}
	for i, id := range ids {
		n, ok := c.live[id]
		if !ok {
			pending = append(pending, i)
			continue
		}
		n.replace(msgs[i])
		flush(n)
	}
	flush(nil)
}

// maxRerecorded is how many of the newest messages a list leaves out are
// compared with each new message of the list: the turn in flight when
// Gemini CLI compressed is among the last.
const maxRerecorded = 16

// rerecorded returns the newest message not listed that m writes again:
// a user prompt with the same text, or a reply with one of the same
// tool calls (by call id), or without calls and with the same text.
func (c *chain) rerecorded(m *message, listed map[string]bool) *node {
	if m.Type != "user" && m.Type != "gemini" {
		return nil
	}
	ps, _ := parts(m.Content)
	body, calls := strings.TrimSpace(text(ps)), callIDs(m, ps)
	if body == "" && len(calls) == 0 {
		return nil
	}
	seen := 0
	for x := c.tail; x != nil && seen < maxRerecorded; x = x.prev {
		if listed[x.id] {
			continue
		}
		seen++
		if x.msg.Type != m.Type {
			continue
		}
		xps, _ := parts(x.msg.Content)
		xcalls := callIDs(x.msg, xps)
		if len(calls) > 0 || len(xcalls) > 0 {
			for id := range calls {
				if xcalls[id] {
					return x
				}
			}
			continue
		}
		if strings.TrimSpace(text(xps)) == body {
			return x
		}
	}
	return nil
}

// callIDs are the ids of the tool calls a reply made, from its content
// ps and its recorded calls.
func callIDs(m *message, ps []part) map[string]bool {
	if m.Type != "gemini" {
		return nil
	}
	ids := map[string]bool{}
	for _, p := range ps {
		if p.FunctionCall != nil && p.FunctionCall.ID != "" {
			ids[p.FunctionCall.ID] = true
		}
	}
	for _, tc := range m.ToolCalls {
		if tc.ID != "" {
			ids[tc.ID] = true
		}
	}
	return ids
}

// unlink takes n out of the list; it stays live.
func (c *chain) unlink(n *node) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		c.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		c.tail = n.prev
	}
	n.prev, n.next = nil, nil
	c.n--
}

// rewind removes the message id and every one after it, as Gemini CLI's
// $rewindTo does; an id it does not hold removes everything, as Gemini
// CLI does. It returns the removed messages (nil when there were none)
// and how many stay.
func (c *chain) rewind(id string, lost int) (removed []*node, kept int) {
	start, ok := c.live[id]
	switch {
	case !ok && lost > 0:
		// The message rewound to is most likely the line lost, which
		// could not be read: the rewind starts after it.
		start = c.head
		for start != nil && start.msg.line <= lost {
			start = start.next
		}
	case !ok:
		start = c.head
	}
	if start == nil {
		return nil, c.n
	}
	for x := start; x != nil; x = x.next {
		removed = append(removed, x)
		delete(c.live, x.id)
		if x.alias != "" {
			delete(c.live, x.alias)
		}
	}
	if start.prev != nil {
		start.prev.next = nil
		c.tail = start.prev
	} else {
		c.head, c.tail = nil, nil
	}
	start.prev = nil
	c.n -= len(removed)
	return removed, c.n
}

// nodes returns the chain's messages in order.
func (c *chain) nodes() []*node {
	out := make([]*node, 0, c.n)
	for x := c.head; x != nil; x = x.next {
		out = append(out, x)
	}
	return out
}
