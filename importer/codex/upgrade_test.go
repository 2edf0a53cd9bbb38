package codex

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// beforeTheFix reads a rollout as the reader did before "Codex 0.169's
// compaction answer is the summary": the answer of the call that made
// the summary is a reply, with that call's usage, and the compacted
// line is a summary message of its own.
type beforeTheFix struct{ Format }

func (b beforeTheFix) Read(ctx context.Context, bd importer.Bundle) (*importer.Result, error) {
	res, err := b.Format.Read(ctx, bd)
	if err != nil {
		return nil, err
	}
	for _, s := range res.Sessions {
		var msgs []*loom.Message
		for _, m := range s.Messages {
			msgs = append(msgs, m)
			for old, id := range s.Replaced {
				if id != m.ID {
					continue
				}
				summary := &loom.Message{ID: old, Role: loom.RoleSummary, Model: m.Model, Provider: m.Provider, CreatedAt: m.CreatedAt, CompletedAt: m.CompletedAt,
					Parts: []loom.Part{{ID: old + "/0", Type: loom.PartText, Text: m.Parts[0].Text}}, Usage: loom.Usage{Compactions: 1}}
				m.Role = loom.RoleAssistant
				m.Usage.Compactions = 0
				m.Parts[0].Text = compactionAnswerText
				msgs = append(msgs, summary)
			}
		}
		s.Messages, s.Replaced = msgs, nil
	}
	return res, nil
}

const (
	compactedRollout     = "testdata/rollout-2026-11-24T16-32-10-01a20e66-874d-7a31-848b-7a86278579e3.jsonl"
	compactedSession     = "01a20e66-874d-7a31-848b-7a86278579e3"
	compactionAnswerText = "Progress: one big answer was given."
)

// A copy of a rollout with a compaction imported before that fix holds
// the summarising call's answer as a reply and the summary after it.
// When the rollout grows, the next import appends what is new to that
// copy: no fork, nothing stored twice or lost, one compaction; the copy
// keeps the reply it had. Both when the copy was imported before the
// turn after the compaction and after it.
func TestCompactionImportedBeforeTheFix(t *testing.T) {
	raw := importertest.ReadBytes(t, compactedRollout)
	lines := strings.SplitAfter(string(raw), "\n")
	lines = lines[:len(lines)-1] // after the last newline
	for _, c := range []struct {
		name string
		// first is how many lines the copy before the fix was made
		// of; then is what the rollout holds at the next import.
		first int
		then  []string
		// stored is how many messages the copy has in the end.
		stored int64
		added  int
	}{
		// Lines 26-33 are the turn after the compaction.
		{"before the next turn", 25, lines, 9, 2},
		// The same turn written again (its lines repeated, at other
		// places): one more turn.
		{"after the next turn", len(lines), append(lines[:len(lines):len(lines)], lines[25:]...), 11, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), filepath.Base(compactedRollout))
			write := func(lines []string) {
				importertest.WriteFile(t, file, []byte(strings.Join(lines, "")), 0o644)
			}
			write(lines[:c.first])
			st := importertest.Store(t)
			if tr := importertest.Import(t, st, beforeTheFix{}, file); tr.SessionsNew != 1 || tr.FilesFailed != 0 {
				t.Fatalf("import before the fix: %+v", tr)
			}
			write(c.then)
			tr := importertest.Import(t, st, Format{}, file)
			if tr.SessionsNew != 0 || tr.SessionsGrown != 1 || tr.MessagesAdded != c.added || tr.FilesFailed != 0 || len(tr.Problems) != 0 {
				t.Errorf("import after the fix: %d new, %d grown, %d messages added, problems %v; want 0, 1, %d", tr.SessionsNew, tr.SessionsGrown, tr.MessagesAdded, tr.Problems, c.added)
			}
			if tr := importertest.Import(t, st, Format{}, file); tr.SessionsUnchanged+tr.FilesUnchanged == 0 || tr.MessagesAdded != 0 {
				t.Errorf("import again: %+v", tr)
			}
			ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Surface: Tool, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) != 1 || ss[0].Key != Tool+":"+compactedSession {
				for _, s := range ss {
					t.Errorf("session %s (%s, %d messages)", s.Key, s.Kind, s.MessageCount)
				}
				t.Fatalf("%d sessions, want the one copy", len(ss))
			}
			x := ss[0]
			if int64(x.MessageCount) != c.stored || x.Usage.Compactions != 1 || x.Usage.InputTokens != 6000+1900+2000 || x.Usage.OutputTokens != 10+30+6 {
				t.Errorf("copy: %d messages, usage %+v; want %d, one compaction, 9900 in, 46 out", x.MessageCount, x.Usage, c.stored)
			}
			msgs, err := st.Messages(context.Background(), x.ID, loom.MessageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range msgs {
				if m.Role != loom.RoleSystem {
					text := m.Text()
					if m.Role == loom.RoleSummary {
						text = ""
					}
					got = append(got, m.Role+": "+text)
				}
			}
			want := []string{"user: Big turn.", "assistant: A big answer.", "assistant: " + compactionAnswerText, "summary: ",
				"user: After the big turn?", "assistant: Still here after the summary."}
			if c.stored == 11 {
				want = append(want, "user: After the big turn?", "assistant: Still here after the summary.")
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("copy holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
