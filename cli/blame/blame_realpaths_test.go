package blame_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/gittest"
	"github.com/loomhq/loom/providertest"
)

// TestBlameRealClaudeCodeEditPaths: the real Claude Code edits by the
// paths the usual scenario does not take — an Edit with replace_all, a
// NotebookEdit of a human's notebook, a cp of its file then changed by
// a human, a perl -pi and a sed -i with two expressions on lines its
// Write put in before any commit — and loom blame is scored against
// who wrote each line.
func TestBlameRealClaudeCodeEditPaths(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx, p, a := startClaudeCode(t)
	dir, git := repoDir(t, fx)
	led := &ledger{t: t, dir: dir, files: map[string][]tline{}}
	human := func(rel, content string) {
		clitest.MustWrite(t, filepath.Join(dir, rel), content)
		led.created(rel, content, "human")
	}
	session := func(n int, label func(rel, text string) string, calls ...providertest.ToolCall) {
		t.Helper()
		snap := led.snapshot()
		token := fmt.Sprintf("PATHS-%d", n)
		for i := range calls {
			calls[i].ID = fmt.Sprintf("call_p%d_%d", n, i)
		}
		p.add(token, calls)
		a.run(t, dir, token+": make the changes")
		led.ran(snap, label)
	}
	path := func(rel string) string { return filepath.Join(dir, rel) }

	human("README.md", "# Stations\n")
	human("analysis.ipynb", stationsNotebook)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "start")

	session(1, one("write"), a.write(path("src/conf.py"), confPy))
	led.is("src/conf.py", confPy)
	git("add", "-A")
	git("commit", "-qm", "conf")

	old := "    log.info(\"legacy value read: %s\", value)\n"
	nw := "    metrics.count(\"value_reads\")\n    log.debug(\"value read from the station: %s\", value)\n"
	calls := append(a.editFirst(path("src/conf.py")),
		providertest.ToolCall{Name: "Edit", Args: args(map[string]any{"file_path": path("src/conf.py"), "old_string": old, "new_string": nw, "replace_all": true})},
		providertest.ToolCall{Name: "Read", Args: args(map[string]any{"file_path": path("analysis.ipynb")})},
		providertest.ToolCall{Name: "NotebookEdit", Args: args(map[string]any{"notebook_path": path("analysis.ipynb"), "cell_id": "load", "cell_type": "code", "edit_mode": "insert",
			"new_source": "totals = frame.groupby('station').sum()\ntotals.plot(kind='bar', title='Totals by station')"})},
		a.write(path("src/flags.py"), flagsPy),
		a.shell("perl -pi -e 's/DEBUG_MODE_ENABLED = True/DEBUG_MODE_ENABLED = False/' src/flags.py"),
		a.shell("sed -i -e 's/REQUEST_TIMEOUT_SECONDS = 10/REQUEST_TIMEOUT_SECONDS = 30/' -e 's/legacy_client_name = /client_name_from_env = /' src/flags.py"),
		a.shell("cp src/conf.py src/conf_station.py"))
	shellLines := []string{"DEBUG_MODE_ENABLED = False", "REQUEST_TIMEOUT_SECONDS = 30", "client_name_from_env = "}
	session(2, func(rel, text string) string {
		switch rel {
		case "src/conf.py":
			return "many-places"
		case "analysis.ipynb":
			return "notebook"
		case "src/conf_station.py":
			return "copy"
		}
		if slices.ContainsFunc(shellLines, func(s string) bool { return strings.Contains(text, s) }) {
			return "sed"
		}
		return "write"
	}, calls...)
	led.is("src/conf.py", strings.ReplaceAll(confPy, old, nw))
	led.is("src/flags.py", strings.NewReplacer("DEBUG_MODE_ENABLED = True", "DEBUG_MODE_ENABLED = False",
		"REQUEST_TIMEOUT_SECONDS = 10", "REQUEST_TIMEOUT_SECONDS = 30", "legacy_client_name = ", "client_name_from_env = ").Replace(flagsPy))
	led.is("src/conf_station.py", strings.ReplaceAll(confPy, old, nw))
	if !strings.Contains(led.text("analysis.ipynb"), "Totals by station") {
		t.Fatalf("the agent did not insert the cell:\n%s", led.text("analysis.ipynb"))
	}
	git("add", "-A")
	git("commit", "-qm", "metrics, totals, flags")
	humanChangesCopy(led, git)

	fx.MustExec(t, "session", "import", "--from", "claude-code")
	score(t, fx, dir, led, "claude-code")
}

