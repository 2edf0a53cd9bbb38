package chat_test

import (
	"net"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A provider that cannot be reached is one line naming the provider, its
// address and the variable that set it, never Go's dial error; the
// session the prompt would have made is not left behind with that
// prompt alone (in the picker, in session list), and chat keeps the
// prompt in its input history, where ↑ brings it back to send again.
func TestUnreachableProviderLeavesNoSession(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	fx := clitest.NewAgentFixture(t)
	fx.Env = []string{"OPENAI_BASE_URL=http://" + addr + "/v1", "OPENAI_API_KEY=test-key", "LOOM_MODEL=gpt-4o-mini"}
	want := "loom: cannot reach openai at http://" + addr + "/v1 (set by OPENAI_BASE_URL): connection refused"

	r := fx.Loom(t, "", "run", "hello there")
	if r.Code != cli.ExitError || strings.TrimSpace(r.Stderr) != want || r.Stdout != "" {
		t.Fatalf("run: exit %d\nstdout %q\nstderr %q\nwant the one line %q", r.Code, r.Stdout, r.Stderr, want)
	}
	if list := fx.MustLoom(t, "", "session", "list", "--all-projects", "--json"); strings.TrimSpace(list.Stdout) != "[]" {
		t.Fatalf("run left a session behind:\n%s", list.Stdout)
	}

	fx.ExtraEnv = fx.Env
	p := fx.StartPTYSize(t, 100, 40, "chat", "--new")
	p.WaitFor(t, "›")
	p.Send("hello again\r")
	p.WaitFor(t, "cannot reach openai at http://"+addr)
	p.WaitPrompt(t, "›")
	if out := p.Output(); strings.Contains(out, "dial tcp") || strings.Contains(out, "session ") {
		t.Fatalf("chat printed Go's dial error or a session it did not keep:\n%s", out)
	}
	p.Send("\x1b[A") // ↑
	clitest.WaitScreen(t, p, "› hello again")
	p.Send("\x15") // Ctrl+U: the line is not sent
	p.Leave(t, "›")
	if list := fx.MustLoom(t, "", "session", "list", "--all-projects", "--json"); strings.TrimSpace(list.Stdout) != "[]" {
		t.Fatalf("chat left a session behind:\n%s", list.Stdout)
	}
}
