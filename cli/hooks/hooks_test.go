package hooks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/cmdtest"
)

// claudeSettings is a Claude Code settings file with a hook of the
// user's own.
const claudeSettings = `{
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  }
}
`

// home is a home directory holding only Claude Code's directory, with
// claudeSettings; it returns where they are.
func home(t *testing.T) (Places, string) {
	t.Helper()
	h := t.TempDir()
	file := filepath.Join(h, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(claudeSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	return Places{Getenv: func(string) string { return "" }, Home: func() string { return h }}, file
}

// change runs install or uninstall on pl and returns what it printed.
func change(t *testing.T, pl Places, install, recall, dryRun bool, names ...string) string {
	t.Helper()
	ios, _, out, _ := term.Test()
	opts := &ChangeOptions{IO: ios, Places: pl, Program: func() string { return "/opt/bin/loom" },
		Install: install, Recall: recall, DryRun: dryRun, Agents: names}
	if err := changeRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// commandsOf returns the commands of each event of a settings file.
func commandsOf(t *testing.T, file string) (map[string][]string, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	var all map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &all)
	cmds := map[string][]string{}
	for ev, gs := range s.Hooks {
		for _, g := range gs {
			for _, h := range g.Hooks {
				cmds[ev] = append(cmds[ev], h.Command)
			}
		}
	}
	return cmds, all
}

// install writes loom's import hooks into the settings of the agent
// found, keeping what was there; a second install adds nothing; and
// uninstall takes out only loom's.
func TestHooksInstallThenUninstall(t *testing.T) {
	t.Parallel()
	pl, file := home(t)
	if got, want := change(t, pl, true, false, false), "Claude Code (~/.claude/settings.json): added: Stop, SessionEnd\n"; got != want {
		t.Errorf("install: %q, want %q", got, want)
	}
	cmds, all := commandsOf(t, file)
	imp := "/opt/bin/loom session import --hook claude-code"
	if all["model"] != "opus" || strings.Join(cmds["Stop"], "|") != "notify-send done|"+imp || strings.Join(cmds["SessionEnd"], "|") != imp || len(cmds) != 2 {
		t.Errorf("after install: model %v, hooks %q", all["model"], cmds)
	}
	if got := change(t, pl, true, false, false); !strings.HasSuffix(got, ": already there\n") {
		t.Errorf("install again: %q", got)
	}

	ios, _, out, _ := term.Test()
	if err := statusRun(&Options{IO: ios, Places: pl}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Claude Code  import yes  recall no   ~/.claude/settings.json\n") || !strings.Contains(out.String(), "Codex CLI    import no   recall -  ") {
		t.Errorf("status:\n%s", out)
	}

	before, _ := os.ReadFile(file)
	if got := change(t, pl, false, false, true); !strings.Contains(got, "would be removed: Stop, SessionEnd") {
		t.Errorf("uninstall --dry-run: %q", got)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Errorf("uninstall --dry-run changed the file:\n%s", after)
	}
	if got := change(t, pl, false, false, false); !strings.Contains(got, "removed: Stop, SessionEnd") {
		t.Errorf("uninstall: %q", got)
	}
	cmds, all = commandsOf(t, file)
	if all["model"] != "opus" || strings.Join(cmds["Stop"], "|") != "notify-send done" || len(cmds["SessionEnd"]) != 0 {
		t.Errorf("after uninstall: model %v, hooks %q", all["model"], cmds)
	}
}

// --recall adds the recall hooks too, to an agent named whose settings
// file does not exist yet.
func TestHooksInstallRecallNamed(t *testing.T) {
	t.Parallel()
	pl, _ := home(t)
	got := change(t, pl, true, true, false, "gemini")
	if !strings.Contains(got, "Gemini CLI (~/.gemini/settings.json): added: AfterAgent, SessionEnd, SessionStart, BeforeAgent\n") ||
		!strings.Contains(got, "loom recall enable") {
		t.Errorf("install --recall gemini: %q", got)
	}
	cmds, _ := commandsOf(t, filepath.Join(pl.Home(), ".gemini", "settings.json"))
	if want := "/opt/bin/loom recall --hook gemini"; strings.Join(cmds["BeforeAgent"], "") != want {
		t.Errorf("BeforeAgent: %q, want %q", cmds["BeforeAgent"], want)
	}
}

// The commands fill their options from the invocation, flags and
// arguments.
func TestNewCmdHooksOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, NewCmdHooks); got.Getenv == nil || got.Home == nil || got.JSON {
		t.Errorf("hooks: %+v", got)
	}
	install := func(inv *command.Invocation, runF func(*ChangeOptions) error) *cobra.Command {
		return newCmdChange(inv, true, runF)
	}
	got := cmdtest.Options(t, install, "--recall", "--dry-run", "codex", "gemini")
	if !got.Install || !got.Recall || !got.DryRun || strings.Join(got.Agents, ",") != "codex,gemini" || got.Program == nil {
		t.Errorf("hooks install: %+v", got)
	}
}
