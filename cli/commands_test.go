package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
)

func TestExitCodes(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"unknown command", []string{"bogus"}, ExitUsage, `unknown command "bogus"`},
		{"unknown subcommand", []string{"session", "bogus"}, ExitUsage, `unknown command "bogus" for "loom session"`},
		{"unknown flag", []string{"session", "list", "--bogus"}, ExitUsage, "unknown flag: --bogus"},
		{"unparsable value", []string{"session", "list", "--limit", "many"}, ExitUsage, `invalid value "many" for --limit: want a whole number`},
		{"negative limit", []string{"session", "list", "--limit", "-1"}, ExitUsage, "--limit"},
		{"missing argument", []string{"session", "show"}, ExitUsage, "usage: loom session show REF"},
		{"extra argument", []string{"session", "show", "a", "b"}, ExitUsage, "too many arguments"},
		{"prune without age", []string{"session", "prune"}, ExitUsage, "--older-than is required"},
		{"prune bad age", []string{"session", "prune", "--older-than", "30x"}, ExitUsage, `unknown unit "x"`},
		{"delete without --yes off a terminal", []string{"session", "delete", fx.main.ID}, ExitUsage, "--yes is required"},
		{"bad export format", []string{"session", "export", fx.main.ID, "--format", "xml"}, ExitUsage, `unknown format "xml"`},
		{"bad role", []string{"search", "x", "--role", "robot"}, ExitUsage, `unknown role "robot"`},
		{"empty query", []string{"search", ""}, ExitUsage, "the query is empty"},
		{"blank query", []string{"search", " ", "\t"}, ExitUsage, "the query is empty"},
		{"negative speed", []string{"replay", fx.main.ID, "--speed", "-1"}, ExitUsage, "--speed"},
		{"resume without ref off a terminal", []string{"session", "resume"}, ExitUsage, "reference is required"},
		{"not found", []string{"session", "show", "nothing-like-this"}, ExitNotFound, `no session matches "nothing-like-this"`},
		{"not found id", []string{"session", "show", "ffffffff"}, ExitNotFound, "no session matches"},
		{"restore of a live session", []string{"session", "restore", fx.main.ID}, ExitNotFound, "no session in the trash"},
		{"ambiguous title", []string{"session", "show", "twin"}, ExitAmbiguous, fx.twin1.ID},
		{"other user's session", []string{"session", "show", "Bob's flaky test"}, ExitNotFound, "no session matches"},
		{"fork past the end", []string{"session", "fork", fx.main.ID, "--turn", "9"}, ExitUsage, "has 3 turns"},
		{"import missing file", []string{"session", "import", "/nonexistent/x.jsonl"}, ExitError, "read /nonexistent/x.jsonl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fx.run(t, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, tc.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("stderr %q does not mention %q", r.stderr, tc.want)
			}
			first := lines(r.stderr)[0]
			if !strings.HasPrefix(first, "loom: ") {
				t.Fatalf("error line %q does not start with loom:", first)
			}
			if tc.code != ExitAmbiguous && len(lines(r.stderr)) != 1 {
				t.Fatalf("error is not one line: %q", r.stderr)
			}
			if strings.Contains(r.stderr, "Usage:") || strings.Contains(r.stderr, "goroutine") {
				t.Fatalf("error dumps usage or a stack: %q", r.stderr)
			}
		})
	}
}

func TestAmbiguousListsCandidates(t *testing.T) {
	fx := newFixture(t)
	r := fx.run(t, "session", "show", "Twin")
	if r.code != ExitAmbiguous {
		t.Fatalf("exit %d", r.code)
	}
	ls := lines(r.stderr)
	if len(ls) != 3 || !strings.Contains(ls[0], `"Twin" matches 2 sessions`) {
		t.Fatalf("stderr = %q", r.stderr)
	}
	for _, s := range []*loom.Session{fx.twin1, fx.twin2} {
		if !strings.Contains(r.stderr, s.ID+"\tTwin\t"+s.Key+"\t"+fx.proj.Root+"\tupdated ") {
			t.Fatalf("candidate %s not listed with its key and project: %q", s.ID, r.stderr)
		}
	}
	if r := fx.run(t, "session", "show", "01a"); r.code != ExitNotFound || !strings.Contains(r.stderr, "an id prefix needs at least 4 characters") {
		t.Fatalf("3-character prefix: exit %d: %s", r.code, r.stderr)
	}
}