const confPy = `import logging

log = logging.getLogger(__name__)


def read_a(value):
    log.info("legacy value read: %s", value)
    return value


def read_b(value):
    log.info("legacy value read: %s", value)
    return value * 2


def read_c(value):
    log.info("legacy value read: %s", value)
    return value * 3
`

const flagsPy = `import os

DEBUG_MODE_ENABLED = True
REQUEST_TIMEOUT_SECONDS = 10
legacy_client_name = os.environ.get("CLIENT", "stations")
`

const stationsNotebook = `{
 "cells": [
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "load",
   "metadata": {},
   "outputs": [],
   "source": [
    "import pandas as pd\n",
    "frame = pd.read_csv('measurements.csv')"
   ]
  }
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 5
}
`

// TestBlameRealGeminiEveryPlace: the real Gemini CLI's replace of every
// occurrence of a text (allow_multiple, as 0.61 names what earlier
// versions called expected_replacements) wrote its lines at each place.
func TestBlameRealGeminiEveryPlace(t *testing.T) {
	clitest.RealAgentsOnce(t)
	g := clitest.StartGemini(t, "")
	p := geminiPlans(g.Srv)
	dir, git := repoDir(t, g.Fx)
	g.Dir = dir
	led := &ledger{t: t, dir: dir, files: map[string][]tline{}}
	clitest.MustWrite(t, filepath.Join(dir, "README.md"), "# Stations\n")
	led.created("README.md", "# Stations\n", "human")
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "start")
	conf := filepath.Join(dir, "src/conf.py")
	p.add("EVERY-1", []providertest.ToolCall{{ID: "call_e1", Name: "write_file", Args: args(map[string]any{"file_path": conf, "content": confPy})}})
	snap := led.snapshot()
	g.Run("", "EVERY-1: write the configuration")
	led.ran(snap, one("write"))
	led.is("src/conf.py", confPy)
	git("add", "-A")
	git("commit", "-qm", "conf")
	old := "    log.info(\"legacy value read: %s\", value)\n"
	nw := "    metrics.count(\"value_reads\")\n    log.debug(\"value read from the station: %s\", value)\n"
	p.add("EVERY-2", []providertest.ToolCall{{ID: "call_e2", Name: "replace", Args: args(map[string]any{"file_path": conf, "old_string": old, "new_string": nw,
		"allow_multiple": true, "instruction": "Count every read and log it at debug level."})}})
	snap = led.snapshot()
	g.Run("", "EVERY-2: count the reads")
	led.ran(snap, one("many-places"))
	led.is("src/conf.py", strings.ReplaceAll(confPy, old, nw))
	git("add", "-A")
	git("commit", "-qm", "metrics")
	g.Fx.MustExec(t, "session", "import", "--from", "gemini")
	score(t, g.Fx, dir, led, "gemini")
}

