package searcheval

import (
	"context"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
)

// The sessions the paraphrases are about (testdata/agent-sessions), by
// the keys the importers give them; a sub-agent's key is its session's
// followed by "/".
const (
	gqc     = "claude-code:258c7280-ae70-4798-800f-63464d01a85d" // spotter-gqc: annotations epic, hooks research, compaction
	phxDown = "claude-code:55604662-cf2a-4331-851a-ec234028f8ca" // spotter: "mix phx.server doesnt seem to start"
	phxBg   = "claude-code:d6e0bada-1959-4eec-a9d2-0bfade768d8f" // spotter: Phoenix in the background, xterm.js and tmux
	todo    = "claude-code:fe5e1c67-53e7-4862-81ae-d0e013e3270b" // Demo: a Next.js TODO app by parallel sub-agents
	docs    = "claude-code:5c0375b4-57a5-4f26-b12d-d022ee4e51b7" // Demo: CLAUDE.md brought up to date (in Japanese)
	initMD  = "claude-code:1af7fc5e-8455-4414-9ccd-011d40f70b2a" // Demo: /init in an empty repository
	goVer   = "codex:01996135-afde-7911-97f0-d863511eca56"       // claude-code (Codex CLI): Go and Python versions
)

// paraphrases are questions a developer asks about work done in the
// sessions of testdata/agent-sessions (Claude Code and Codex CLI), in
// other words than the sessions': they share a common word or two with
// their turns, never the telling ones (the markers). Each names the
// sessions that are on topic (a sub-agent's too) and the markers of an
// on-topic turn: an answer is on topic when it holds a turn of one of
// those sessions whose text, as recall gives it, holds one of the
// markers (case aside). Beside each, the turn it was written from
// (session, seq as imported). They were written from the sessions'
// turns before recall was run on them.
var paraphrases = []paraphrase{
	// gqc/agent-a881341 1–4: the SessionStart hook's output contract.
	{"what JSON does a startup hook print so the agent gets extra context?", []string{gqc}, []string{"hookSpecificOutput", "additionalContext"}},
	// gqc 13: ALTER TABLE … modify rewritten as a table rewrite.
	{"our embedded database can't make a column nullable in place; how did we get the generated migration through?", []string{gqc}, []string{"SQLite-safe", "table rewrite"}},
	// gqc 56: a NOT NULL column added without a default.
	{"adding a required column failed on a table that already held rows", []string{gqc}, []string{"without a default", "NOT NULL"}},
	// gqc 84: secret_key_base missing from the test config.
	{"LiveView tests crashed on boot because the web endpoint lacked settings in the test environment", []string{gqc}, []string{"secret_key_base"}},
	// gqc 90: the LiveView process and the Ecto sandbox.
	{"the LiveView process could not use the test's database connection", []string{gqc}, []string{"sandbox"}},
	// gqc 86: lazy_html as a test dependency.
	{"which HTML parser did we have to add for the LiveView tests?", []string{gqc}, []string{"lazy_html"}},
	// gqc 10, 14: stale build artifacts, a forced recompile.
	{"compiler warnings about a module that did exist: how did we get rid of them?", []string{gqc}, []string{"stale", "recompile"}},
	// gqc 146, 156: 87 tests and 14 doctests pass.
	{"how many tests were green at the end of the review launch work?", []string{gqc}, []string{"87 tests"}},
	// gqc 107, 153: close_review_session closes every open annotation.
	{"one click on the review page to resolve every open annotation", []string{gqc}, []string{"close_review_session", "bulk-closes", "Close review session"}},
	// gqc 123: an ETS-backed token store.
	{"where are the one-time tokens for starting a review chat kept?", []string{gqc}, []string{"token store", "ETS"}},
	// gqc 100, 105: the root layout renders no flash messages.
	{"success and error notices never appeared on the review page", []string{gqc}, []string{"flash"}},
	// gqc 122: the default port is 1100.
	{"which port does the spotter server use when none is set?", []string{gqc}, []string{"1100"}},
	// gqc 49: gqc.4 → gqc.5 → gqc.6 and gqc.7.
	{"in which order can the remaining annotation subtasks be tackled?", []string{gqc}, []string{"dependency chain", "depends on", "depend on"}},
	// gqc 157–158: "did you push?" "Yes — everything is pushed".
	{"are my commits on origin yet?", []string{gqc}, []string{"pushed"}},
	// gqc 38–39, 93: Credo reports no issues.
	{"did the Elixir style checker flag anything?", []string{gqc}, []string{"Credo"}},
	// phxDown 1, phxBg 1–3: the Phoenix server does not start.
	{"the Phoenix app will not come up when I launch it with mix", []string{phxDown, phxBg}, []string{"phx.server", "Phoenix"}},
	// phxBg 1–3: Phoenix started in the background.
	{"launch the web server so it keeps running while I work", []string{phxBg}, []string{"background"}},
	// phxBg 10: xterm.js scrollback inside tmux.
	{"scrolling up in the browser terminal doesn't work when tmux runs inside it", []string{phxBg}, []string{"xterm"}},
	// todo 1–9: the TODO app split into parallel subtasks.
	{"build a small task tracker in Next.js by splitting the work across parallel sub-agents", []string{todo}, []string{"TODO"}},
	// todo/sidechain-60dade70 5–7: create-next-app waits for input; --yes.
	{"the Next.js scaffolding command kept stopping for interactive answers", []string{todo}, []string{"--yes", "waiting for input"}},
	// todo 9, todo/sidechain-0d692b0f 1, 26: todos kept in localStorage.
	{"make the todo list survive a page refresh", []string{todo}, []string{"localStorage"}},
	// todo/sidechain-0d692b0f 26: useTodos on useReducer.
	{"is the todos state hook built on a reducer or on plain state?", []string{todo}, []string{"useReducer"}},
	// todo/sidechain-f4ab2bf6 32–33: title against text, TodoStatus against TodoFilter.
	{"the two type definitions of a todo disagree on the field names", []string{todo, docs}, []string{"discrepancy", "instead of"}},
	// docs/sidechain-83e2917c 8: a dual structure, components at the root and in todo-app.
	{"why do the components exist twice, at the top level and inside the app folder?", []string{docs}, []string{"dual structure", "duplicated"}},
	// docs 12, docs/sidechain-6340ddef 4: Next.js 15.5.2, React 19.1.0, Tailwind v4.
	{"which versions of Next, React and Tailwind are installed now?", []string{docs}, []string{"15.5.2", "19.1.0"}},
	// initMD 7–9: a basic CLAUDE.md for an empty repository.
	{"what did the agent write into the guide file when the repository had no code yet?", []string{initMD}, []string{"empty"}},
	// todo/sidechain-60dade70 1, 35; docs/sidechain-6340ddef 4: lucide-react.
	{"which icon set does the todo app use?", []string{todo, docs}, []string{"lucide"}},
	// todo/sidechain-f4ab2bf6 43–49: the build failed, the dev server ran instead.
	{"the production build of the todo app failed; what did we do about it?", []string{todo}, []string{"build issue"}},
	// goVer 3, 11, 22: go 1.24 in go.mod, 3.10 in .python-version.
	{"set the go directive in go.mod and the Python version file to the versions we support", []string{goVer}, []string{"1.24", "3.10"}},
	// goVer 6–7, 22: hardcoded Python version strings.
	{"is any Python version still hard-coded somewhere in the repo?", []string{goVer}, []string{"hardcoded"}},
	// goVer 22: version notes added to README.zh-TW.md and README.zh-CN.md.
	{"add a note on the required toolchain versions to the Chinese READMEs", []string{goVer}, []string{"README.zh"}},
}

