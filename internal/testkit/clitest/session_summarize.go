package clitest

import (
	"os/exec"
	"testing"

	"github.com/loomhq/loom/openai/openaitest"
)

type SummarizeResult struct {
	SessionID string `json:"session_id"`
	Summary   string `json:"summary"`
	Skipped   string `json:"skipped"`
}

// SummaryModel is a fake model server that writes summaries, and the
// environment that points loom at it.
func SummaryModel(t *testing.T) (*openaitest.Server, []string) {
	t.Helper()
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return srv, []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=k", "LOOM_MODEL=gpt-4o-mini"}
}

// Summarize runs the loom binary's session summarize --json with args
// on fx, its model set by env, and returns what became of each session.
func (fx *Fixture) Summarize(t *testing.T, env []string, args ...string) []SummarizeResult {
	t.Helper()
	cmd := exec.Command(LoomBinary(t), append([]string{"session", "summarize", "--json"}, args...)...)
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv(env...)
	r := ExecCmd(t, cmd, "")
	if r.Code != 0 {
		t.Fatalf("summarize %q: exit %d\n%s", args, r.Code, r.Stderr)
	}
	return DecodeJSON[[]SummarizeResult](t, r.Stdout)
}
