package snippet_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/snippet"
)

// jsonMarks are what a snippet of JSON shows that text would not: a
// key's quotes, a bracket opening an object, an escaped quote or
// character, a "\n" between two words.
var jsonMarks = regexp.MustCompile(`":"|","|\{"|"\}|\\"|\\u00|[a-z.]\\n[a-z]`)

// A snippet of a tool call reads as text: the search text of a real
// Claude Code session's messages holds each call's input as compact
// JSON, and a snippet cut from it shows the command, the path or the
// pattern with no escapes, quotes of keys or brackets, and no "n" glued
// to a word by a "\n".
func TestSnippetsOfToolInputsReadAsText(t *testing.T) {
	res, err := claudecode.New().Read(context.Background(), importer.Bundle{Files: []string{
		"../testdata/agent-sessions/claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"}})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range res.Sessions {
		for _, m := range s.Messages {
			for _, p := range m.Parts {
				if p.Type == loom.PartTool {
					// What the search text holds of a call's input.
					texts = append(texts, (&loom.Message{Parts: []loom.Part{{Type: p.Type, Name: p.Name, Input: p.Input}}}).SearchText())
				}
			}
		}
	}
	for _, c := range []struct{ query, want string }{
		{"divergence", `git log --oneline master..HEAD 2>/dev/null || echo "No divergence from master"`},
		{"annotation.ex", "file_path: /home/USER/projects/spotter-worktrees/spotter-gqc/lib/spotter/transcripts/annotation.ex"},
	} {
		m := snippet.NewMatcher(c.query)
		found := 0
		for _, text := range texts {
			// As a search returns them: the message whole, and a window
			// of it cut at both ends.
			for _, w := range []snippet.Window{{Text: text}, {Text: text[min(len(text), 9):], Head: true, Tail: true}} {
				sn := m.MakeWindow(w, "", "")
				if !strings.Contains(strings.ToLower(sn), strings.ToLower(strings.TrimSuffix(c.query, ".ex"))) {
					continue
				}
				found++
				if jsonMarks.MatchString(sn) {
					t.Errorf("the snippet for %q shows JSON: %q", c.query, sn)
				}
				if w.Head == false && strings.Contains(text, c.want[:20]) && !strings.Contains(sn, c.want) {
					t.Errorf("the snippet for %q does not read %q: %q", c.query, c.want, sn)
				}
			}
		}
		if found == 0 {
			t.Errorf("no snippet for %q", c.query)
		}
	}
}
