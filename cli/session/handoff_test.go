package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/secrets"
)

// handoffOptions are loom session handoff's options on w, handing to
// Claude Code under w's root/home.
func (w *world) handoffOptions(ios *term.IOStreams, ref string) *HandoffOptions {
	return &HandoffOptions{
		IO: ios, Formats: []importer.Format{claudecode.New()}, ReadSession: w.openSession(ios),
		AbsPath: func(dir string) (string, error) { return filepath.Join(w.root, dir), nil },
		Getenv:  func(string) string { return "" },
		Home:    func() string { return filepath.Join(w.root, "home") },
		Now:     time.Now,
		Secrets: func() (*secrets.Detector, error) { return secrets.Default(), nil },
		Ref:     ref, To: "claude-code",
	}
}

// Handoff writes the session as a Claude Code session under the home
// directory, secrets redacted, and prints where and how to resume it;
// a tool it cannot write and a directory that is not one are refused.
func TestSessionHandoffRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.session(t, w.api, "cli:api", "deploy", "deploy it", "deployed", "roll back with "+awsKey, "rolled back")

	ios := piped()
	if err := handoffRun(t.Context(), w.handoffOptions(ios, "deploy")); err != nil {
		t.Fatal(err)
	}
	out, errOut := outputs(ios)
	if errOut != "loom: redacted 1 secret (--no-redact keeps them)\n" {
		t.Errorf("stderr %q", errOut)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 5 || lines[0] != `Handed "deploy" to claude-code: 4 messages.` || !strings.HasPrefix(lines[1], "Wrote ") ||
		lines[2] != "Resume it with:" || !strings.HasPrefix(lines[3], "  ") {
		t.Fatalf("handoff:\n%s", out)
	}
	path := strings.TrimPrefix(lines[1], "Wrote ")
	if !strings.HasPrefix(path, filepath.Join(w.root, "home", ".claude", "projects")+string(filepath.Separator)) {
		t.Errorf("wrote %s, want it under the home's .claude/projects", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), awsKey) || !strings.Contains(string(b), "roll back with [REDACTED:") || !strings.Contains(string(b), "deploy it") {
		t.Errorf("the Claude Code session:\n%s", b)
	}

	ios = piped()
	opts := w.handoffOptions(ios, "deploy")
	opts.Last, opts.NoRedact, opts.JSON = 1, true, true
	if err := handoffRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	_, errOut = outputs(ios)
	rep := printedJSON[handoff.Report](t, ios)
	if rep.FirstTurn != 2 || rep.LastTurn != 2 || rep.Messages != 2 || rep.Redacted != 0 || rep.Dir != w.api.Root || errOut != "" {
		t.Errorf("--last 1 --no-redact --json: %+v, stderr %q", rep, errOut)
	}
	if b, err := os.ReadFile(rep.Path); err != nil || !strings.Contains(string(b), "roll back with "+awsKey) || strings.Contains(string(b), "deploy it") {
		t.Errorf("the Claude Code session of the last turn, secrets kept (%v):\n%s", err, b)
	}

	opts = w.handoffOptions(piped(), "deploy")
	opts.To = "cursor"
	refused(t, handoffRun(t.Context(), opts), `--to "cursor": want claude-code`)
	opts = w.handoffOptions(piped(), "deploy")
	opts.Dir = "nowhere"
	refused(t, handoffRun(t.Context(), opts), "--dir nowhere: no such directory")
}

// The command fills its options from its flags, and refuses no --to
// and a --last below 1.
func TestNewCmdSessionHandoffOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionHandoff, "flaky test", "--to", "codex", "--dir", "../api", "--last", "5", "--no-redact")
	if got.Ref != "flaky test" || got.To != "codex" || got.Dir != "../api" || got.Last != 5 || !got.NoRedact || got.Secrets == nil || got.ReadSession == nil {
		t.Errorf("options: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionHandoff, "0196a3b2"), "--to is required")
	refused(t, cmdtest.Rejects(t, newCmdSessionHandoff, "0196a3b2", "--to", "codex", "--last", "0"), "--last must be 1 or more")
}
