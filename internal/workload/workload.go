// Package workload generates the messages of loom's benchmarks: the
// texts and turns that loom-bench and the engines' benchmarks write, so
// that every measurement writes the same kind of session.
package workload

import (
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// words are the words of Text.
var words = strings.Fields("the session model agent tool search index store write read fork lineage project memory context token cost usage append stream reply")

// Text is the n-th text of a benchmark's messages: 40 to 99 words like
// an agent's.
func Text(n int) string {
	var t strings.Builder
	for j := 0; j < 40+n%60; j++ {
		t.WriteString(words[(n*7+j*13)%len(words)])
		t.WriteByte(' ')
	}
	return t.String()
}

// Message is message i (from 0) of a session made to be imported whole:
// sequence number i+1, the user's and the assistant's in turn, made at
// now and holding text.
func Message(i int, text string, now time.Time) *loom.Message {
	role := loom.RoleUser
	if i%2 == 1 {
		role = loom.RoleAssistant
	}
	return &loom.Message{ID: loom.NewID(), Seq: int64(i + 1), Role: role, CreatedAt: now,
		Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: text}}}
}
