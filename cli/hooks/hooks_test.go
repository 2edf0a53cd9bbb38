package hooks_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// loom hooks install writes loom's import and recall hooks into the
// agents' settings beside what the user has there, never twice;
// uninstall takes out only loom's; a file it cannot read as the agent
// does is left as it was, with one line saying why.
func TestHooksInstall(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	claude := filepath.Join(fx.Home, ".claude", "settings.json")
	gemini := filepath.Join(fx.Home, ".gemini", "settings.json")
	codex := filepath.Join(fx.Home, ".codex", "config.toml")
	const claudeOrig = `{
  "model": "opus",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check <cmd> && log"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  },
  "theme": "dark"
}
`
	const codexOrig = "# mine\nmodel = \"gpt-5\"\n\n[mcp_servers.x]\ncommand = \"y\"\n"
	clitest.MustWrite(t, claude, claudeOrig)
	clitest.MustWrite(t, codex, codexOrig)
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	r := fx.Exec(t, "", "hooks", "install", "--recall", "claude-code", "gemini", "codex")
	if r.Code != 0 {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"Stop, SessionEnd, SessionStart, UserPromptSubmit", "AfterAgent, SessionEnd, SessionStart, BeforeAgent", "notify", "loom recall enable"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("install does not say %q:\n%s", want, r.Stdout)
		}
	}
	var s struct {
		Model string
		Theme string
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal([]byte(read(claude)), &s); err != nil {
		t.Fatal(err)
	}
	if s.Model != "opus" || s.Theme != "dark" || s.Hooks["PreToolUse"][0].Hooks[0].Command != "check <cmd> && log" {
		t.Errorf("install changed the user's settings:\n%s", read(claude))
	}
	commandsOf := func(ev string) (out []string) {
		for _, g := range s.Hooks[ev] {
			for _, h := range g.Hooks {
				out = append(out, h.Command)
			}
		}
		return out
	}
	bin := clitest.LoomBinary(t)
	if got := commandsOf("Stop"); !reflect.DeepEqual(got, []string{"notify-send done", bin + " session import --hook claude-code"}) {
		t.Errorf("Stop hooks %q", got)
	}
	if got := commandsOf("UserPromptSubmit"); !reflect.DeepEqual(got, []string{bin + " recall --hook claude-code"}) {
		t.Errorf("UserPromptSubmit hooks %q", got)
	}
	// The hooks around shell calls: the user's own Bash check stays
	// first, loom's observe is a group of its own matching Bash alone.
	if got := commandsOf("PreToolUse"); !reflect.DeepEqual(got, []string{"check <cmd> && log", bin + " blame observe --hook claude-code"}) || s.Hooks["PreToolUse"][1].Matcher != "Bash" {
		t.Errorf("PreToolUse hooks %q", got)
	}
	if g := s.Hooks["PostToolUse"]; len(g) != 1 || g[0].Matcher != "Bash" || g[0].Hooks[0].Command != bin+" blame observe --hook claude-code" {
		t.Errorf("PostToolUse hooks %+v", g)
	}
	if !strings.Contains(read(gemini), `"matcher": "run_shell_command"`) || !strings.Contains(read(gemini), bin+" blame observe --hook gemini") {
		t.Errorf("gemini settings have no observe hooks:\n%s", read(gemini))
	}
	if !strings.Contains(read(gemini), bin+" recall --hook gemini") {
		t.Errorf("gemini settings:\n%s", read(gemini))
	}
	if got := read(codex); !strings.HasPrefix(got, "# mine\nmodel = \"gpt-5\"\nnotify = [\""+bin+"\", \"session\", \"import\", \"--hook\", \"codex\"]\n\n[mcp_servers.x]") {
		t.Errorf("codex config:\n%s", got)
	}

	// Twice is once.
	before := read(claude) + read(gemini) + read(codex)
	if r := fx.Exec(t, "", "hooks", "install", "--recall", "claude-code", "gemini", "codex"); r.Code != 0 || strings.Count(r.Stdout, "already there") != 3 {
		t.Errorf("second install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if read(claude)+read(gemini)+read(codex) != before {
		t.Error("a second install changed the files")
	}
	r = fx.Exec(t, "", "hooks", "--json")
	var st []struct {
		Agent          string
		Import, Recall bool
	}
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st) != 3 || !st[0].Import || !st[0].Recall || !st[1].Recall || !st[2].Import {
		t.Errorf("hooks --json: %v\n%s%s", err, r.Stdout, r.Stderr)
	}

	// Uninstall leaves what the user had, as they had it.
	if r := fx.Exec(t, "", "hooks", "uninstall"); r.Code != 0 {
		t.Fatalf("uninstall: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := read(codex); got != codexOrig {
		t.Errorf("codex config after uninstall:\n%s", got)
	}
	var a, b any
	_ = json.Unmarshal([]byte(claudeOrig), &a)
	_ = json.Unmarshal([]byte(read(claude)), &b)
	if !reflect.DeepEqual(a, b) || strings.Index(read(claude), `"model"`) > strings.Index(read(claude), `"theme"`) {
		t.Errorf("claude settings after uninstall:\n%s", read(claude))
	}
	if strings.Contains(read(gemini), "loom") {
		t.Errorf("gemini settings after uninstall:\n%s", read(gemini))
	}

	// Bad input: nothing written, one line, the right status.
	clitest.MustWrite(t, claude, "{\"model\": \"opus\", // a comment\n}")
	clitest.MustWrite(t, codex, "notify = [\"my-notifier\"]\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"claude-code"}, 1, "add loom's hooks by hand"},
		{[]string{"codex"}, 1, "from a script"},
		{[]string{"cursor"}, 2, "unknown agent"},
	} {
		r := fx.Exec(t, "", append([]string{"hooks", "install"}, c.args...)...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("hooks install %v: exit %d, stderr %q; want %d and %q", c.args, r.Code, r.Stderr, c.code, c.want)
		}
	}
	if read(codex) != "notify = [\"my-notifier\"]\n" || !strings.Contains(read(claude), "// a comment") {
		t.Error("a refused install changed a file")
	}
}

// The notify program `loom hooks install codex` sets is run by the real
// Codex CLI after a turn, and brings that turn's session into loom.
func TestHooksCodexNotifyReal(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx := clitest.NewEmptyFixture(t)
	bin, dir, env, _, _ := clitest.StartCodex(t, fx)
	if r := fx.Exec(t, "", "hooks", "install", "codex"); r.Code != 0 {
		t.Fatalf("hooks install codex: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "exec", "--skip-git-repo-check", "Say hello from codex.")
	// Codex starts its notify program and does not wait for it: the
	// import may still be running when codex exits, so the session is
	// waited for (until it is there, or the bound of a slow machine).
	var listed []struct{ Key, Title string }
	for deadline := time.Now().Add(clitest.CLITimeout); ; {
		if err := json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "-a", "--surface", "codex", "--json")), &listed); err != nil {
			t.Fatal(err)
		}
		if len(listed) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(listed) != 1 || !strings.Contains(listed[0].Title, "Say hello from codex") {
		t.Fatalf("after a Codex turn with loom's notify program, loom holds %+v", listed)
	}
}

// A hook names loom by its full path, so that an agent whose PATH lacks
// loom still runs it; once that loom is moved, status, capture status
// and doctor say the hooks do not run (a hook that is there but cannot
// start is no hook), and installing again from where loom is now points
// them at it. A bare "loom" written by an earlier version is reported
// and replaced the same way.
func TestHooksFollowLoom(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	claude := filepath.Join(fx.Home, ".claude", "settings.json")
	codex := filepath.Join(fx.Home, ".codex", "config.toml")
	clitest.MustWrite(t, claude, "{}\n")
	clitest.MustWrite(t, codex, "model = \"gpt-5\"\n")
	src, err := os.ReadFile(clitest.LoomBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	place := func(dir string) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), dir, "loom")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, src, 0o755); err != nil {
			t.Fatal(err)
		}
		// A process another test forked while the copy was open for
		// writing holds it until that process execs: until then the
		// copy cannot run (ETXTBSY). Once it runs, no process holds it.
		for range 200 {
			if err := exec.Command(p, "version").Run(); !errors.Is(err, syscall.ETXTBSY) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return p
	}
	run := func(bin string, args ...string) clitest.Result {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = fx.Project, fx.BinEnv()
		return clitest.ExecCmd(t, cmd, "")
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	type status struct {
		Agent, Program, Problem string
		Import                  bool
	}
	statuses := func(bin string) map[string]status {
		t.Helper()
		r := run(bin, "hooks", "--json")
		var st []status
		if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
			t.Fatalf("hooks --json: %v\n%s%s", err, r.Stdout, r.Stderr)
		}
		m := map[string]status{}
		for _, s := range st {
			m[s.Agent] = s
		}
		return m
	}

	a := place("a")
	if r := run(a, "hooks", "install", "claude-code", "codex"); r.Code != 0 {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(read(claude), `"`+a+` session import --hook claude-code"`) || !strings.Contains(read(codex), `notify = ["`+a+`", "session"`) {
		t.Fatalf("the hooks do not name loom's full path %s:\n%s\n%s", a, read(claude), read(codex))
	}
	for _, ag := range []string{"claude-code", "codex"} {
		if s := statuses(a)[ag]; !s.Import || s.Program != a || s.Problem != "" {
			t.Errorf("%s with loom in place: %+v", ag, s)
		}
	}

	// loom moves: the hooks name a program that is gone.
	b := place("b")
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	for _, ag := range []string{"claude-code", "codex"} {
		if s := statuses(b)[ag]; !s.Import || !strings.Contains(s.Problem, "not there any more") {
			t.Errorf("%s after loom moved: %+v", ag, s)
		}
	}
	r := run(b, "hooks")
	if !strings.Contains(r.Stdout, "does not run") {
		t.Errorf("loom hooks does not say the hooks do not run:\n%s", r.Stdout)
	}
	var doc struct {
		BrokenHooks []struct{ Agent, Problem string } `json:"broken_hooks"`
	}
	r = run(b, "doctor", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.BrokenHooks) != 2 {
		t.Errorf("doctor --json broken_hooks: %v %+v\n%s%s", err, doc.BrokenHooks, r.Stdout, r.Stderr)
	}
	if r := run(b, "doctor"); !strings.Contains(r.Stdout, "Claude Code's hooks do not run") {
		t.Errorf("doctor does not name the broken hooks:\n%s%s", r.Stdout, r.Stderr)
	}
	var capt struct {
		Agents []struct {
			Agent        string
			Hooks        *bool
			HooksProblem string `json:"hooks_problem"`
		}
	}
	r = run(b, "capture", "status", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &capt); err != nil {
		t.Fatalf("capture status --json: %v\n%s%s", err, r.Stdout, r.Stderr)
	}
	for _, ag := range capt.Agents {
		if ag.Agent == "claude-code" && (ag.Hooks == nil || *ag.Hooks || ag.HooksProblem == "") {
			t.Errorf("capture status says claude-code's broken hooks are %v (%q)", ag.Hooks, ag.HooksProblem)
		}
	}

	// Installing again from where loom is now: every hook runs it.
	r = run(b, "hooks", "install", "claude-code", "codex")
	if r.Code != 0 || strings.Count(r.Stdout, "updated to run "+b) != 2 {
		t.Fatalf("install after the move: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if strings.Contains(read(claude), a) || strings.Contains(read(codex), a) || strings.Count(read(claude), b+" session import") != 2 {
		t.Errorf("after the second install:\n%s\n%s", read(claude), read(codex))
	}
	for _, ag := range []string{"claude-code", "codex"} {
		if s := statuses(b)[ag]; s.Problem != "" || s.Program != b {
			t.Errorf("%s after install again: %+v", ag, s)
		}
	}

	// A bare loom, as an earlier version wrote it.
	clitest.MustWrite(t, claude, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "loom session import --hook claude-code"}]}]}}`)
	if s := statuses(b)["claude-code"]; !strings.Contains(s.Problem, "by name") {
		t.Errorf("a bare loom hook: %+v", s)
	}
	if r := run(b, "hooks", "install", "claude-code"); r.Code != 0 || !strings.Contains(r.Stdout, "updated to run") ||
		strings.Contains(read(claude), `"loom session`) {
		t.Errorf("install over a bare loom: exit %d\n%s%s\n%s", r.Code, r.Stdout, r.Stderr, read(claude))
	}
}
