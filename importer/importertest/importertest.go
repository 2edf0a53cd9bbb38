// Package importertest holds what the session format readers' tests
// share: counting what a session holds and finding sessions and
// messages in a reader's result.
package importertest

import (
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Tally is what a session holds: messages by role, tool parts by status,
// and agent, reasoning and file parts.
type Tally struct {
	Roles     map[string]int
	Tools     map[string]int
	Agents    int
	Reasoning int
	Files     int
}

// TallyOf counts what s holds.
func TallyOf(s *importer.Session) Tally {
	c := Tally{Roles: map[string]int{}, Tools: map[string]int{}}
	for _, m := range s.Messages {
		c.Roles[m.Role]++
		for _, p := range m.Parts {
			switch p.Type {
			case loom.PartTool:
				c.Tools[p.Status]++
			case loom.PartAgent:
				c.Agents++
			case loom.PartReasoning:
				c.Reasoning++
			case loom.PartFile:
				c.Files++
			}
		}
	}
	return c
}

// Session is the session of res with source id id; the test fails,
// naming the ones there are, when there is none.
func Session(t testing.TB, res *importer.Result, id string) *importer.Session {
	t.Helper()
	var have []string
	for _, s := range res.Sessions {
		if s.SourceID == id {
			return s
		}
		have = append(have, s.SourceID)
	}
	t.Fatalf("no session %s among %v", id, have)
	return nil
}

// Message is the message of s with id id; the test fails when there is
// none.
func Message(t testing.TB, s *importer.Session, id string) *loom.Message {
	t.Helper()
	for _, m := range s.Messages {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("session %s has no message %s", s.SourceID, id)
	return nil
}
