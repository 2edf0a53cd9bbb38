package grok

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is what Grok Build 1.0.41 (@xai-official/grok, run
// offline against a fake model on the Chat Completions API, as
// TestImportRealGrok in cli/session runs it) wrote in ~/.grok/sessions,
// the home directory renamed /home/u and the files Grok keeps beside a
// session's history that loom does not read left out: a session of two
// turns (work), one whose turn reads a file with reasoning and cached
// tokens (other), and one that ran a sub-agent, was compacted with
// /compact and took one more turn (team).
var (
	real    = filepath.Join("testdata", "real")
	work    = "01a2180b-e17e-7911-a1d7-cdc940de44f9"
	other   = "01a2180b-e7ca-7073-a357-44b138058a10"
	team    = "01a2180f-a97b-7713-a01b-36fd568b476c"
	helper  = "01a2180f-ac3e-78a3-bf34-1cd4d5b9aa83"
	history = filepath.Join(real, "%2Fhome%2Fu%2Fwork", work, historyFile)
)

func prompts(s *importer.Session) []string { return importertest.Texts(s, loom.RoleUser) }

func replies(s *importer.Session) []string { return importertest.Texts(s, loom.RoleAssistant) }

func usage(s *importer.Session) loom.Usage { return importertest.SumUsage(s) }

// Grok's context lines (the user's environment and rules, reminders:
// user messages without a prompt index) are system messages, and a
// prompt is what was typed, without Grok's <user_query> tags; each
// turn's usage, calls included, is that of the turn's prompt.
func TestReadPrompts(t *testing.T) {
	res, s := importertest.ReadValidFor(t, Format{}, real, work)
	if got := prompts(s); !slices.Equal(got, []string{"Say hello in one line.", "One more on the greeting?"}) {
		t.Errorf("prompts %q", got)
	}
	if got := replies(s); !slices.Equal(got, []string{"Hello there.", "Continued and answering."}) {
		t.Errorf("replies %q", got)
	}
	if u := usage(s); u.InputTokens != 800+2100 || u.CacheReadTokens != 200 || u.OutputTokens != 15+4 || u.ReasoningTokens != 5 || u.APICalls != 2 {
		t.Errorf("usage %+v", u)
	}
	s = importertest.Session(t, res, other)
	tl := importertest.TallyOf(s)
	if got := prompts(s); !slices.Equal(got, []string{"What is in notes.txt?"}) || tl.Reasoning != 2 || tl.Tools[loom.ToolCompleted] != 1 {
		t.Errorf("prompts %q, %+v", got, tl)
	}
	if u := usage(s); u.InputTokens != 1000+1400 || u.CacheReadTokens != 300 || u.OutputTokens != 49 || u.ReasoningTokens != 23 || u.APICalls != 2 {
		t.Errorf("usage %+v", u)
	}
}

// A sub-agent, a session of its own, is linked to the call that ran
// it, and its calls, which Grok counts in its parent's turn too, are
// counted once; a compaction keeps the history before it (from the
// compaction's request) and its summary.
func TestReadSubagentAndCompaction(t *testing.T) {
	res := importertest.ReadAll(t, Format{}, real)
	if len(res.Sessions) != 4 {
		t.Fatalf("%d sessions, want 4 (the sub-agent read with its parent)", len(res.Sessions))
	}
	s := importertest.Session(t, res, team)
	if got := prompts(s); !slices.Equal(got, []string{"Delegate the count to a helper.", "After the compaction?"}) {
		t.Errorf("prompts %q", got)
	}
	if got := replies(s); !slices.Equal(got, []string{"The helper says two lines.", "Still here after the summary."}) {
		t.Errorf("replies %q", got)
	}
	tl := importertest.TallyOf(s)
	if tl.Roles[loom.RoleSummary] != 1 || tl.Agents != 1 || tl.Tools[loom.ToolCompleted] != 1 {
		t.Errorf("%+v", tl)
	}
	if u := usage(s); u.InputTokens != 1500+1600+1700 || u.OutputTokens != 20+8+6 || u.APICalls != 3 || u.Compactions != 1 {
		t.Errorf("usage %+v", u)
	}
	sub := importertest.Session(t, res, helper)
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != team || !slices.Equal(prompts(sub), []string{"SUBTASK-COUNT: count the lines of notes.txt"}) {
		t.Errorf("sub-agent %s of %q: %q", sub.Kind, sub.ParentSourceID, prompts(sub))
	}
	if u := usage(sub); u.InputTokens != 600 || u.OutputTokens != 7 || u.APICalls != 1 {
		t.Errorf("sub-agent's usage %+v", u)
	}
	for _, m := range s.Messages {
		if m.Role == loom.RoleUser && strings.Contains(m.Text(), "<user_info>") {
			t.Errorf("a context line is a prompt: %.80q", m.Text())
		}
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollows(t, Format{}, real, 4, 21, filepath.Join("%2Fhome%2Fu%2Fwork", work, historyFile),
		`{"type":"user","content":[{"type":"text","text":"<user_query>\nThanks\n</user_query>"}],"prompt_index":2}`)
	importertest.Malformed(t, Format{}, history, "s/"+historyFile)
}
