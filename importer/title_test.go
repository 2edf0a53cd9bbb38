package importer_test

import (
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// A session is titled by the tool's title, else by its first prompt in
// words: a first prompt that is raw JSON (a tool's input handed to a
// sub-agent) titles nothing.
func TestTitleIsNeverRawJSON(t *testing.T) {
	user := func(text string) *loom.Message {
		return &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	}
	sys := &loom.Message{Role: loom.RoleSystem, Parts: []loom.Part{{Type: loom.PartText, Text: "injected"}}}
	for _, tc := range []struct {
		s    importer.Session
		want string
	}{
		{importer.Session{Title: "Own title", Messages: []*loom.Message{user("a prompt")}}, "Own title"},
		{importer.Session{Messages: []*loom.Message{sys, user("fix the build")}}, "fix the build"},
		{importer.Session{Messages: []*loom.Message{user(`{"prompt":"fix the build"}`)}}, ""},
		{importer.Session{Messages: []*loom.Message{user(` ["a", "b"]`)}}, ""},
		{importer.Session{Messages: []*loom.Message{user("[WIP] fix the build")}}, "[WIP] fix the build"},
		{importer.Session{Messages: []*loom.Message{sys}}, ""},
	} {
		if got := importer.Title(&tc.s); got != tc.want {
			t.Errorf("title of %+v = %q, want %q", tc.s.Messages, got, tc.want)
		}
	}
}