// paraphrase is a question, the sessions on topic for it, and the
// markers of an on-topic turn (see paraphrases).
type paraphrase struct {
	prompt  string
	targets []string
	markers []string
}

// heldOut are more paraphrases, written as those above (from the turns
// named beside each, in other words) after the some-words tier came to
// weigh each message by the share of the question's words it holds, and
// not run before that change was made: how recall does on questions it
// was not tuned on.
var heldOut = []paraphrase{
	// gqc 78: live/2 needs Phoenix.ConnTest imported.
	{"the LiveView test could not call the request helpers until we pulled in another testing module", []string{gqc}, []string{"Phoenix.ConnTest"}},
	// gqc 75: no ConnCase module, tests use raw ExUnit.Case.
	{"there was no shared setup module for the web tests; what did the new test start from instead?", []string{gqc}, []string{"ConnCase", "ExUnit.Case"}},
	// gqc 142: Tmux.launch_project_review needs a real tmux.
	{"how did we test the button that starts a review chat on a machine with no terminal multiplexer?", []string{gqc}, []string{"real tmux", "launch_project_review"}},
	// gqc 18–19: the TranscriptSelection hook in app.js.
	{"which browser-side script lets someone select lines of the conversation log to annotate?", []string{gqc}, []string{"TranscriptSelection"}},
	// goVer 4, 14: TODO.md removed.
	{"did we also delete the leftover task notes file in the Go and Python repo?", []string{goVer}, []string{"TODO.md"}},
	// goVer 4, 8: the latest Go release looked up online.
	{"did anyone look up online what the newest Go release is?", []string{goVer}, []string{"latest Go release"}},
	// todo/sidechain-60dade70 12–16: the default boilerplate cleaned up.
	{"strip out the starter files the project generator created before adding our own folders", []string{todo}, []string{"boilerplate"}},
	// gqc 150: all 7 tasks closed, then the epic.
	{"were all seven pieces of the larger feature closed out in the tracker?", []string{gqc}, []string{"7 tasks", "All 7"}},
}

