package searcheval

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/recall"
)

// recallPrompts are prompts an agent's user types, in other words than
// the sessions that bear on them (each shares a word or two with its
// session, as a keyword recall needs), with the sessions whose turns are
// on topic (their sub-agents' too).
var recallPrompts = []struct {
	prompt  string
	targets []string
}{
	{"how should our SessionStart hook hand extra context to the model?", []string{"claude-code:258c7280-ae70-4798-800f-63464d01a85d"}},
	{"the phoenix server would not start last time, what fixed it?", []string{"claude-code:55604662-cf2a-4331-851a-ec234028f8ca", "claude-code:d6e0bada-1959-4eec-a9d2-0bfade768d8f"}},
	{"which go and python versions does this repo expect?", []string{"codex:01996135-afde-7911-97f0-d863511eca56"}},
	{"split building the todo app across several agents again", []string{"claude-code:fe5e1c67-53e7-4862-81ae-d0e013e3270b"}},
	{"the postgres pool keeps running dry when traffic spikes", []string{"own:pgpool"}},
	{"the watch import test fails now and then in CI", []string{"own:flaky"}},
	{"add a dark theme switch to the settings page", []string{"own:darkmode"}},
	{"the websocket drops every minute behind our proxy", []string{"own:websocket"}},
	{"remember which chats are still in progress", []string{"own:registry"}},
	{"we pushed a secret key to git, how do we scrub it from history?", []string{"own:secret"}},
}

// Recall across projects, over the real sessions and the set's own, with
// the compaction prompt that Claude Code's compaction agent gets said in
// four sessions (as in a store where four sessions were compacted): an
// on-topic turn within the default budget for at least 8 of the 10
// prompts, and no text twice in any answer.
func TestRecallLabelled(t *testing.T) {
	st, engine := store(t)
	keys, _ := corpus(t, st)
	compaction := compactionPrompt(t)
	for i := range 3 {
		s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "own:compacted-" + string(rune('a'+i)), Surface: "cli",
			Project: loom.Project{ID: "fedcba9876543210", Name: "web", Root: "/src/web"}, Cwd: "/src/web"}
		msgs := []*loom.Message{
			{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: compaction}}},
			{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "<analysis>The user asked for a summary.</analysis>"}}},
		}
		if err := st.Append(context.Background(), s, msgs...); err != nil {
			t.Fatal(err)
		}
		keys[s.ID] = s.Key
	}
	onTopic := 0
	for _, p := range recallPrompts {
		res, err := recall.Recall(context.Background(), st, recall.Options{Prompt: p.prompt, UserID: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Tokens > recall.DefaultTokens {
			t.Errorf("%q: %d tokens", p.prompt, res.Tokens)
		}
		seen := map[string]bool{}
		hit := -1
		for i, turn := range res.Turns {
			if seen[turn.Text] {
				t.Errorf("%q: the same text twice: %.80s", p.prompt, turn.Text)
			}
			seen[turn.Text] = true
			for _, target := range p.targets {
				if k := keys[turn.SessionID]; hit < 0 && (k == target || strings.HasPrefix(k, target+"/")) {
					hit = i
				}
			}
		}
		if hit >= 0 {
			onTopic++
			t.Logf("on topic, turn %d of %d: %q", hit+1, len(res.Turns), p.prompt)
		} else {
			t.Logf("off topic (%d turns): %q", len(res.Turns), p.prompt)
		}
	}
	t.Logf("%s: recall brought an on-topic turn for %d of %d prompts", engine, onTopic, len(recallPrompts))
	if onTopic < 8 {
		t.Errorf("an on-topic turn for %d of %d prompts, want at least 8", onTopic, len(recallPrompts))
	}
}

// compactionPrompt is the prompt Claude Code gave its compaction agent
// in the real session of the samples.
func compactionPrompt(t *testing.T) string {
	t.Helper()
	f, err := os.Open(samples + "/claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		var text string
		if json.Unmarshal(sc.Bytes(), &line) == nil && json.Unmarshal(line.Message.Content, &text) == nil &&
			strings.HasPrefix(text, "Your task is to create a detailed summary") {
			return text
		}
	}
	t.Fatal("no compaction prompt in the sample")
	return ""
}
