package chat_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/syncio"
	"github.com/loomhq/loom/openai/openaitest"
)

// SIGKILL during a streamed reply leaves the user message and nothing
// partial; the next run -c takes the dead lock over and the provider never
// sees the partial text.
func TestAgentKilledWhileStreaming(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "PARTIAL words that were streamed", Hang: true}, openaitest.Reply{Text: "recovered"})
	cmd := fx.Cmd(t, "run", "question before the crash")
	var stderr syncio.Buffer
	cmd.Stderr = &stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once the partial text has reached the terminal.
	br := bufio.NewReader(stdout)
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(br, buf, 7)
	if !strings.Contains(string(buf[:n]), "PARTIAL") {
		t.Fatalf("streamed %q", buf[:n])
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	id := clitest.SessionOf(t, stderr.String())
	show := fx.MustLoom(t, "", "session", "show", id, "--json")
	var shown struct {
		Messages []*loom.Message `json:"messages"`
	}
	json.Unmarshal([]byte(show.Stdout), &shown)
	if len(shown.Messages) != 1 || shown.Messages[0].Role != loom.RoleUser {
		t.Fatalf("after the kill the session holds %d messages: %s", len(shown.Messages), show.Stdout)
	}
	r := fx.MustLoom(t, "", "run", "-c", "are you there?")
	if strings.TrimSpace(r.Stdout) != "recovered" {
		t.Fatalf("stdout = %q", r.Stdout)
	}
	for _, m := range fx.LastRequest(t) {
		if strings.Contains(m.Content, "PARTIAL") {
			t.Fatalf("the provider received the partial text: %+v", fx.LastRequest(t))
		}
	}
	got := fx.LastRequest(t)
	if len(got) != 3 || got[1].Content != "question before the crash" || got[2].Content != "are you there?" {
		t.Fatalf("request after the crash = %+v", got)
	}
}

// SIGKILL during a tool call: the next turn sends the call with an
// "interrupted" result, never an orphaned call.
func TestAgentKilledDuringTool(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fifo := filepath.Join(fx.Project, "blocking.pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no fifo:", err)
	}
	fx.Srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_9", Name: "read_file", Args: `{"path":"blocking.pipe"}`}}},
		openaitest.Reply{Text: "ok, that read was interrupted"},
	)
	cmd := fx.Cmd(t, "run", "read the pipe")
	var stderr syncio.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fx.WaitRequests(t, 1)
	// Wait until the tool part is stored as running (the read blocks on
	// the fifo), then kill.
	deadline := time.Now().Add(15 * time.Second)
	for {
		st := fx.OpenStore(t)
		var running int
		st.DB().QueryRow(`SELECT count(*) FROM bodies WHERE CAST(parts AS TEXT) LIKE '%"status":"running"%'`).Scan(&running)
		st.Close()
		if running > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool never ran; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	fx.MustLoom(t, "", "run", "-c", "what happened?")
	got := fx.LastRequest(t)
	var call, result *clitest.Wire
	for i := range got {
		if len(got[i].ToolCalls) > 0 {
			call = &got[i]
		}
		if got[i].Role == "tool" {
			result = &got[i]
		}
	}
	if call == nil || result == nil || result.ToolCallID != "call_9" || !strings.Contains(result.Content, loom.Interrupted) {
		t.Fatalf("after the kill the request was %+v", got)
	}
}

// A second process attaching to a session in use fails with exit 5
// naming the first process.
func TestAgentSecondProcessLocked(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "hello from the first"})
	first := fx.Cmd(t, "chat")
	in, _ := first.StdinPipe()
	out, _ := first.StdoutPipe()
	var stderr syncio.Buffer
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); first.Wait() }()
	io.WriteString(in, "hi\n")
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.Contains(line, "hello from the first") {
		t.Fatalf("first chat replied %q", line)
	}
	r := fx.Loom(t, "", "run", "-c", "me too")
	if r.Code != cli.ExitLocked || !strings.Contains(r.Stderr, fmt.Sprintf("process %d", first.Process.Pid)) {
		t.Fatalf("second process: exit %d, stderr %q; want 5 naming pid %d", r.Code, r.Stderr, first.Process.Pid)
	}
	r = fx.Loom(t, "hello\n", "chat", "-c")
	if r.Code != cli.ExitLocked {
		t.Fatalf("second chat: exit %d, stderr %q", r.Code, r.Stderr)
	}
}