// heldOutScale are paraphrases written as heldOut's are, from turns of
// testdata/agent-sessions that no question above was written from and
// that no change of recall was tuned on (the todo app's data-model and
// components sub-agents, and the middle of gqc), before recall was run
// on them and before recall came to rank at every size of store and to
// show a long turn around its rarest matched words (issue 103). They
// are kept apart from the questions above: a change that lifts those
// and not these is not an improvement.
var heldOutScale = []paraphrase{
	// todo/sidechain-f4546a51 23, 29: the type files written with cat.
	{"the file-writing tool kept losing the new type definitions; what did the agent fall back to?", []string{todo}, []string{"using bash", "without the write tool"}},
	// todo/sidechain-f4546a51 33: tsc --noEmit over the types.
	{"were the interface files checked by the compiler without emitting output?", []string{todo}, []string{"noEmit", "compilation succeeded"}},
	// todo/sidechain-f4546a51 38: the types were in todo-app/types.
	{"where did the folder of type definitions really end up after it seemed to vanish?", []string{todo}, []string{"todo-app/types"}},
	// gqc 112: 76 tests and 14 doctests after gqc.6.
	{"what was the test count once the sixth piece of the epic was finished and pushed?", []string{gqc}, []string{"76 tests"}},
	// gqc 130–132: the review script added to hooks.json.
	{"which plugin config file got the review script added to the agent's startup event?", []string{gqc}, []string{"hooks.json"}},
	// gqc 137–138: the "Open conversation" button in the header.
	{"where on the review page did we put the button that opens a chat about it?", []string{gqc}, []string{"Open conversation"}},
	// gqc 31–37: the test environment's dependencies compiled first.
	{"why did the first run of the test suite sit waiting so long?", []string{gqc}, []string{"first-time", "test dependencies", "Still compiling"}},
	// gqc 61: 18 resource tests for gqc.4's state.
	{"how many of the resource tests passed after the state change of the fourth subtask?", []string{gqc}, []string{"18 resource tests"}},
	// todo/sidechain-6690d10e 10: a done todo's text struck through.
	{"is a finished item shown crossed out in the list?", []string{todo}, []string{"strikethrough"}},
	// todo/sidechain-6690d10e 10: the add form's validation.
	{"does the form for new items refuse blank entries?", []string{todo}, []string{"prevents empty", "validation"}},
}

// onTopic is the place (from 1) of the first turn of res that is on
// topic for p, 0 when none is.
func onTopic(res *recall.Result, keys map[string]string, targets, markers []string) int {
	for i, turn := range res.Turns {
		k := keys[turn.SessionID]
		right := false
		for _, target := range targets {
			right = right || k == target || strings.HasPrefix(k, target+"/")
		}
		if !right {
			continue
		}
		if len(markers) == 0 {
			// A question of no marker (LoCoMo's): any turn of its
			// evidence sessions.
			return i + 1
		}
		text := strings.ToLower(turn.Text)
		for _, m := range markers {
			if strings.Contains(text, strings.ToLower(m)) {
				return i + 1
			}
		}
	}
	return 0
}