func TestExitCodeMapping(t *testing.T) {
	tests := []struct {
		err  error
		code int
	}{
		{nil, ExitOK},
		{errors.New("disk full"), ExitError},
		{usageErrorf("bad"), ExitUsage},
		{fmt.Errorf("wrapped: %w", loom.NotFound("x")), ExitNotFound},
		{loom.Ambiguous("x", nil), ExitAmbiguous},
		{loom.Locked("s", &loom.Lock{PID: 1, Host: "h"}), ExitLocked},
		{loom.Errorf(loom.EINVALID, "bad import"), ExitError},
		{loom.Errorf(loom.ECONFLICT, "exists"), ExitError},
	}
	for _, tc := range tests {
		if got := ExitCode(tc.err); got != tc.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
	ios, _, _, errOut := Test()
	printError(ios, loom.Locked("0196", &loom.Lock{PID: 4242, Host: "box", Since: base}))
	if got := errOut.String(); got != "loom: session 0196 is in use by process 4242 on box since 2025-05-01T10:00:00.000Z\n" {
		t.Fatalf("locked error = %q", got)
	}
}

func TestSessionListPiped(t *testing.T) {
	fx := newFixture(t)
	out := fx.mustRun(t, "session", "list")
	rows := lines(out)
	// This project: main, fork, sub-agent, two twins; newest first.
	if len(rows) != 5 {
		t.Fatalf("want 5 rows of this project, got %d:\n%s", len(rows), out)
	}
	first := strings.Split(rows[0], "\t")
	if len(first) != 7 {
		t.Fatalf("row has %d tab-separated columns: %q", len(first), rows[0])
	}
	if first[0] != fx.twin2.ID || first[1] != "Twin" || first[2] != "cli:api:2" || first[5] != "1" || first[6] != "second twin" {
		t.Fatalf("first row = %q", first)
	}
	if _, err := time.Parse(time.RFC3339, first[3]); err != nil {
		t.Fatalf("created is not RFC 3339: %q", first[3])
	}
	if strings.Contains(out, "Deploy notes") || strings.Contains(out, "Telegram") || strings.Contains(out, "Bob") {
		t.Fatalf("other projects or users listed:\n%s", out)
	}

	all := lines(fx.mustRun(t, "session", "list", "--all-projects"))
	if len(all) != 7 {
		t.Fatalf("--all-projects: %d rows", len(all))
	}
	if got := lines(fx.mustRun(t, "session", "list", "--all-projects", "--surface", "telegram")); len(got) != 1 || !strings.Contains(got[0], fx.tg.ID) {
		t.Fatalf("--surface telegram = %q", got)
	}
	if got := lines(fx.mustRun(t, "session", "list", "--limit", "2")); len(got) != 2 {
		t.Fatalf("--limit 2 gave %d rows", len(got))
	}
	// Another user sees only their own.
	if got := fx.mustRun(t, "session", "list", "--user", "bob"); !strings.Contains(got, "Bob's flaky test") || len(lines(got)) != 1 {
		t.Fatalf("bob's list = %q", got)
	}
	r := fx.runWith(t, runOpts{env: map[string]string{"LOOM_USER": "bob"}}, "session", "list")
	if !strings.Contains(r.stdout, "Bob's flaky test") {
		t.Fatalf("LOOM_USER=bob list = %q", r.stdout)
	}
}

func TestSessionListTerminal(t *testing.T) {
	fx := newFixture(t)
	r := fx.runWith(t, runOpts{tty: true}, "session", "list")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	rows := lines(r.stdout)
	if !strings.Contains(ansi.Strip(rows[0]), "ID") || !strings.Contains(ansi.Strip(rows[0]), "LAST PROMPT") {
		t.Fatalf("no header: %q", rows[0])
	}
	if !strings.Contains(r.stdout, "\x1b[") {
		t.Fatal("a terminal gets colour")
	}
	plain := ansi.Strip(r.stdout)
	if !strings.Contains(plain, fx.main.ID[:8]+" ") || strings.Contains(plain, fx.main.ID) {
		t.Fatalf("terminal ids are not shortened to 8:\n%s", plain)
	}
	if !strings.Contains(plain, "1h ago") {
		t.Fatalf("terminal times are not ages:\n%s", plain)
	}
	// Columns line up: every row has the title column at the same offset.
	col := strings.Index(lines(plain)[0], "TITLE")
	for _, l := range lines(plain)[1:] {
		if l[col-2:col] != "  " || l[col] == ' ' {
			t.Fatalf("misaligned row %q (title at %d)", l, col)
		}
	}

	for _, o := range []runOpts{{tty: true, env: map[string]string{"NO_COLOR": "1"}}, {tty: true}} {
		args := []string{"session", "list"}
		if o.env == nil {
			args = append(args, "--no-color")
		}
		if r := fx.runWith(t, o, args...); strings.Contains(r.stdout, "\x1b[") {
			t.Fatalf("colour despite %v %v", o.env, args)
		}
	}

	// An empty project says so on stderr and succeeds.
	r = fx.runWith(t, runOpts{tty: true, dir: t.TempDir()}, "session", "list")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "No sessions in") {
		t.Fatalf("empty project: %+v", r)
	}
}

// On a narrow terminal the list leaves columns out instead of wrapping
// rows: every line fits, and id, title and last activity stay.
func TestSessionListNarrow(t *testing.T) {
	fx := newFixture(t)
	for _, width := range []int{60, 80, 100} {
		r := fx.runWith(t, runOpts{tty: true, width: width}, "session", "list")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		plain := ansi.Strip(r.stdout)
		for _, line := range lines(plain) {
			if w := ansi.StringWidth(line); w > width {
				t.Fatalf("%d columns: a %d-cell line wraps: %q\n%s", width, w, line, plain)
			}
		}
		head := lines(plain)[0]
		for _, col := range []string{"ID", "TITLE", "UPDATED"} {
			if !strings.Contains(head, col) {
				t.Fatalf("%d columns: %s left out:\n%s", width, col, plain)
			}
		}
		if !strings.Contains(plain, fx.main.ID[:8]) || !strings.Contains(plain, "Fix the flaky") {
			t.Fatalf("%d columns: rows lack id or title:\n%s", width, plain)
		}
		if width == 60 && strings.Contains(head, "CREATED") {
			t.Fatalf("60 columns still shows CREATED:\n%s", plain)
		}
	}
}

func TestSessionListJSON(t *testing.T) {
	fx := newFixture(t)
	r := fx.runWith(t, runOpts{tty: true}, "session", "list", "--json")
	got := decodeJSON[[]*loom.Session](t, r.stdout)
	if len(got) != 5 {
		t.Fatalf("%d sessions", len(got))
	}
	for _, s := range got {
		if len(s.ID) != 36 {
			t.Fatalf("--json id %q is not full", s.ID)
		}
	}
	var raw []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "key", "title", "description", "user_id", "surface", "kind", "parent_id", "fork_turn", "project", "cwd",
		"model", "provider", "profile", "message_count", "turn_count", "last_prompt", "usage", "created_at", "updated_at", "deleted_at", "lock"} {
		if _, ok := raw[0][k]; !ok {
			t.Errorf("session JSON lacks %q", k)
		}
	}
	if ts := raw[0]["created_at"].(string); !strings.HasSuffix(ts, ".000Z") && len(ts) != len("2025-05-01T10:00:00.000Z") {
		t.Errorf("time %q is not RFC 3339 with milliseconds", ts)
	}
	// Empty: an empty array, not null.
	r = fx.runWith(t, runOpts{dir: t.TempDir()}, "session", "list", "--json")
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("empty list JSON = %q", r.stdout)
	}
}

