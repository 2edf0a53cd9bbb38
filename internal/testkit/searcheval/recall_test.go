package searcheval

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/importertest"
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
	var text string
	eachLine(t, samples+"/claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl", func(b []byte) bool {
		var line struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(b, &line) == nil && json.Unmarshal(line.Message.Content, &text) == nil &&
			strings.HasPrefix(text, "Your task is to create a detailed summary") {
			return true
		}
		text = ""
		return false
	})
	if text == "" {
		t.Fatal("no compaction prompt in the sample")
	}
	return text
}

// eachLine calls f with each line of the file at path until it returns
// true.
func eachLine(t *testing.T, path string, f func([]byte) bool) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if f(sc.Bytes()) {
			return
		}
	}
}

// publicSet is the labelled set of testdata/recall-public: real Claude
// Code sessions of another project's developers, and prompts written for
// them (see its SOURCES.md).
const publicSet = "../../../testdata/recall-public"

// Recall across projects on the public set, beside the real sessions
// and the set's own above: for at least 8 of its 10 prompts the first
// on-topic turn is among the first three recalled.
func TestRecallPublicAcrossProjects(t *testing.T) {
	st, engine := store(t)
	keys, _ := corpus(t, st)
	importertest.Import(t, st, claudecode.Format{}, publicSet+"/entire-cli")
	all, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		keys[s.ID] = s.Key
	}
	prompts := readJSON[[]struct {
		Prompt  string   `json:"prompt"`
		Targets []string `json:"targets"`
	}](t, publicSet+"/prompts.json")
	if len(prompts) != 10 {
		t.Fatalf("%d prompts", len(prompts))
	}
	top3 := 0
	for _, p := range prompts {
		var targets []string
		for _, f := range p.Targets {
			targets = append(targets, "claude-code:"+sessionIDOf(t, publicSet+"/entire-cli/"+f+".jsonl"))
		}
		res, err := recall.Recall(context.Background(), st, recall.Options{Prompt: p.Prompt, UserID: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		rank := 0
		for i, turn := range res.Turns {
			if k := keys[turn.SessionID]; slices.ContainsFunc(targets, func(target string) bool { return k == target || strings.HasPrefix(k, target+"/") }) {
				rank = i + 1
				break
			}
		}
		if rank >= 1 && rank <= 3 {
			top3++
		}
		t.Logf("first on-topic turn %d of %d: %q", rank, len(res.Turns), p.Prompt)
	}
	t.Logf("%s: the first on-topic turn in the first three for %d of %d prompts", engine, top3, len(prompts))
	if top3 < 8 {
		t.Errorf("the first on-topic turn in the first three for %d of %d prompts, want at least 8", top3, len(prompts))
	}
}

// sessionIDOf is the session id a Claude Code file records.
func sessionIDOf(t *testing.T, path string) string {
	t.Helper()
	var id string
	eachLine(t, path, func(b []byte) bool {
		var l struct {
			SessionID string `json:"sessionId"`
		}
		id = ""
		if json.Unmarshal(b, &l) == nil {
			id = l.SessionID
		}
		return id != ""
	})
	if id == "" {
		t.Fatalf("%s names no session", path)
	}
	return id
}
