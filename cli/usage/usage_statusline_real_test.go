package usage_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/providertest"
)

// The real Claude Code, on a terminal, runs `loom usage statusline` as
// its status line command: before the first prompt and after a turn
// (answered by the fake Anthropic server), its status bar shows loom's
// one line, and that line, for the payload Claude Code passed, is one
// line naming the model, the session's cost and the context left.
func TestUsageStatuslineRealClaudeCode(t *testing.T) {
	if clitest.OnPostgres() {
		t.Skip("runs the real agent once, on the SQLite pass")
	}
	t.Parallel()
	bin := agentclitest.Install(t, agentclitest.ClaudeCode)
	loomBin := clitest.LoomBinary(t)
	fx := clitest.NewEmptyFixture(t)
	work := filepath.Join(fx.Home, "work")
	payload := filepath.Join(t.TempDir(), "payload.json")
	clitest.MustWrite(t, filepath.Join(work, "notes.txt"), "alpha\n")
	srv := anthropictest.NewServer()
	t.Cleanup(srv.Close)
	srv.Respond(func(providertest.Request) (anthropictest.Reply, bool) {
		return anthropictest.Reply{Text: "Hello there.", Usage: &anthropictest.Usage{InputTokens: 1200, OutputTokens: 30,
			CacheCreationInputTokens: 5000, CacheReadInputTokens: 40000}}, true
	})
	// The status line command gets Claude Code's JSON on stdin: kept
	// for the checks below, then given to loom.
	command := "tee " + payload + " | env"
	for _, kv := range fx.BinEnv() {
		command += " '" + kv + "'"
	}
	command += " " + loomBin + " usage statusline"
	settings, _ := json.Marshal(map[string]any{"statusLine": map[string]any{"type": "command", "command": command}})
	clitest.MustWrite(t, filepath.Join(fx.Home, ".claude", "settings.json"), string(settings))
	// No first-run screens: onboarding done, the key and the folder
	// trusted.
	const key = "sk-ant-fake-key-0123456789ab"
	state, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true, "theme": "dark",
		"customApiKeyResponses": map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
		"projects":              map[string]any{work: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}})
	clitest.MustWrite(t, filepath.Join(fx.Home, ".claude.json"), string(state))

	cmd := exec.Command(bin, "--model", "claude-sonnet-4-5")
	cmd.Dir = work
	cmd.Env = agentclitest.Env(fx.Home, "ANTHROPIC_BASE_URL="+srv.BaseURL(), "ANTHROPIC_API_KEY="+key,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"TERM=xterm-256color")
	term := termtest.Start(t, cmd, 120, 40)
	term.WaitForScreen(t, "Sonnet 4.5 · session $0 · today $0", clitest.CLITimeout)

	term.Send("Say hello in one line.")
	term.Send("\r")
	term.WaitForScreen(t, "Hello there.", clitest.CLITimeout)
	// After the turn the status line says what it cost and how much of
	// the context window it took.
	term.WaitForScreen(t, "context left", clitest.CLITimeout)
	b, err := os.ReadFile(payload)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Claude Code %s's status line JSON after a turn: %s", agentclitest.ClaudeCode.Version, b)
	var p struct {
		Version string `json:"version"`
		Cost    struct {
			Total float64 `json:"total_cost_usd"`
		} `json:"cost"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Version != agentclitest.ClaudeCode.Version || p.Cost.Total <= 0 {
		t.Fatalf("payload %s (%v)", b, err)
	}
	// Run as Claude Code runs it, on today's clock, on a store nothing
	// else imported into: the session it imports is today's cost.
	r := fx.Exec(t, string(b), "usage", "statusline")
	line := strings.TrimSuffix(r.Stdout, "\n")
	m := regexp.MustCompile(`^Sonnet 4\.5 · session (\$[0-9.]+) · today (\$[0-9.]+) · .*% context left$`).FindStringSubmatch(line)
	if r.Code != 0 || strings.Count(r.Stdout, "\n") != 1 || m == nil || m[1] != m[2] || m[2] == "$0" {
		t.Fatalf("exit %d: %q %s", r.Code, r.Stdout, r.Stderr)
	}
}

// The status line JSON the real Claude Code 2.1.330 passed before its
// first prompt and after a turn (captured by the test above, paths
// renamed), for where npm cannot install it: one line each, with the
// model, the session's cost as Claude Code says it, today's, and the
// context left once the payload says it (null before the first turn).
func TestUsageStatuslineCapturedPayload(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	for file, want := range map[string]string{
		"statusline-claude-code-2.1.330.json":            "Sonnet 4.5 · session $0 · today $0\n",
		"statusline-claude-code-2.1.330-after-turn.json": "Sonnet 4.5 · session $0.03 · today $0 · 77% context left\n",
	} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		r := fx.RunWith(t, clitest.RunOpts{Stdin: string(b)}, "usage", "statusline")
		if r.Code != 0 || r.Stdout != want {
			t.Errorf("%s: exit %d: %q, want %q %s", file, r.Code, r.Stdout, want, r.Stderr)
		}
	}
}

// On a store nothing has imported into, the status line imports the
// session's file the payload names (transcript_path): the session's
// cost is loom's, priced from that file, not Claude Code's figure; a
// second run adds nothing; a file it cannot read leaves Claude Code's.
func TestUsageStatuslineImportsItsSession(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	const id = "258c7280-ae70-4798-800f-63464d01a85d"
	path := filepath.Join(t.TempDir(), id+".jsonl")
	b, err := os.ReadFile(filepath.Join(clitest.Samples, "claude-code", "spotter", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	clitest.MustWrite(t, path, string(b))
	payload := `{"session_id":"` + id + `","transcript_path":"` + path + `","model":{"display_name":"Opus"},"cost":{"total_cost_usd":99}}`
	for range 2 {
		r := fx.RunWith(t, clitest.RunOpts{Stdin: payload, Before: clitest.AllFormats}, "usage", "statusline")
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "Opus · session $11.85 · today $") {
			t.Fatalf("exit %d: %q %s", r.Code, r.Stdout, r.Stderr)
		}
	}
	// The session, and the sub-agent its agent_progress lines record
	// (its own file is not beside this copy).
	if s, m := fx.SessionCount(t); s != 2 || m == 0 {
		t.Errorf("the store holds %d sessions, %d messages", s, m)
	}
	gone := strings.Replace(payload, path, filepath.Join(t.TempDir(), "gone.jsonl"), 1)
	gone = strings.Replace(gone, id, "00000000-0000-4000-8000-000000000000", 1)
	if r := fx.RunWith(t, clitest.RunOpts{Stdin: gone, Before: clitest.AllFormats}, "usage", "statusline"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "Opus · session $99.00 · ") {
		t.Errorf("an unreadable file: exit %d: %q %s", r.Code, r.Stdout, r.Stderr)
	}
}
