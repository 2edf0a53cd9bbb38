package clitest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/openai/openaitest"
)

// AgentFixture is an empty LOOM_HOME and project with loom pointed at a
// fake OpenAI server (the official SDK parses its real wire format).
type AgentFixture struct {
	*Fixture
	Srv *openaitest.Server
	Env []string
}

func NewAgentFixture(t *testing.T) *AgentFixture {
	t.Helper()
	fx := NewEmptyFixture(t)
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return &AgentFixture{Fixture: fx, Srv: srv, Env: ProviderEnv(srv)}
}

// ProviderEnv points a loom process at the fake OpenAI server srv.
func ProviderEnv(srv *openaitest.Server) []string {
	return []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=test-key", "LOOM_MODEL=gpt-4o-mini"}
}

func (fx *AgentFixture) Cmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(LoomBinary(t), args...)
	cmd.Dir = fx.Project
	cmd.Env = fx.BinEnv(fx.Env...)
	return cmd
}

func (fx *AgentFixture) Loom(t *testing.T, stdin string, args ...string) Result {
	t.Helper()
	return ExecCmd(t, fx.Cmd(t, args...), stdin)
}

func (fx *AgentFixture) MustLoom(t *testing.T, stdin string, args ...string) Result {
	t.Helper()
	r := fx.Loom(t, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("loom %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// Wire is one message of a request as the provider received it.
type Wire struct {
	Role, Content string
	ToolCalls     []string // name(args)
	ToolCallID    string
}

func WireMessages(t *testing.T, body map[string]any) []Wire {
	t.Helper()
	var out []Wire
	for _, raw := range body["messages"].([]any) {
		m := raw.(map[string]any)
		w := Wire{Role: m["role"].(string)}
		switch c := m["content"].(type) {
		case string:
			w.Content = c
		case []any:
			for _, p := range c {
				if pm, ok := p.(map[string]any); ok {
					if s, ok := pm["text"].(string); ok {
						w.Content += s
					}
				}
			}
		}
		if tcs, ok := m["tool_calls"].([]any); ok {
			for _, tc := range tcs {
				fn := tc.(map[string]any)["function"].(map[string]any)
				w.ToolCalls = append(w.ToolCalls, fmt.Sprintf("%s(%s)", fn["name"], fn["arguments"]))
			}
		}
		if id, ok := m["tool_call_id"].(string); ok {
			w.ToolCallID = id
		}
		out = append(out, w)
	}
	return out
}

func (fx *AgentFixture) LastRequest(t *testing.T) []Wire {
	t.Helper()
	reqs := fx.Srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the provider received no request")
	}
	return WireMessages(t, reqs[len(reqs)-1].Body)
}

func SessionOf(t *testing.T, stderr string) string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if id, ok := strings.CutPrefix(line, "session "); ok {
			return strings.TrimSpace(id)
		}
	}
	t.Fatalf("no session id on stderr: %q", stderr)
	return ""
}

// WaitRequests waits until the provider has received n requests.
func (fx *AgentFixture) WaitRequests(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(fx.Srv.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("provider received %d requests, want %d", len(fx.Srv.Requests()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ShowSession(t *testing.T, fx *AgentFixture, id string) *loom.Session {
	t.Helper()
	var shown struct {
		Session *loom.Session `json:"session"`
	}
	if err := json.Unmarshal([]byte(fx.MustLoom(t, "", "session", "show", id, "--json").Stdout), &shown); err != nil {
		t.Fatal(err)
	}
	return shown.Session
}