// TestBlameRealClaudeCodeWorktrees: the real Claude Code works in a
// second worktree of the repository. Its edit of hooks/ctl.go is never
// committed; a human then commits the same handler in the main
// worktree: the human's. Its write of hooks/merged.go is committed
// there and merged: its own.
func TestBlameRealClaudeCodeWorktrees(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx, p, a := startClaudeCode(t)
	dir, git := repoDir(t, fx)
	led := &ledger{t: t, dir: dir, files: map[string][]tline{}}
	clitest.MustWrite(t, filepath.Join(dir, "hooks/ctl.go"), ctlGo)
	led.created("hooks/ctl.go", ctlGo, "human")
	clitest.MustWrite(t, filepath.Join(dir, "README.md"), "# Hooks\n")
	led.created("README.md", "# Hooks\n", "human")
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "start")
	inWorktree(t, fx, led, git, a, func(l *ledger, label func(rel, text string) string, calls ...providertest.ToolCall) {
		for i := range calls {
			calls[i].ID = fmt.Sprintf("call_w_%d", i)
		}
		p.add("WORKTREE-1", calls)
		snap := l.snapshot()
		a.run(t, l.dir, "WORKTREE-1: run the hooks and merge controllers")
		l.ran(snap, label)
	})
	fx.MustExec(t, "session", "import", "--from", "claude-code")
	score(t, fx, dir, led, "claude-code")
}

// inWorktree is a session of a in a second worktree of the repository
// (run by session) that edits the human's hooks/ctl.go, never
// committed, and writes hooks/merged.go, committed there and merged;
// then the human commits the same handler in the main worktree: its
// lines are the human's.
func inWorktree(t *testing.T, fx *clitest.Fixture, led *ledger, git func(args ...string), a realAgent,
	session func(l *ledger, label func(rel, text string) string, calls ...providertest.ToolCall)) {
	t.Helper()
	wt := filepath.Join(fx.Home, "repo-feature")
	git("worktree", "add", "-q", "-b", "feature", wt)
	if real, err := filepath.EvalSymlinks(wt); err == nil {
		wt = real
	}
	wled := &ledger{t: t, dir: wt, files: led.snapshot()}
	var calls []providertest.ToolCall
	if a.editFirst != nil {
		calls = a.editFirst(filepath.Join(wt, "hooks/ctl.go"))
	}
	calls = append(calls, a.edit(filepath.Join(wt, "hooks/ctl.go"), "type Controller struct{}\n", "type Controller struct{}\n"+ctlHandler),
		a.write(filepath.Join(wt, "hooks/merged.go"), mergedGo))
	session(wled, one("worktree"), calls...)
	wled.is("hooks/ctl.go", ctlGo+ctlHandler)
	wled.is("hooks/merged.go", mergedGo)
	gittest.Git(t, wt, time.Time{}, "add", "hooks/merged.go")
	gittest.Git(t, wt, time.Time{}, "commit", "-qm", "merge controllers")
	git("merge", "-q", "--no-ff", "-m", "feature", "feature")
	led.files["hooks/merged.go"] = wled.files["hooks/merged.go"]
	led.labelled("hooks/merged.go", "worktree")
	// The human writes the same handler in the main worktree.
	clitest.MustWrite(t, filepath.Join(led.dir, "hooks/ctl.go"), ctlGo+ctlHandler)
	led.created("hooks/ctl.go", ctlGo+ctlHandler, "human")
	led.labelled("hooks/ctl.go", "worktree")
	git("add", "-A")
	git("commit", "-qm", "run hooks")
}

// pathCalls are the calls of an agent's tools the paths scenario makes
// beside realAgent's; nil for a tool the agent does not have.
type pathCalls struct {
	// many makes several changes in one file by one call (a patch of
	// several hunks): each of old replaced by the new at its index.
	many func(path string, old, new []string) providertest.ToolCall
	// move renames from to to and replaces old by new in it in one call
	// (apply_patch's Move to).
	move func(from, to, old, new string) providertest.ToolCall
	// overwrite writes content over a file that exists (write_file).
	overwrite func(path, content string) providertest.ToolCall
}