func TestSessionListTree(t *testing.T) {
	fx := newFixture(t)
	out := fx.mustRun(t, "session", "list", "--tree")
	rows := lines(out)
	idx := func(id string) int {
		for i, r := range rows {
			if strings.HasPrefix(r, id+"\t") {
				return i
			}
		}
		t.Fatalf("%s not in tree:\n%s", id, out)
		return -1
	}
	m, sub, fork := idx(fx.main.ID), idx(fx.sub.ID), idx(fx.fork.ID)
	if sub <= m || fork <= m {
		t.Fatalf("children not under their parent (main %d, sub %d, fork %d):\n%s", m, sub, fork, out)
	}
	if !strings.Contains(rows[sub], "└ sub-agent: explore retry") || !strings.Contains(rows[fork], "└ fork: flaky test, other approach") {
		t.Fatalf("children not marked:\n%s", out)
	}
	if len(rows) != 5 {
		t.Fatalf("tree repeats or loses sessions:\n%s", out)
	}
}

func TestSessionShow(t *testing.T) {
	fx := newFixture(t)
	out := fx.mustRun(t, "session", "show", "fix the FLAKY test")
	for _, want := range []string{"Fix the flaky test", "id:       " + fx.main.ID, "key:      cli:api", "model:    openai:gpt-x",
		"messages: 9 in 3 turns", "the last 9 of 9"} {
		if want == "the last 9 of 9" {
			if strings.Contains(out, want) {
				t.Errorf("claims a partial view of a whole session")
			}
			continue
		}
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"── #1 user", "Why does TestRetry flake?", "📎 retry_test.go (text/x-go)",
		"⚙ read_file · completed · 120ms · retry_test.go", "⚙ run_tests · error · 2.0s: exit status 1: FAIL TestRetry",
		"↳ sub-agent explore → session " + fx.sub.ID, "error: rate limited", "── #4 summary"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "races with the timer") {
		t.Error("reasoning shown without --show-thinking")
	}
	if out := fx.mustRun(t, "session", "show", fx.main.ID, "--show-thinking"); !strings.Contains(out, "│ The retry loop races with the timer.") {
		t.Errorf("--show-thinking hides reasoning:\n%s", out)
	}
	out = fx.mustRun(t, "session", "show", fx.main.ID[:8], "--limit", "2")
	if strings.Count(out, "── #") != 2 || !strings.Contains(out, "── #8 user") || !strings.Contains(out, "── #9 assistant") ||
		!strings.Contains(out, "(the last 2 of 9 messages") {
		t.Fatalf("--limit 2:\n%s", out)
	}
}

