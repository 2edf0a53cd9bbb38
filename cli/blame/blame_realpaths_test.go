package blame_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/gittest"
	"github.com/loomhq/loom/providertest"
)

// rewritten records rel as the agent's tool left it on disk: its lines
// that are lines of the file before stay whose they were, the others
// are who's.
func (l *ledger) rewritten(rel, who string) {
	l.t.Helper()
	b, err := os.ReadFile(filepath.Join(l.dir, rel))
	if err != nil {
		l.t.Fatal(err)
	}
	cur := l.files[rel]
	old := make([]string, len(cur))
	for i, x := range cur {
		old[i] = x.text
	}
	nl := fileedit.Lines(string(b))
	m := fileedit.Match(old, nl)
	out := make([]tline, len(nl))
	for j, s := range nl {
		out[j] = tline{s, who}
		if m[j] >= 0 {
			out[j].who = cur[m[j]].who
		}
	}
	l.files[rel] = out
}

// TestBlameRealClaudeCodeEditPaths: the real Claude Code edits by the
// paths the usual scenario does not take — an Edit with replace_all, a
// NotebookEdit of a human's notebook, a cp of its file then changed by
// a human, a perl -pi and a sed -i with two expressions on lines its
// Write put in before any commit — and loom blame is scored against
// who wrote each line.
func TestBlameRealClaudeCodeEditPaths(t *testing.T) {
	skipRealAgents(t)
	fx, p, a := startClaudeCode(t)
	dir, git := repoDir(t, fx)
	led := &ledger{t: t, dir: dir, files: map[string][]tline{}}
	human := func(rel, content string) {
		clitest.MustWrite(t, filepath.Join(dir, rel), content)
		led.created(rel, content, "human")
	}
	session := func(n int, calls ...providertest.ToolCall) {
		t.Helper()
		token := fmt.Sprintf("PATHS-%d", n)
		for i := range calls {
			calls[i].ID = fmt.Sprintf("call_p%d_%d", n, i)
		}
		p.add(token, calls)
		a.run(t, dir, token+": make the changes")
	}
	path := func(rel string) string { return filepath.Join(dir, rel) }

	human("README.md", "# Stations\n")
	human("analysis.ipynb", stationsNotebook)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "start")

	session(1, a.write(path("src/conf.py"), confPy))
	led.created("src/conf.py", confPy, "agent")
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
	session(2, calls...)
	for range 3 {
		led.replaced("src/conf.py", old, nw, "agent")
	}
	led.check("src/conf.py")
	led.rewritten("analysis.ipynb", "agent")
	led.created("src/flags.py", strings.NewReplacer("DEBUG_MODE_ENABLED = True", "DEBUG_MODE_ENABLED = False",
		"REQUEST_TIMEOUT_SECONDS = 10", "REQUEST_TIMEOUT_SECONDS = 30", "legacy_client_name = ", "client_name_from_env = ").Replace(flagsPy), "agent")
	led.check("src/flags.py")
	led.files["src/conf_station.py"] = append([]tline(nil), led.files["src/conf.py"]...)
	led.check("src/conf_station.py")
	git("add", "-A")
	git("commit", "-qm", "metrics, totals, flags")
	// A human changes a line of the copy.
	led.replaced("src/conf_station.py", "def read_a(value):\n", "def read_a(value):  # the first station\n", "human")
	clitest.MustWrite(t, path("src/conf_station.py"), led.text("src/conf_station.py"))
	git("add", "-A")
	git("commit", "-qm", "station")

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
	skipRealAgents(t)
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
	g.Run("", "EVERY-1: write the configuration")
	led.created("src/conf.py", confPy, "agent")
	git("add", "-A")
	git("commit", "-qm", "conf")
	old := "    log.info(\"legacy value read: %s\", value)\n"
	nw := "    metrics.count(\"value_reads\")\n    log.debug(\"value read from the station: %s\", value)\n"
	p.add("EVERY-2", []providertest.ToolCall{{ID: "call_e2", Name: "replace", Args: args(map[string]any{"file_path": conf, "old_string": old, "new_string": nw,
		"allow_multiple": true, "instruction": "Count every read and log it at debug level."})}})
	g.Run("", "EVERY-2: count the reads")
	for range 3 {
		led.replaced("src/conf.py", old, nw, "agent")
	}
	led.check("src/conf.py")
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
	skipRealAgents(t)
	fx, p, a := startClaudeCode(t)
	dir, git := repoDir(t, fx)
	led := &ledger{t: t, dir: dir, files: map[string][]tline{}}
	ctl := "package hooks\n\n// Controller runs the hooks of a repository.\ntype Controller struct{}\n"
	clitest.MustWrite(t, filepath.Join(dir, "hooks/ctl.go"), ctl)
	led.created("hooks/ctl.go", ctl, "human")
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "start")
	wt := filepath.Join(fx.Home, "repo-feature")
	git("worktree", "add", "-q", "-b", "feature", wt)
	if real, err := filepath.EvalSymlinks(wt); err == nil {
		wt = real
	}
	handler := "\n// RunHooks runs each hook of the controller in turn.\nfunc (c *Controller) RunHooks(ctx context.Context) error {\n\tfor _, h := range c.hooks {\n\t\tif err := h.Run(ctx); err != nil {\n\t\t\treturn fmt.Errorf(\"run hook %s: %w\", h.Name, err)\n\t\t}\n\t}\n\treturn nil\n}\n"
	merged := "package hooks\n\n// Merge joins the hooks of two controllers.\nfunc Merge(a, b *Controller) *Controller {\n\treturn &Controller{hooks: append(a.hooks, b.hooks...)}\n}\n"
	calls := append(a.editFirst(filepath.Join(wt, "hooks/ctl.go")),
		a.edit(filepath.Join(wt, "hooks/ctl.go"), "type Controller struct{}\n", "type Controller struct{}\n"+handler),
		a.write(filepath.Join(wt, "hooks/merged.go"), merged))
	for i := range calls {
		calls[i].ID = fmt.Sprintf("call_w_%d", i)
	}
	p.add("WORKTREE-1", calls)
	a.run(t, wt, "WORKTREE-1: run the hooks and merge controllers")
	gittest.Git(t, wt, time.Time{}, "add", "hooks/merged.go")
	gittest.Git(t, wt, time.Time{}, "commit", "-qm", "merge controllers")
	git("merge", "-q", "--no-ff", "-m", "feature", "feature")
	led.created("hooks/merged.go", merged, "agent")
	// The human writes the same handler in the main worktree.
	clitest.MustWrite(t, filepath.Join(dir, "hooks/ctl.go"), ctl+handler)
	led.created("hooks/ctl.go", ctl+handler, "human")
	git("add", "-A")
	git("commit", "-qm", "run hooks")

	fx.MustExec(t, "session", "import", "--from", "claude-code")
	score(t, fx, dir, led, "claude-code")
}
