package session

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// Show prints the session's metadata and its newest messages, saying
// how many it left out; --json holds the session and every message
// asked for.
func TestSessionShowRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.poolTimeout(t, laterTurns...)

	ios := terminal()
	opts := &ShowOptions{IO: ios, ReadSession: w.openSession(ios), Now: time.Now, Ref: "pool timeout", Limit: 2}
	if err := showRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(ios)
	for _, want := range []string{"pool timeout\n", "id:       " + s.ID + "\n", "key:      cli:api\n",
		"messages: 6 in 3 turns\n", "(the last 2 of 6 messages; --full-history shows all)", "and the tests?", "they pass"} {
		if !strings.Contains(out, want) {
			t.Errorf("show --limit 2:\n%s\nwant %q", out, want)
		}
	}
	if strings.Contains(out, "why does the pool time out") {
		t.Errorf("show --limit 2 printed the first prompt:\n%s", out)
	}

	ios = piped()
	opts = &ShowOptions{IO: ios, ReadSession: w.openSession(ios), Now: time.Now, Ref: s.ID[:8], JSON: true}
	if err := showRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	got := printedJSON[struct {
		Session  *loom.Session   `json:"session"`
		Messages []*loom.Message `json:"messages"`
	}](t, ios)
	if got.Session.ID != s.ID || len(got.Messages) != 6 || got.Messages[0].Text() != "why does the pool time out" {
		t.Errorf("--json --full-history: session %s, %d messages", got.Session.ID, len(got.Messages))
	}
}

// The command fills its options from its flags: 10 messages by default,
// all with --full-history, which does not go with --limit.
func TestNewCmdSessionShowOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionShow, "pool timeout")
	if got.Ref != "pool timeout" || got.Limit != defaultShowLimit || got.FullHistory || got.ReadSession == nil {
		t.Errorf("options: %+v", got)
	}
	got = cmdtest.Options(t, newCmdSessionShow, "0196a3b2", "--full-history", "--show-thinking", "--full")
	if got.Ref != "0196a3b2" || got.Limit != 0 || !got.FullHistory || !got.ShowThinking || !got.Full {
		t.Errorf("--full-history --show-thinking --full: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdSessionShow, "cli:api", "-L", "3"); got.Limit != 3 {
		t.Errorf("-L 3: limit %d", got.Limit)
	}
	// -t as on fork and rewind.
	if got := cmdtest.Options(t, newCmdSessionShow, "cli:api", "-t", "4"); got.Turn != 4 {
		t.Errorf("-t 4: turn %d", got.Turn)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionShow, "cli:api", "-L", "3", "--full-history"), "cannot be used together")
	refused(t, cmdtest.Rejects(t, newCmdSessionShow, "cli:api", "-L", "-1"), "--limit must be 1 or more")
	refused(t, cmdtest.Rejects(t, newCmdSessionShow), "missing arguments")
}

// What an agent was told (a system prompt of 200 lines, its
// environment) is shown folded to a line each, so that a one-prompt
// session fits one screen (50 rows of 80 columns); --full unfolds it.
func TestSessionShowFoldsInstructions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var prompt []string
	for i := range 200 {
		prompt = append(prompt, fmt.Sprintf("Rule %d of the system prompt: be careful with the %d-th thing you do in this repository.", i, i))
	}
	s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:told", Title: "say hello", Project: w.api}
	msg := func(role, text string) *loom.Message {
		return &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	}
	if err := w.st.Append(t.Context(), s, msg(loom.RoleSystem, strings.Join(prompt, "\n")),
		msg(loom.RoleSystem, "<environment_context>\n  <cwd>/src/api</cwd>\n  <shell>bash</shell>\n</environment_context>"),
		msg(loom.RoleUser, "Say hello in one line."), msg(loom.RoleAssistant, "Hello there.")); err != nil {
		t.Fatal(err)
	}
	show := func(full bool) string {
		ios := piped()
		opts := &ShowOptions{IO: ios, ReadSession: w.openSession(ios), Now: time.Now, Ref: s.ID, Limit: defaultShowLimit, Full: full}
		if err := showRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		out, _ := outputs(ios)
		return out
	}
	out := show(false)
	rows := 0
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		rows += max(1, (utf8.RuneCountInString(l)+79)/80)
	}
	if rows > 50 || strings.Contains(out, "Rule 1 of") || strings.Contains(out, "<shell>") {
		t.Errorf("show is %d rows of 80 columns, the instructions unfolded:\n%s", rows, out)
	}
	for _, want := range []string{"Rule 0 of the system prompt", "199 more lines folded (--full shows them)", "<environment_context>", "3 more lines folded", "Say hello in one line.", "Hello there."} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if full := show(true); !strings.Contains(full, "Rule 199 of") || !strings.Contains(full, "<shell>bash</shell>") {
		t.Errorf("show --full folds the instructions:\n%s", full)
	}
}