func TestSessionShowDefaultsToLastTen(t *testing.T) {
	fx := newEmptyFixture(t)
	st := fx.openStore(t)
	s := &loom.Session{UserID: "local", Key: "cli:api", Project: fx.proj}
	for i := 1; i <= 14; i++ {
		role := loom.RoleUser
		if i%2 == 0 {
			role = loom.RoleAssistant
		}
		if err := st.Append(context.Background(), s, textMsg(role, fmt.Sprintf("message number %d", i), base.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out := fx.mustRun(t, "session", "show", s.ID)
	if strings.Count(out, "── #") != 10 || strings.Contains(out, "message number 4\n") || !strings.Contains(out, "message number 5\n") {
		t.Fatalf("default show is not the last 10:\n%s", out)
	}
	if out := fx.mustRun(t, "session", "show", s.ID, "--full-history"); strings.Count(out, "── #") != 14 {
		t.Fatalf("--full-history shows %d", strings.Count(out, "── #"))
	}
	if r := fx.run(t, "session", "show", s.ID, "--full-history", "--limit", "3"); r.code != ExitUsage {
		t.Fatalf("--full-history with --limit: exit %d", r.code)
	}
}

// On a terminal, show renders what the model wrote as Markdown, as live
// replies are; piped, it is the text as stored.
func TestSessionShowRendersMarkdown(t *testing.T) {
	fx := newEmptyFixture(t)
	st := fx.openStore(t)
	s := &loom.Session{UserID: "local", Key: "cli:api", Project: fx.proj}
	reply := "# Findings\n\nThe **timer** races.\n\n- `retry.go`\n- the test\n\n| file | lines |\n|---|---|\n| retry.go | 40 |\n"
	if err := st.Append(context.Background(), s, textMsg(loom.RoleUser, "what is **wrong**?", base), textMsg(loom.RoleAssistant, reply, base)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	term := fx.runWith(t, runOpts{tty: true}, "session", "show", s.ID)
	plain := ansi.Strip(term.stdout)
	for _, want := range []string{"# Findings", "The timer races.", "• retry.go", "• the test", "file     │ lines", "retry.go │ 40", "what is **wrong**?"} {
		if !strings.Contains(plain, want) {
			t.Errorf("terminal show lacks %q:\n%s", want, plain)
		}
	}
	if !strings.Contains(term.stdout, ansiBold+"timer"+ansiReset) || strings.Contains(plain, "**timer**") || strings.Contains(plain, "|---|") {
		t.Errorf("Markdown not rendered:\n%q", term.stdout)
	}
	piped := fx.mustRun(t, "session", "show", s.ID)
	if !strings.Contains(piped, reply) {
		t.Errorf("piped show is not the stored text:\n%s", piped)
	}
}

func TestSessionShowJSON(t *testing.T) {
	fx := newFixture(t)
	out := fx.mustRun(t, "session", "show", fx.main.ID, "--json", "--full-history")
	got := decodeJSON[struct {
		Session  *loom.Session   `json:"session"`
		Messages []*loom.Message `json:"messages"`
	}](t, out)
	if got.Session.ID != fx.main.ID || len(got.Messages) != 9 || got.Messages[0].Seq != 1 {
		t.Fatalf("show --json: session %s, %d messages", got.Session.ID, len(got.Messages))
	}
	var raw map[string]json.RawMessage
	json.Unmarshal([]byte(out), &raw)
	if len(raw) != 2 {
		t.Fatalf("show --json has keys %v", raw)
	}
	tool := got.Messages[1].Parts[3]
	var input bytes.Buffer
	json.Compact(&input, tool.Input)
	if tool.Type != loom.PartTool || tool.CallID != "call_1" || input.String() != `{"path":"retry_test.go"}` || tool.EndedAt.Sub(*tool.StartedAt) != 120*time.Millisecond {
		t.Fatalf("tool part = %+v", tool)
	}
}

func TestSessionForkAndRename(t *testing.T) {
	fx := newFixture(t)
	out := fx.mustRun(t, "session", "fork", fx.main.ID, "--turn", "2", "--name", "second try")
	id := strings.TrimSpace(out)
	if len(id) != 36 {
		t.Fatalf("fork printed %q, want the new id", out)
	}
	got := decodeJSON[struct {
		Session  *loom.Session   `json:"session"`
		Messages []*loom.Message `json:"messages"`
	}](t, fx.mustRun(t, "session", "show", id, "--json", "--full-history"))
	if got.Session.Kind != loom.KindFork || got.Session.ParentID != fx.main.ID || got.Session.ForkTurn != 2 || got.Session.TurnCount != 2 ||
		got.Session.Title != "second try" {
		t.Fatalf("fork = %+v", got.Session)
	}
	if last := got.Messages[len(got.Messages)-1]; last.Role != loom.RoleSystem {
		t.Fatalf("fork at turn 2 ends with %s %q", last.Role, last.Text())
	}

	// Without --turn off a terminal: every turn.
	all := decodeJSON[*loom.Session](t, fx.mustRun(t, "session", "fork", fx.main.ID, "--json"))
	if all.TurnCount != 3 || all.MessageCount != 9 || all.Title != "Fix the flaky test (fork)" {
		t.Fatalf("fork of all turns = %+v", all)
	}

	if out := fx.mustRun(t, "session", "rename", id, "  Third try "); out != "" {
		t.Fatalf("rename printed %q when piped", out)
	}
	if got := decodeJSON[*loom.Session](t, fx.mustRun(t, "session", "resume", "third TRY", "--json")); got.ID != id {
		t.Fatalf("renamed title resolves to %s, want %s", got.ID, id)
	}
	r := fx.runWith(t, runOpts{tty: true}, "session", "rename", id, "Fourth")
	if !strings.Contains(ansi.Strip(r.stdout), `Renamed `+id[:8]+` from "Third try" to "Fourth"`) {
		t.Fatalf("rename on a terminal said %q", r.stdout)
	}
	if r := fx.run(t, "session", "rename", id, " "); r.code != ExitUsage {
		t.Fatalf("empty title: exit %d", r.code)
	}
}

func TestSessionForkChoosesTurnOnTerminal(t *testing.T) {
	fx := newFixture(t)
	r := fx.runWith(t, runOpts{tty: true, stdin: "7\n1\n"}, "session", "fork", fx.main.ID)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	plain := ansi.Strip(r.stdout)
	for _, want := range []string{"Turns of Fix the flaky test:", "1  Why does TestRetry flake?", "2  Use a fake clock then.", "3  thanks",
		"Fork after which turn? [1-3, enter for all]", "Please give a number from 1 to 3."} {
		if !strings.Contains(plain, want) {
			t.Fatalf("turn chooser lacks %q:\n%s", want, plain)
		}
	}
	last := strings.Fields(lines(plain)[len(lines(plain))-1])
	id := last[len(last)-1]
	s := decodeJSON[*loom.Session](t, fx.mustRun(t, "session", "resume", id, "--json"))
	if s.ForkTurn != 1 || s.TurnCount != 1 {
		t.Fatalf("chosen turn 1, got fork_turn %d, %d turns", s.ForkTurn, s.TurnCount)
	}
}

func TestSessionMove(t *testing.T) {
	fx := newFixture(t)
	// Move the web session into the api project from a subdirectory:
	// its cli:web key follows the project's name.
	r := fx.runWith(t, runOpts{dir: filepath.Join(fx.project, "pkg")}, "session", "move", "Deploy notes", "--json")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	s := decodeJSON[*loom.Session](t, r.stdout)
	if s.Project != fx.proj || s.Key != "cli:api" && !strings.HasPrefix(s.Key, "cli:api:") || s.Cwd != filepath.Join(fx.project, "pkg") {
		t.Fatalf("moved = project %+v key %q cwd %q", s.Project, s.Key, s.Cwd)
	}
	// api already had cli:api, so the moved one got a key of its own.
	if s.Key == "cli:api" {
		t.Fatalf("two sessions share cli:api in one project")
	}
	if out := fx.mustRun(t, "session", "list"); !strings.Contains(out, fx.web.ID) {
		t.Fatalf("moved session not listed in its new project:\n%s", out)
	}
	// And back, naming the directory.
	s = decodeJSON[*loom.Session](t, fx.mustRun(t, "session", "move", fx.web.ID, fx.other, "--json"))
	if s.Project != fx.otherP || s.Key != "cli:web"+strings.TrimPrefix(s.Key, "cli:web") || !strings.HasPrefix(s.Key, "cli:web") {
		t.Fatalf("moved back = %+v %q", s.Project, s.Key)
	}
}

// A project that moved on disk: list and chat in the new place find no
// sessions, say where the old ones are and how to bring them here, and
// move --from brings them all in one step.
func TestMovedProject(t *testing.T) {
	fx := newFixture(t)
	moved := filepath.Join(fx.home, "elsewhere", "api")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fx.project, moved); err != nil {
		t.Fatal(err)
	}
	old := fx.proj.Root
	hint := "5 sessions of api belong to " + old + ", which no longer exists; move them here with: loom session move --from " + old
	here := runOpts{dir: moved}
	r := fx.runWith(t, here, "session", "list")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, hint) {
		t.Fatalf("list in the moved project: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = fx.runWith(t, runOpts{dir: moved, stdin: "hello\n", env: map[string]string{"OLLAMA_HOST": "127.0.0.1:9"}}, "chat")
	if !strings.Contains(r.stderr, hint) {
		t.Fatalf("chat in the moved project does not say where its sessions are:\n%s", r.stderr)
	}
	// An unrelated project of the same name that still exists is not
	// offered, nor is anything in a project that has sessions.
	if r := fx.runWith(t, runOpts{dir: fx.other}, "session", "list"); strings.Contains(r.stderr, "no longer exists") {
		t.Fatalf("hint in a project with sessions: %s", r.stderr)
	}

	r = fx.runWith(t, here, "session", "move", "--from", old, "--json")
	if r.code != 0 {
		t.Fatalf("move --from: exit %d: %s", r.code, r.stderr)
	}
	got := decodeJSON[[]*loom.Session](t, r.stdout)
	if len(got) != 5 {
		t.Fatalf("moved %d sessions, want 5 (main, its fork and sub-agent, two twins)", len(got))
	}
	list := decodeJSON[[]*loom.Session](t, fx.runWith(t, here, "session", "list", "--json").stdout)
	if len(list) != 5 {
		t.Fatalf("the new place lists %d sessions", len(list))
	}
	for _, s := range list {
		if s.Project.Root != moved || s.Project.ID != paths.ProjectID(moved) {
			t.Fatalf("session %s still in %+v", s.ID, s.Project)
		}
	}
	if r := fx.runWith(t, here, "session", "list"); strings.Contains(r.stderr, "no longer exists") {
		t.Fatalf("hint after the move: %s", r.stderr)
	}
	if r := fx.runWith(t, here, "session", "move", "--from", old); r.code != ExitNotFound {
		t.Fatalf("second move --from: exit %d: %s", r.code, r.stderr)
	}
	if r := fx.runWith(t, here, "session", "move"); r.code != ExitUsage {
		t.Fatalf("move without REF or --from: exit %d", r.code)
	}
}

func TestSessionDeleteRestore(t *testing.T) {
	fx := newFixture(t)
	if out := fx.mustRun(t, "session", "delete", fx.main.ID[:8], "--yes"); out != "" {
		t.Fatalf("delete printed %q when piped", out)
	}
	out := fx.mustRun(t, "session", "list")
	if strings.Contains(out, fx.main.ID) || strings.Contains(out, fx.sub.ID) {
		t.Fatalf("deleted session (or its sub-agent) still listed:\n%s", out)
	}
	if r := fx.run(t, "session", "show", fx.main.ID); r.code != ExitNotFound ||
		!strings.Contains(r.stderr, `session "Fix the flaky test" is in the trash since `) ||
		!strings.Contains(r.stderr, "; loom session restore "+fx.main.ID+" brings it back") {
		t.Fatalf("show of a deleted session: exit %d: %s", r.code, r.stderr)
	}
	fx.mustRun(t, "session", "restore", "Fix the flaky test")
	out = fx.mustRun(t, "session", "list")
	if !strings.Contains(out, fx.main.ID) || !strings.Contains(out, fx.sub.ID) {
		t.Fatalf("restore did not bring back the session and its sub-agent:\n%s", out)
	}

	// On a terminal it asks; anything but yes keeps the session.
	r := fx.runWith(t, runOpts{tty: true, stdin: "n\n"}, "session", "delete", fx.web.ID)
	if r.code != ExitError || !strings.Contains(r.stdout, "Move 1 session to the trash? [y/N]") || !strings.Contains(r.stderr, "Nothing deleted") {
		t.Fatalf("declined delete: %+v", r)
	}
	fx.mustRun(t, "session", "show", fx.web.ID)
	r = fx.runWith(t, runOpts{tty: true, stdin: "y\n"}, "session", "delete", fx.web.ID, "Telegram chat", "--purge")
	if r.code != 0 || !strings.Contains(r.stdout, "Delete 2 sessions for good?") {
		t.Fatalf("confirmed purge: %+v", r)
	}
	if r := fx.run(t, "session", "restore", fx.web.ID); r.code != ExitNotFound {
		t.Fatalf("restore after purge: exit %d", r.code)
	}

	// One bad reference: nothing is deleted.
	if r := fx.run(t, "session", "delete", fx.twin1.ID, "no-such-session", "--yes"); r.code != ExitNotFound {
		t.Fatalf("exit %d", r.code)
	}
	fx.mustRun(t, "session", "show", fx.twin1.ID)
}

func TestSessionPrune(t *testing.T) {
	fx := newFixture(t)
	// The fixture's sessions were written around base; prune runs on the
	// fixture's clock, a few minutes later.
	r := fx.run(t, "session", "prune", "--older-than", "1w", "--yes")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "No sessions older than 1w") {
		t.Fatalf("nothing to prune: %+v", r)
	}
	fx.clock = base.Add(40 * 24 * time.Hour)
	out := fx.mustRun(t, "session", "prune", "--older-than", "30d", "--dry-run")
	if n := len(lines(out)); n != 4 {
		t.Fatalf("dry run lists %d sessions, want this project's 4 top-level ones:\n%s", n, out)
	}
	if strings.Contains(out, fx.sub.ID) || strings.Contains(out, fx.web.ID) {
		t.Fatalf("dry run lists a sub-agent or another project:\n%s", out)
	}
	if got := lines(fx.mustRun(t, "session", "list")); len(got) != 5 {
		t.Fatal("dry run removed sessions")
	}
	rep := decodeJSON[pruneReport](t, fx.mustRun(t, "session", "prune", "--older-than", "4w", "--yes", "--json"))
	if rep.DryRun || len(rep.Removed) != 4 || len(rep.Skipped) != 0 {
		t.Fatalf("prune report = %+v", rep)
	}
	if got := fx.mustRun(t, "session", "list"); got != "" {
		t.Fatalf("pruned sessions still listed:\n%s", got)
	}
	if got := fx.mustRun(t, "session", "list", "--all-projects"); !strings.Contains(got, fx.web.ID) {
		t.Fatalf("prune reached another project")
	}
	fx.mustRun(t, "session", "restore", fx.main.ID)
	if got := fx.mustRun(t, "session", "list"); !strings.Contains(got, fx.main.ID) {
		t.Fatal("pruned session not restorable")
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"30d", 30 * 24 * time.Hour},
		{"12h", 12 * time.Hour},
		{"2w", 14 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"90m", 90 * time.Minute},
		{"1.5h", 90 * time.Minute},
	}
	for _, tc := range tests {
		if got, err := parseDuration(tc.in); err != nil || got != tc.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "d", "30", "30x", "-1d", "1d 2h"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parseDuration(%q) accepted", bad)
		}
	}
}

func TestSearch(t *testing.T) {
	fx := newFixture(t)
	out := fx.mustRun(t, "search", "fake", "clock")
	if !strings.Contains(out, fx.main.ID+"\t5\tuser\t") || !strings.Contains(out, "**fake** **clock**") {
		t.Fatalf("search:\n%s", out)
	}
	if strings.Contains(out, "Bob") {
		t.Fatal("search sees another user's sessions")
	}
	for _, q := range []string{`he said "hi" AND (NEAR* -x`, `"`, `AND OR NOT`, `col:umn`, `*`, `-`} {
		if r := fx.run(t, "search", q); r.code != 0 {
			t.Fatalf("search %q: exit %d: %s", q, r.code, r.stderr)
		}
	}
	hits := decodeJSON[[]loom.SearchHit](t, fx.mustRun(t, "search", "TestRetry", "--json"))
	if len(hits) == 0 {
		t.Fatal("no hits for TestRetry")
	}
	var raw []map[string]any
	json.Unmarshal([]byte(fx.mustRun(t, "search", "TestRetry", "--json")), &raw)
	for _, k := range []string{"session_id", "message_id", "seq", "role", "score", "snippet", "created_at"} {
		if _, ok := raw[0][k]; !ok {
			t.Errorf("hit JSON lacks %q", k)
		}
	}
	// Filters.
	if out := fx.mustRun(t, "search", "deploy"); !strings.Contains(out, fx.web.ID) {
		t.Fatalf("default search is not across projects:\n%s", out)
	}
	if out := fx.mustRun(t, "search", "deploy", "--project"); out != "" {
		t.Fatalf("--project found another project's message:\n%s", out)
	}
	out = fx.mustRun(t, "search", "retry", "--session", "explore retry")
	if len(lines(out)) != 2 {
		t.Fatalf("--session:\n%s", out)
	}
	for _, l := range lines(out) {
		if !strings.HasPrefix(l, fx.sub.ID+"\t") {
			t.Fatalf("--session found another session's message:\n%s", out)
		}
	}
	hits = decodeJSON[[]loom.SearchHit](t, fx.mustRun(t, "search", "clock", "--role", "assistant", "--json"))
	for _, h := range hits {
		if h.Role != loom.RoleAssistant {
			t.Fatalf("--role assistant returned a %s message", h.Role)
		}
	}
	if got := decodeJSON[[]loom.SearchHit](t, fx.mustRun(t, "search", "clock", "--limit", "1", "--json")); len(got) != 1 {
		t.Fatalf("--limit 1 gave %d", len(got))
	}
	// --raw is the engine's own syntax, and so is its prefix query.
	prefix := "TestR*"
	if onPostgres() {
		prefix = "TestR:*"
	}
	if got := decodeJSON[[]loom.SearchHit](t, fx.mustRun(t, "search", prefix, "--raw", "--json")); len(got) == 0 {
		t.Fatal("--raw prefix query found nothing")
	}
	r := fx.runWith(t, runOpts{tty: true}, "search", "fake", "clock")
	if !strings.Contains(r.stdout, "\x1b[1;33mfake\x1b[0m") || !strings.Contains(ansi.Strip(r.stdout), fx.main.ID[:8]+"  Fix the flaky test  #5 user") {
		t.Fatalf("terminal search:\n%q", r.stdout)
	}
}

func TestReplayTiming(t *testing.T) {
	fx := newFixture(t)
	var waits []time.Duration
	ios, _, out, _ := Test()
	f := &Factory{IO: ios, Env: func(k string) string { return fx.env()[k] }, Getwd: func() (string, error) { return fx.project, nil },
		OpenStore: openFor, Now: time.Now}
	defer f.closeStore()
	opts := &ReplayOptions{f: f, Ref: fx.main.ID, Speed: 2, Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	if err := replayRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	// Gaps of one minute between messages, halved, capped at 5 s.
	if len(waits) != 8 {
		t.Fatalf("%d waits for 9 messages: %v", len(waits), waits)
	}
	for _, w := range waits {
		if w != maxReplayWait {
			t.Fatalf("wait %v, want the %v cap", w, maxReplayWait)
		}
	}
	if strings.Count(out.String(), "── #") != 9 {
		t.Fatalf("replay printed %d messages", strings.Count(out.String(), "── #"))
	}
	if got := replayWait(3*time.Second, 2); got != 1500*time.Millisecond {
		t.Fatalf("replayWait(3s, 2) = %v", got)
	}
	if got := replayWait(time.Hour, 0); got != 0 {
		t.Fatalf("speed 0 waits %v", got)
	}
	waits = nil
	opts.Speed = 0
	if err := replayRun(context.Background(), opts); err != nil || len(waits) != 0 {
		t.Fatalf("--speed 0: %v, waits %v", err, waits)
	}
	// Through the command, with no delay.
	if out := fx.mustRun(t, "replay", "Fix the flaky test", "--speed", "0"); !strings.Contains(out, "You're welcome") {
		t.Fatalf("replay:\n%s", out)
	}
}

func TestUsage(t *testing.T) {
	fx := newFixture(t)
	rep := decodeJSON[loom.UsageReport](t, fx.mustRun(t, "usage", "--json"))
	if rep.Total.InputTokens != 1200+100 || rep.Total.APICalls != 2 { // the fork's copied history is not counted again
		t.Fatalf("total = %+v", rep.Total)
	}
	if len(rep.ByModel) != 2 || len(rep.ByProject) < 2 {
		t.Fatalf("by model %d, by project %d", len(rep.ByModel), len(rep.ByProject))
	}
	one := decodeJSON[loom.UsageReport](t, fx.mustRun(t, "usage", "explore retry", "--json"))
	if len(one.BySession) != 1 || one.Total.InputTokens != 100 {
		t.Fatalf("usage of one session = %+v", one)
	}
	out := fx.mustRun(t, "usage")
	if !strings.HasPrefix(out, "total\t") || !strings.Contains(out, "model\topenai:gpt-x\tgpt-x\t") {
		t.Fatalf("piped usage:\n%s", out)
	}
	r := fx.runWith(t, runOpts{tty: true}, "usage", "--limit", "1")
	plain := ansi.Strip(r.stdout)
	for _, want := range []string{"Total: 1,300 in", "SESSION", "PROJECT", "MODEL", "gpt-x-mini", "more (--limit 0 lists all)"} {
		if !strings.Contains(plain, want) {
			t.Fatalf("terminal usage lacks %q:\n%s", want, plain)
		}
	}
}

func TestPathsAndVersion(t *testing.T) {
	fx := newEmptyFixture(t)
	got := decodeJSON[map[string]string](t, fx.mustRun(t, "paths", "--json"))
	want := map[string]string{
		"data": filepath.Join(fx.home, "data"), "state": filepath.Join(fx.home, "state"), "config": filepath.Join(fx.home, "config"),
		"cache": filepath.Join(fx.home, "cache"), "db": fx.db, "logs": filepath.Join(fx.home, "state", "logs"),
		"memory": filepath.Join(fx.home, "data", "MEMORY.md"), "user": filepath.Join(fx.home, "data", "USER.md"),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("paths %s = %q, want %q", k, got[k], v)
		}
	}
	out := fx.mustRun(t, "paths")
	if !strings.Contains(out, "db\t"+fx.db+"\n") {
		t.Fatalf("paths:\n%s", out)
	}
	r := fx.runWith(t, runOpts{env: map[string]string{"LOOM_DB": "postgres://loom:s3cret@db.example/loom"}}, "paths")
	if strings.Contains(r.stdout, "s3cret") || !strings.Contains(r.stdout, "postgres://loom:xxxxx@db.example/loom") {
		t.Fatalf("paths shows a password:\n%s", r.stdout)
	}
	if out := fx.mustRun(t, "paths", "--db", "/elsewhere/x.db"); !strings.Contains(out, "db\t/elsewhere/x.db\n") {
		t.Fatalf("--db not shown:\n%s", out)
	}
	if out := fx.mustRun(t, "version"); !strings.HasPrefix(out, "loom 1.2.3-test (go") {
		t.Fatalf("version = %q", out)
	}
	v := decodeJSON[map[string]string](t, fx.mustRun(t, "version", "--json"))
	if v["version"] != "1.2.3-test" {
		t.Fatalf("version --json = %v", v)
	}
}

func TestHelpHasExamples(t *testing.T) {
	root := NewRootCmd(&Factory{IO: &IOStreams{}})
	cmds := root.Commands()
	seen := 0
	for len(cmds) > 0 {
		c := cmds[0]
		cmds = append(cmds[1:], c.Commands()...)
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || slices.Contains([]string{"bash", "zsh", "fish", "powershell"}, c.Name()) {
			continue
		}
		seen++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no example", c.CommandPath())
		}
	}
	if seen < 18 {
		t.Fatalf("only %d commands", seen)
	}
	fx := newEmptyFixture(t)
	out := fx.mustRun(t, "session", "fork", "--help")
	if !strings.Contains(out, "Examples:") || !strings.Contains(out, "--turn") {
		t.Fatalf("fork --help:\n%s", out)
	}
}