// Recall with every project in scope (loom recall -a) over the public
// Claude Code and Codex sessions of testdata/agent-sessions, each in
// the project its importer puts it in, on paraphrased questions: an
// on-topic turn within the default budget for at least minParaphrases
// of them, and for every question that the same recall inside its
// target's project answers on topic.
func TestRecallParaphrasesAcrossProjects(t *testing.T) {
	ctx := context.Background()
	st, engine := store(t)
	// Each session in the project of its working directory, as loom
	// session import --from puts it.
	im := &importer.Importer{Store: st, UserID: "alice", Project: paths.ProjectOf}
	if _, err := im.Run(ctx, []importer.Target{
		{Format: claudecode.Format{}, Roots: []string{samples + "/claude-code"}, Explicit: true},
		{Format: codex.Format{}, Roots: []string{samples + "/codex/vibecodingtracker-codex.jsonl"}, Explicit: true},
	}); err != nil {
		t.Fatal(err)
	}
	all, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	project := map[string]string{}
	projects := map[string]bool{}
	for _, s := range all {
		keys[s.ID] = s.Key
		project[s.Key] = s.Project.ID
		projects[s.Project.ID] = true
	}
	if len(projects) < 4 {
		t.Fatalf("the samples are in %d projects, want 4", len(projects))
	}
	across, within, lost := recallEach(t, st, keys, project, paraphrases)
	t.Logf("%s: an on-topic turn for %d of %d paraphrases across projects, %d inside their projects (%d of those not across)",
		engine, across, len(paraphrases), within, lost)
	heldAcross, heldWithin, heldLost := recallEach(t, st, keys, project, heldOut)
	t.Logf("%s: held out: an on-topic turn for %d of %d across projects, %d inside their projects (%d of those not across)",
		engine, heldAcross, len(heldOut), heldWithin, heldLost)
	scaleAcross, scaleWithin, scaleLost := recallEach(t, st, keys, project, heldOutScale)
	t.Logf("%s: held out (issue 103): an on-topic turn for %d of %d across projects, %d inside their projects (%d of those not across)",
		engine, scaleAcross, len(heldOutScale), scaleWithin, scaleLost)
	if scaleAcross < minHeldOutScale {
		t.Errorf("an on-topic turn across projects for %d of %d held-out paraphrases (issue 103), want at least %d", scaleAcross, len(heldOutScale), minHeldOutScale)
	}
	if across < minParaphrases {
		t.Errorf("an on-topic turn across projects for %d of %d paraphrases, want at least %d", across, len(paraphrases), minParaphrases)
	}
	if lost > maxLost {
		t.Errorf("%d paraphrases answered on topic inside their project are not across projects, want at most %d", lost, maxLost)
	}
	if heldAcross < minHeldOut {
		t.Errorf("an on-topic turn across projects for %d of %d held-out paraphrases, want at least %d", heldAcross, len(heldOut), minHeldOut)
	}
}

// recallEach recalls each of ps with every project in scope and inside
// its first target's project, logs where the first on-topic turn is in
// each answer, and counts the questions answered on topic across
// projects, inside their project, and inside it but not across.
func recallEach(t *testing.T, st loom.Engine, keys, project map[string]string, ps []paraphrase) (across, within, lost int) {
	t.Helper()
	ctx := context.Background()
	for _, p := range ps {
		for _, target := range p.targets {
			if project[target] == "" {
				t.Fatalf("%q: no session %s", p.prompt, target)
			}
		}
		res, err := recall.Recall(ctx, st, recall.Options{Prompt: p.prompt, UserID: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Scope != recall.ScopeEveryProject {
			t.Fatalf("scope %q", res.Scope)
		}
		a := onTopic(res, keys, p.targets, p.markers)
		in, err := recall.Recall(ctx, st, recall.Options{Prompt: p.prompt, UserID: "alice", ProjectID: project[p.targets[0]]})
		if err != nil {
			t.Fatal(err)
		}
		w := onTopic(in, keys, p.targets, p.markers)
		if a > 0 {
			across++
		}
		if w > 0 {
			within++
			if a == 0 {
				lost++
			}
		}
		t.Logf("every project: turn %d of %d; its project: turn %d of %d: %q", a, len(res.Turns), w, len(in.Turns), p.prompt)
		if a == 0 || a > 3 {
			for _, turn := range res.Turns[:min(3, len(res.Turns))] {
				t.Logf("    %s %s %s: %.100s", keys[turn.SessionID], turn.Role, turn.Tier, turn.Text)
			}
		}
	}
	return across, within, lost
}

// What recall across projects holds to on the paraphrases, on either
// engine. Before the sessions' other hits were merged with the best hits
// of the sessions that score less (internal/sqlstore bySession), it
// answered 21 of the 31 on topic and lost 4 of the 25 that recall inside
// the project answered: each session's one match of a common word filled
// the page before the second message of the session that answers; 25
// on SQLite and 24 on PostgreSQL after, and 25 on both once a reply that
// only narrates is recalled with what matched (package recall). Since
// the some-words tier weighs each message by the share of the question's
// words it holds (sqlstore.Coordinated), 26 on SQLite and 27 on
// PostgreSQL, losing 1 and 0 of those answered inside their project
// (before: 1 and 2); the held-out questions, 7 of 8 on both engines
// before and after. Since a compaction's summary that is the best hit
// comes first (package recall), 27 on SQLite and 28 on PostgreSQL.
const (
	minParaphrases = 27
	minHeldOut     = 7
	// minHeldOutScale holds heldOutScale to what recall answered when
	// they were written (6 of 10 across projects on SQLite, 6 inside
	// their projects; 5 and 6 on PostgreSQL).
	minHeldOutScale = 5
	// maxLost is how many questions answered inside their project may
	// go unanswered across projects: what genuinely competes ("which
	// port does the spotter server use", whose on-topic turn holds one
	// of the question's six words and is the 12th of 20 inside its
	// project on SQLite).
	maxLost = 1
)
