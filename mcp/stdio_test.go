package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Bad lines on standard input are answered with JSON-RPC errors and
// skipped: a line that is not JSON, one that is JSON but no message, a
// batch, and one longer than the bound. The server answers the good
// requests that follow them on the same pipe.
func TestServeSkipsBadFrames(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	cfg := Config{
		Store:         func(context.Context) (loom.Engine, error) { return nil, loom.Errorf(loom.EINTERNAL, "no store") },
		User:          "u",
		MaxFrameBytes: 1 << 20,
	}
	go func() { done <- Serve(ctx, cfg, inR, outW) }()
	lines := bufio.NewReader(outR)
	read := func() map[string]any {
		t.Helper()
		got := make(chan string, 1)
		go func() {
			l, _ := lines.ReadString('\n')
			got <- l
		}()
		select {
		case l := <-got:
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("answer %q: %v", l, err)
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no answer within 10s")
		}
		return nil
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s); err != nil {
			t.Fatalf("write: %v (the server stopped reading)", err)
		}
	}
	wantError := func(what string, code float64, id any) {
		t.Helper()
		m := read()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != code || m["id"] != id {
			t.Fatalf("%s: answered %v, want error %v for id %v", what, m, code, id)
		}
	}
	send("{not json\n")
	wantError("not JSON", -32700, nil)
	send(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n")
	wantError("a batch", -32600, nil)
	send(`{"jsonrpc":"1.0","id":7,"method":"ping"}` + "\n")
	wantError("wrong version", -32600, float64(7))
	send(`{"jsonrpc":"2.0","id":8}` + "\n")
	wantError("neither request nor response", -32600, float64(8))
	send(`{"jsonrpc":"2.0","id":9,"method":"x","params":"` + strings.Repeat("a", 3<<20) + `"}` + "\n")
	wantError("too long", -32600, nil)
	send("\n  \r\n")
	// A response to nothing the server asked is passed on and ignored.
	send(`{"jsonrpc":"2.0","id":99,"result":{}}` + "\n")

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	if m := read(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize after bad lines: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	send("}}}\n")
	wantError("not JSON after initialize", -32700, nil)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
	m := read()
	res, _ := m["result"].(map[string]any)
	if tools, _ := res["tools"].([]any); m["id"] != float64(2) || len(tools) != 6 {
		t.Fatalf("tools/list after bad lines: %v", m)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve at end of input: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end with its input")
	}
}