func TestLogStream(t *testing.T) {
	fx := newEmptyFixture(t)
	logs := filepath.Join(fx.home, "state", "logs", "local")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, entries ...string) {
		t.Helper()
		fh, err := os.OpenFile(filepath.Join(logs, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			fmt.Fprintln(fh, e)
		}
		fh.Close()
	}
	entry := func(sec int, kind, text string) string {
		return fmt.Sprintf(`{"timestamp":%q,"kind":%q,"text":%q}`, loom.FormatTime(base.Add(time.Duration(sec)*time.Second)), kind, text)
	}
	write("a.jsonl", entry(1, "user_message", "a1"), entry(4, "final_result", "a4"))
	write("b.jsonl", entry(2, "user_message", "b2"), entry(3, "final_result", "b3"))
	os.WriteFile(filepath.Join(logs, "notes.txt"), []byte("not a log\n"), 0o644)
	out := fx.mustRun(t, "log", "stream")
	var texts []string
	for _, l := range lines(out) {
		var e map[string]string
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("piped entry is not its JSON line: %q", l)
		}
		texts = append(texts, e["text"])
	}
	if strings.Join(texts, ",") != "a1,b2,b3,a4" {
		t.Fatalf("entries not merged oldest first: %v", texts)
	}
	r := fx.runWith(t, runOpts{tty: true}, "log", "stream")
	if !strings.Contains(ansi.Strip(r.stdout), "a user_message a1") {
		t.Fatalf("terminal log line:\n%s", r.stdout)
	}
	if out := fx.mustRun(t, "log", "stream", "--logs-dir", filepath.Join(fx.home, "nowhere")); out != "" {
		t.Fatalf("missing logs dir printed %q", out)
	}

	// --follow prints what is appended and what new files hold.
	ios, _, _, _ := Test()
	sb := &syncBuffer{}
	ios.Out = sb
	f := &Factory{IO: ios, Env: func(k string) string { return fx.env()[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- logStreamRun(ctx, &LogStreamOptions{f: f, Follow: true, Poll: 10 * time.Millisecond}) }()
	waitFor(t, sb, "a4")
	write("a.jsonl", entry(5, "session:end", "a5"))
	// A line still being written is held back until it is whole.
	fh, _ := os.OpenFile(filepath.Join(logs, "c.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	line := entry(6, "user_message", "c6")
	fh.WriteString(line[:10])
	waitFor(t, sb, "a5")
	time.Sleep(50 * time.Millisecond)
	if got := sb.String(); strings.Count(got, "\n") != 5 || !strings.HasSuffix(got, "}\n") {
		t.Fatalf("half a line printed:\n%s", got)
	}
	fh.WriteString(line[10:] + "\n")
	fh.Close()
	waitFor(t, sb, "c6")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v", err)
	}
	if n := strings.Count(sb.String(), "\n"); n != 6 {
		t.Fatalf("follow printed %d entries:\n%s", n, sb.String())
	}
}

func TestPickerModel(t *testing.T) {
	now := base.Add(time.Hour)
	sessions := []*loom.Session{
		{ID: "0196aaaa-0000-7000-8000-000000000001", Title: "alpha work", LastPrompt: "first prompt", MessageCount: 3, UpdatedAt: base},
		{ID: "0196bbbb-0000-7000-8000-000000000002", Title: "beta work", LastPrompt: "second prompt", MessageCount: 5, UpdatedAt: base},
	}
	m := newPickerModel("Sessions in api", sessions, now, 80, 20)
	view := m.View().Content
	for _, want := range []string{"Sessions in api", "alpha work", "beta work", "1 hour ago · 3 messages · first prompt", "0196aaaa"} {
		if !strings.Contains(ansi.Strip(view), want) {
			t.Fatalf("picker view lacks %q:\n%s", want, view)
		}
	}
	items := m.list.Items()
	if len(items) != 2 || !strings.Contains(items[1].FilterValue(), "second prompt") {
		t.Fatalf("items = %v", items)
	}
	// Down and enter choose the second session.
	next, _ := m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	next, cmd := next.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if pm := next.(pickerModel); pm.chosen != sessions[1] || cmd == nil {
		t.Fatalf("enter chose %v", pm.chosen)
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("choosing does not end the picker")
	}
	// q leaves without a choice.
	next, cmd = m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if pm := next.(pickerModel); pm.chosen != nil || cmd == nil {
		t.Fatal("q chose a session")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q does not end the picker")
	}
}

// syncBuffer is a buffer safe to read while another goroutine writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, s interface{ String() string }, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q in:\n%s", want, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A panic anywhere in a command is one line on stderr, exit 1, and a
// report with the stack in the state directory, never a stack trace.
func TestPanicIsOneLine(t *testing.T) {
	home := t.TempDir()
	ios, _, out, errOut := Test()
	f := &Factory{
		IO:    ios,
		Env:   func(k string) string { return map[string]string{"LOOM_HOME": home}[k] },
		Getwd: func() (string, error) { return home, nil },
		OpenStore: func(ctx context.Context, url string, access Access) (loom.Store, error) {
			var m map[string]int
			m["boom"]++ // a nil map write: a runtime panic
			return nil, nil
		},
	}
	code := Main(f, []string{"session", "list"})
	if code != ExitError {
		t.Fatalf("exit %d, want %d", code, ExitError)
	}
	msg := errOut.String()
	if len(lines(msg)) != 1 || !strings.HasPrefix(msg, "loom: internal error: assignment to entry in nil map (details in ") {
		t.Fatalf("stderr %q is not one line naming the report", msg)
	}
	if out.Len() != 0 || strings.Contains(msg, "goroutine") {
		t.Fatalf("stack trace shown: %q %q", out.String(), msg)
	}
	path := strings.TrimSuffix(strings.TrimSpace(msg[strings.Index(msg, "details in ")+len("details in "):]), ")")
	report, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(path, filepath.Join(home, "state")) {
		t.Fatalf("report %s: %v", path, err)
	}
	if !strings.Contains(string(report), "goroutine") || !strings.Contains(string(report), "TestPanicIsOneLine") {
		t.Fatalf("the report has no stack:\n%s", report)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("report mode %v, want 0600", fi.Mode().Perm())
	}
}
