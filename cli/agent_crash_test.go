package cli

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
	"github.com/loomhq/loom/internal/syncio"
	"github.com/loomhq/loom/openai/openaitest"
)

// SIGKILL during a streamed reply leaves the user message and nothing
// partial; the next run -c takes the dead lock over and the provider never
// sees the partial text.
func TestAgentKilledWhileStreaming(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	fx.srv.Enqueue(openaitest.Reply{Text: "PARTIAL words that were streamed", Hang: true}, openaitest.Reply{Text: "recovered"})
	cmd := fx.cmd(t, "run", "question before the crash")
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
	id := sessionOf(t, stderr.String())
	show := fx.mustLoom(t, "", "session", "show", id, "--json")
	var shown struct {
		Messages []*loom.Message `json:"messages"`
	}
	json.Unmarshal([]byte(show.stdout), &shown)
	if len(shown.Messages) != 1 || shown.Messages[0].Role != loom.RoleUser {
		t.Fatalf("after the kill the session holds %d messages: %s", len(shown.Messages), show.stdout)
	}
	r := fx.mustLoom(t, "", "run", "-c", "are you there?")
	if strings.TrimSpace(r.stdout) != "recovered" {
		t.Fatalf("stdout = %q", r.stdout)
	}
	for _, m := range fx.lastRequest(t) {
		if strings.Contains(m.Content, "PARTIAL") {
			t.Fatalf("the provider received the partial text: %+v", fx.lastRequest(t))
		}
	}
	got := fx.lastRequest(t)
	if len(got) != 3 || got[1].Content != "question before the crash" || got[2].Content != "are you there?" {
		t.Fatalf("request after the crash = %+v", got)
	}
}

// SIGKILL during a tool call: the next turn sends the call with an
// "interrupted" result, never an orphaned call.
func TestAgentKilledDuringTool(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	fifo := filepath.Join(fx.project, "blocking.pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no fifo:", err)
	}
	fx.srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_9", Name: "read_file", Args: `{"path":"blocking.pipe"}`}}},
		openaitest.Reply{Text: "ok, that read was interrupted"},
	)
	cmd := fx.cmd(t, "run", "read the pipe")
	var stderr syncio.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fx.waitRequests(t, 1)
	// Wait until the tool part is stored as running (the read blocks on
	// the fifo), then kill.
	deadline := time.Now().Add(15 * time.Second)
	for {
		st := fx.openStore(t)
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
	fx.mustLoom(t, "", "run", "-c", "what happened?")
	got := fx.lastRequest(t)
	var call, result *wire
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
	fx := newAgentFixture(t)
	fx.srv.Enqueue(openaitest.Reply{Text: "hello from the first"})
	first := fx.cmd(t, "chat")
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
	r := fx.loom(t, "", "run", "-c", "me too")
	if r.code != ExitLocked || !strings.Contains(r.stderr, fmt.Sprintf("process %d", first.Process.Pid)) {
		t.Fatalf("second process: exit %d, stderr %q; want 5 naming pid %d", r.code, r.stderr, first.Process.Pid)
	}
	r = fx.loom(t, "hello\n", "chat", "-c")
	if r.code != ExitLocked {
		t.Fatalf("second chat: exit %d, stderr %q", r.code, r.stderr)
	}
}