// pathsScenario runs an agent through the paths its usual scenario does
// not take: a change of several places by one call, a move, a file
// written over, its own sed -i of lines committed and of lines it wrote
// in the same session, a cp of its file that a human then changes, and
// a session in a second worktree whose edit of a human's file is never
// committed (the human commits the same lines in the main worktree)
// while its new file is committed there and merged. Two files no
// session touched sit beside them. Every agent's line is what the
// program left on disk (ledger.ran).
func pathsScenario(t *testing.T, fx *clitest.Fixture, p *plans, a realAgent, pc pathCalls) {
	t.Helper()
	dir, git := repoDir(t, fx)
	led := &ledger{t: t, dir: dir, files: map[string][]tline{}}
	path := func(rel string) string { return filepath.Join(dir, rel) }
	n := 0
	session := func(l *ledger, label func(rel, text string) string, calls ...providertest.ToolCall) {
		t.Helper()
		n++
		token := fmt.Sprintf("ROUTE-%d-%s", n, a.tool)
		for i := range calls {
			calls[i].ID = fmt.Sprintf("call_r%d_%d", n, i)
		}
		snap := l.snapshot()
		p.add(token, calls)
		a.run(t, l.dir, token+": make the changes")
		l.ran(snap, label)
	}
	human := func(rel, content string) {
		clitest.MustWrite(t, path(rel), content)
		led.created(rel, content, "human")
	}

	human("README.md", "# Stations\n")
	human("src/human.py", humanPy)
	human("hooks/ctl.go", ctlGo)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "start")

	session(led, one("write"), a.write(path("src/conf.py"), confPy), a.write(path("src/store.py"), storePy), a.write(path("src/flags.py"), flagsPy))
	led.is("src/conf.py", confPy)
	led.is("src/store.py", storePy)
	led.is("src/flags.py", flagsPy)
	git("add", "-A")
	git("commit", "-qm", "conf, store, flags")

	conf := confPy
	var calls []providertest.ToolCall
	if pc.many != nil {
		old := []string{"    return value * 2\n", "    return value * 3\n"}
		nw := []string{"    metrics.count(\"station_b_reads\")\n    return value * 2\n", "    metrics.count(\"station_c_reads\")\n    return value * 3\n"}
		calls = append(calls, pc.many(path("src/conf.py"), old, nw))
		for i := range old {
			conf = strings.Replace(conf, old[i], nw[i], 1)
		}
	}
	if pc.overwrite != nil {
		conf = strings.Replace(conf, "    return value * 2\n", "    return round(value * 2, 3)\n", 1) + overwritePy
		calls = append(calls, pc.overwrite(path("src/conf.py"), conf))
	}
	if pc.move != nil {
		calls = append(calls, pc.move(path("src/store.py"), path("src/storage.py"), "    conn = sqlite3.connect(path)\n", "    conn = sqlite3.connect(path, timeout=30)\n"))
	}
	calls = append(calls,
		a.shell("sed -i -e 's/DEBUG_MODE_ENABLED = True/DEBUG_MODE_ENABLED = False/' -e 's/REQUEST_TIMEOUT_SECONDS = 10/REQUEST_TIMEOUT_SECONDS = 45/' src/flags.py"),
		a.write(path("src/limits.py"), limitsPy),
		a.shell("sed -i 's/STATION_BATCH_LIMIT = 500/STATION_BATCH_LIMIT = 250/' src/limits.py"),
		a.shell("cp src/conf.py src/conf_station.py"))
	sedLines := []string{"DEBUG_MODE_ENABLED = False", "REQUEST_TIMEOUT_SECONDS = 45", "STATION_BATCH_LIMIT = 250"}
	session(led, func(rel, text string) string {
		switch {
		case slices.ContainsFunc(sedLines, func(s string) bool { return strings.Contains(text, s) }):
			return "sed"
		case rel == "src/conf.py" && pc.many != nil:
			return "many-places"
		case rel == "src/conf.py":
			return "overwrite"
		case rel == "src/storage.py":
			return "move"
		case rel == "src/conf_station.py":
			return "copy"
		}
		return "write"
	}, calls...)
	led.is("src/conf.py", conf)
	led.is("src/conf_station.py", conf)
	led.is("src/flags.py", strings.NewReplacer("DEBUG_MODE_ENABLED = True", "DEBUG_MODE_ENABLED = False", "REQUEST_TIMEOUT_SECONDS = 10", "REQUEST_TIMEOUT_SECONDS = 45").Replace(flagsPy))
	led.is("src/limits.py", strings.Replace(limitsPy, "500", "250", 1))
	if pc.move != nil {
		led.is("src/storage.py", strings.Replace(storePy, "sqlite3.connect(path)", "sqlite3.connect(path, timeout=30)", 1))
	}
	git("add", "-A")
	git("commit", "-qm", "metrics, flags, limits, station")
	humanChangesCopy(led, git)

	// A session in a worktree of its own.
	inWorktree(t, fx, led, git, a, session)

	fx.MustExec(t, "session", "import", "--from", a.tool)
	score(t, fx, dir, led, a.tool)
}

