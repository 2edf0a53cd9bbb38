package codex

import (
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

func TestFork(t *testing.T) {
	res := readFile(t, "testdata/fork.jsonl")
	expect(t, res,
		map[string]int{"user": 3, "assistant": 3},
		map[string]int{}, 0,
		map[string]int{
			"session_meta":                    1,
			"turn_context":                    3,
			"event_msg:user_message":          2,
			"event_msg:task_started":          1,
			"event_msg:thread_name_updated":   1,
			"inherited:event_msg:token_count": 2,
		}, nil)
	s := res.Sessions[0]
	if s.SourceID != "019a5000-0000-7000-8000-0000000000f1" || s.Kind != loom.KindFork ||
		s.ParentSourceID != "019a4958-d3b0-7c21-9a3e-1f2e3d4c5b6a" || s.ForkTurn != 2 {
		t.Errorf("fork %s kind %s parent %s turn %d", s.SourceID, s.Kind, s.ParentSourceID, s.ForkTurn)
	}
	// The parent's copied settings and title are not the fork's.
	if s.Cwd != "/home/dev/fork" || s.GitBranch != "fork-branch" || s.Version != "0.60.1" || s.Model != "gpt-5.1-codex-max" || s.Title != "" {
		t.Errorf("cwd %s branch %s version %s model %s title %q", s.Cwd, s.GitBranch, s.Version, s.Model, s.Title)
	}
	var texts []string
	for _, m := range s.Messages {
		texts = append(texts, m.Text())
	}
	want := []string{"Fix the failing test", "The test now passes.", "Now run it again", "Done.", "Try another way", "Trying another way."}
	if !slices.Equal(texts, want) {
		t.Errorf("texts %q, want %q", texts, want)
	}
	// Only the fork's own call is its usage; the copy's was paid for in
	// the parent.
	var total loom.Usage
	for _, m := range s.Messages {
		total.Add(m.Usage)
	}
	if u := (loom.Usage{InputTokens: 300, CacheReadTokens: 500, OutputTokens: 50, ReasoningTokens: 20, APICalls: 1}); total != u {
		t.Errorf("usage %+v, want %+v", total, u)
	}
	if m := s.Messages[1]; m.Model != "gpt-5.1-codex" {
		t.Errorf("copied call's model %s", m.Model)
	}
}

func TestForkWithoutTurnIDs(t *testing.T) {
	meta := `{"timestamp":"2025-11-04T17:52:48.700Z","type":"session_meta","payload":{"id":"019a5000-0000-7000-8000-0000000000f1","forked_from_id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2025-11-04T17:52:48.640Z","cwd":"/w","cli_version":"0.45.0"}}
`
	copied := func(ts string) string {
		return strings.NewReplacer("TS", ts).Replace(
			`{"timestamp":"TS","type":"session_meta","payload":{"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2025-10-01T08:00:00Z","cwd":"/w"}}
{"timestamp":"TS","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}}
{"timestamp":"TS","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"1"}]}}
{"timestamp":"TS","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"output_tokens":1},"last_token_usage":{"input_tokens":10,"output_tokens":1}}}}
`)
	}
	own := `{"timestamp":"2025-11-04T17:53:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"two"}]}}
{"timestamp":"2025-11-04T17:53:01Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"2"}]}}
{"timestamp":"2025-11-04T17:53:01Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":30,"output_tokens":3},"last_token_usage":{"input_tokens":20,"output_tokens":2}}}}
`
	for _, tc := range []struct {
		name     string
		copyTime string
		turn     int
		usage    loom.Usage
		skipped  map[string]int
	}{
		// The copy keeps the parent's times: it ends where the fork's
		// own lines, stamped after the fork, begin.
		{"parent's times", "2025-10-01T08:00:01Z", 1, loom.Usage{InputTokens: 20, OutputTokens: 2, APICalls: 1},
			map[string]int{"session_meta": 1, "inherited:event_msg:token_count": 1}},
		// The copy is stamped with the fork's time: nothing tells where
		// it ends, so no turn is taken as shared.
		{"fork's time", "2025-11-04T17:52:48.701Z", 0, loom.Usage{InputTokens: 30, OutputTokens: 3, APICalls: 2},
			map[string]int{"session_meta": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := readString(t, meta+copied(tc.copyTime)+own)
			expect(t, res, map[string]int{"user": 2, "assistant": 2}, map[string]int{}, 0, tc.skipped, nil)
			s := res.Sessions[0]
			var total loom.Usage
			for _, m := range s.Messages {
				total.Add(m.Usage)
			}
			if s.Kind != loom.KindFork || s.ForkTurn != tc.turn || total != tc.usage {
				t.Errorf("kind %s fork turn %d usage %+v, want turn %d usage %+v", s.Kind, s.ForkTurn, total, tc.turn, tc.usage)
			}
		})
	}
}
