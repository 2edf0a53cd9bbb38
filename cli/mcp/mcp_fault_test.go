package mcp_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/syncio"
)

// loom mcp, started as an agent starts it, keeps serving when its client
// writes garbage: a line that is not JSON, a batch and a 100 MB line are
// answered with JSON-RPC errors, and a search sent after them on the same
// pipe is answered. The process ends when its input does, with status 0.
func TestMCPStdioSurvivesBadFrames(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	cmd := exec.Command(clitest.LoomBinary(t), "mcp")
	cmd.Dir = fx.Project
	cmd.Env = fx.BinEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncio.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	answers := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			json.Unmarshal(sc.Bytes(), &m)
			answers <- m
		}
		close(answers)
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case m, ok := <-answers:
			if !ok {
				t.Fatalf("%s: loom mcp ended its output; stderr:\n%s", what, stderr.String())
			}
			return m
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no answer in 30s", what)
		}
		return nil
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatalf("write to loom mcp: %v", err)
		}
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	send("{not json")
	if m := next("not JSON"); code(m) != -32700 {
		t.Fatalf("not JSON answered %v", m)
	}
	send(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
	if m := next("a batch"); code(m) != -32600 {
		t.Fatalf("a batch answered %v", m)
	}
	// 100 MB in one line, written in pieces as a runaway client would.
	go func() {
		io.WriteString(in, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"q":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 100 {
			if _, err := io.WriteString(in, chunk); err != nil {
				return
			}
		}
		io.WriteString(in, "\"}}\n")
	}()
	if m := next("a 100 MB line"); code(m) != -32600 || !strings.Contains(m["error"].(map[string]any)["message"].(string), "longer than") {
		t.Fatalf("a 100 MB line answered %v", m)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next("initialize"); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize after bad lines: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"clock"}}}`)
	m := next("search")
	res, _ := m["result"].(map[string]any)
	if m["id"] != float64(2) || res == nil || res["isError"] == true || !strings.Contains(clitest.MustJSON(t, res), fx.Main.ID) {
		t.Fatalf("search after bad lines: %v", m)
	}
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("loom mcp at the end of its input: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("loom mcp did not end with its input")
	}
}

// A client that writes its requests and closes its end of the pipe at
// once (echo … | loom mcp) gets every answer before loom mcp exits.
func TestMCPStdioAnswersPendingAtEOF(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	cmd := exec.Command(clitest.LoomBinary(t), "mcp")
	cmd.Dir = fx.Project
	cmd.Env = fx.BinEnv()
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"clock","all_projects":true}}}`,
	}, "\n") + "\n")
	var stderr syncio.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("loom mcp: %v\n%s", err, stderr.String())
	}
	var got []any
	for l := range strings.Lines(string(out)) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("answer %q: %v", l, err)
		}
		if m["result"] == nil {
			t.Fatalf("answer %v is not a result", m)
		}
		got = append(got, m["id"])
	}
	if len(got) != 3 || got[0] != float64(1) || got[1] != float64(2) || got[2] != "three" {
		t.Fatalf("answers to ids %v, want 1, 2 and three", got)
	}
}