// humanChangesCopy is a human's change of a line of the agent's copy,
// committed: the line is mixed.
func humanChangesCopy(led *ledger, git func(args ...string)) {
	led.t.Helper()
	led.replaced("src/conf_station.py", "def read_a(value):\n", "def read_a(value):  # the first station\n", "human")
	clitest.MustWrite(led.t, filepath.Join(led.dir, "src/conf_station.py"), led.text("src/conf_station.py"))
	git("add", "-A")
	git("commit", "-qm", "station")
}

const humanPy = `"""Helpers a person wrote."""


def station_name(code):
    return code.strip().upper()
`

const storePy = `"""Where the station readings are kept."""

import sqlite3


def open_store(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS readings (station TEXT, value REAL)")
    return conn


def save_reading(conn, station, value):
    conn.execute("INSERT INTO readings VALUES (?, ?)", (station, value))
`

const limitsPy = `MAX_RETRIES_PER_STATION = 3
BACKOFF_BASE_SECONDS = 2
STATION_BATCH_LIMIT = 500
`

const overwritePy = `

def read_all(values):
    return [read_a(v) for v in values]
`

const ctlGo = "package hooks\n\n// Controller runs the hooks of a repository.\ntype Controller struct{}\n"

const ctlHandler = "\n// RunHooks runs each hook of the controller in turn.\nfunc (c *Controller) RunHooks(ctx context.Context) error {\n\tfor _, h := range c.hooks {\n\t\tif err := h.Run(ctx); err != nil {\n\t\t\treturn fmt.Errorf(\"run hook %s: %w\", h.Name, err)\n\t\t}\n\t}\n\treturn nil\n}\n"

const mergedGo = "package hooks\n\n// Merge joins the hooks of two controllers.\nfunc Merge(a, b *Controller) *Controller {\n\treturn &Controller{hooks: append(a.hooks, b.hooks...)}\n}\n"

// codexPatches are Codex's calls of apply_patch by call (a command of
// its shell tool, or a script of code mode) that the paths scenario
// makes.
func codexPatches(call func(patch string) providertest.ToolCall) pathCalls {
	return pathCalls{
		many: func(path string, old, new []string) providertest.ToolCall {
			var b strings.Builder
			b.WriteString("*** Begin Patch\n*** Update File: " + path + "\n")
			for i := range old {
				b.WriteString("@@\n")
				for _, l := range fileedit.Lines(old[i]) {
					b.WriteString("-" + l + "\n")
				}
				for _, l := range fileedit.Lines(new[i]) {
					b.WriteString("+" + l + "\n")
				}
			}
			return call(b.String() + "*** End Patch\n")
		},
		move: func(from, to, old, new string) providertest.ToolCall {
			p := updatePatch(from, old, new)
			return call(strings.Replace(p, "*** Update File: "+from+"\n", "*** Update File: "+from+"\n*** Move to: "+to+"\n", 1))
		},
	}
}

