package gemini

// node is one message of a recording's conversation, in a doubly linked
// list so that a rewind cuts the list and a snapshot inserts into it
// without copying it.
type node struct {
	id         string
	msg        *message
	prev, next *node
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
	if old.Timestamp != m.Timestamp && !parseTime(old.Timestamp).IsZero() {
		m.Timestamp = old.Timestamp
	}
	if m.Type == old.Type {
		if isNull(m.DisplayContent) {
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
// leaves out stay where they are: loom keeps what the tool retired.
func (c *chain) snapshot(ids []string, msgs []*message) {
	var pending []int
	flush := func(at *node) {
		for _, i := range pending {
			if n, ok := c.live[ids[i]]; ok {
				n.replace(msgs[i])
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

// rewind removes the message id and every one after it, as Gemini CLI's
// $rewindTo does; an id it does not hold removes everything, as Gemini
// CLI does. It returns the removed messages (nil when there were none)
// and how many stay.
func (c *chain) rewind(id string) (removed []*node, kept int) {
	start, ok := c.live[id]
	if !ok {
		start = c.head
	}
	if start == nil {
		return nil, c.n
	}
	for x := start; x != nil; x = x.next {
		removed = append(removed, x)
		delete(c.live, x.id)
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