// TestBlameRealCodexPaths: the real Codex, apply_patch run as a command
// of its shell tool (the JSON arguments of exec_command), by every path
// of pathsScenario it has: a patch of two hunks, a move, sed -i, cp and
// a second worktree.
func TestBlameRealCodexPaths(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx := clitest.NewEmptyFixture(t)
	p, run := startCodexShell(t, fx)
	pathsScenario(t, fx, p, codexAgent(run, codexShellPatch, codexShell), codexPatches(codexShellPatch))
}

// TestBlameRealCodexCodeModePaths: the same paths by Codex in code
// mode, each change a call of tools.apply_patch or tools.exec_command
// in the script of its exec tool.
func TestBlameRealCodexCodeModePaths(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx := clitest.NewEmptyFixture(t)
	p, run := startCodexModel(t, fx, agentclitest.CodexCodeMode, "")
	pathsScenario(t, fx, p, codexAgent(run, codeModePatch, codeModeShell), codexPatches(codeModePatch))
}

// TestBlameRealCodexFreeformPaths: the same paths by Codex with a model
// its catalog gives apply_patch as a tool of its own (gpt-5.5: a
// free-form tool, the patch the call's whole input), commands by
// exec_command.
func TestBlameRealCodexFreeformPaths(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx := clitest.NewEmptyFixture(t)
	p, run := startCodexModel(t, fx, agentclitest.Codex, "gpt-5.5")
	patch := func(patch string) providertest.ToolCall {
		return providertest.ToolCall{Name: "apply_patch", Args: patch}
	}
	pathsScenario(t, fx, p, codexAgent(run, patch, codexShell), codexPatches(patch))
}

// startCodexModel is the real Codex of pkg against a fake model that
// answers by plans, the model of its own catalog named model ("" for
// the version's default), and how it runs a prompt in a directory.
func startCodexModel(t *testing.T, fx *clitest.Fixture, pkg agentclitest.Package, model string) (*plans, func(t *testing.T, dir, prompt string)) {
	bin := agentclitest.Install(t, pkg)
	p := newPlans()
	srv := responsesServer(t, p)
	codexHome := filepath.Join(fx.Home, ".codex")
	conf := []string{`model_provider = "fake"`, `[model_providers.fake]`, `name = "fake"`, `base_url = "` + srv.URL + `/v1"`,
		`wire_api = "responses"`, `env_key = "FAKE_OPENAI_KEY"`, `request_max_retries = 0`, `stream_max_retries = 0`}
	if model != "" {
		conf = append([]string{`model = "` + model + `"`}, conf...)
	}
	clitest.WriteSettings(t, filepath.Join(codexHome, "config.toml"), strings.Join(conf, "\n"))
	env := agentclitest.Env(fx.Home, "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=sk-fake", "LOOM_HOME="+fx.Home)
	return p, func(t *testing.T, dir, prompt string) {
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "exec", "--skip-git-repo-check", "-s", "danger-full-access", prompt)
	}
}

// codeModePatch and codeModeShell are Codex's exec tool in code mode
// calling apply_patch with a patch and exec_command with a command, as
// a model writes the script: the argument a literal.
func codeModePatch(patch string) providertest.ToolCall { return codeModeCall("apply_patch", patch) }

func codeModeShell(cmd string) providertest.ToolCall {
	return codeModeCall("exec_command", map[string]any{"cmd": cmd})
}

func codeModeCall(call string, arg any) providertest.ToolCall {
	b, _ := json.Marshal(arg)
	return providertest.ToolCall{Name: "exec", Args: "const r = await tools." + call + "(" + string(b) + ");\ntext(JSON.stringify(r));\n"}
}

// TestBlameRealGeminiPaths: the real Gemini CLI by every path of
// pathsScenario it has: write_file over a file it wrote, sed -i by
// run_shell_command, cp and a second worktree.
func TestBlameRealGeminiPaths(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx, p, a := startGemini(t)
	pathsScenario(t, fx, p, a, pathCalls{overwrite: a.write})
}
