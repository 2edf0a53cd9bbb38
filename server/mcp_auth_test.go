package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// /mcp refuses a request without a valid bearer token as the rest of
// the API does: 401, WWW-Authenticate: Bearer and the JSON error. The
// dashboard's cookie is no MCP token.
func TestMCPUnauthorized(t *testing.T) {
	e := newEnv(t, withMCP(0, 0, time.Minute))
	mcpHeader := http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}}
	for _, tc := range []struct {
		what, method, token string
		header              http.Header
	}{
		{"no token", http.MethodPost, "", mcpHeader},
		{"unknown token", http.MethodPost, "loom_not-a-token", mcpHeader},
		{"not bearer", http.MethodPost, "", http.Header{"Authorization": {"Basic YWxpY2U6eA=="}, "Accept": mcpHeader["Accept"]}},
		{"dashboard cookie", http.MethodGet, "", http.Header{"Cookie": {"loom_token=" + e.alice}, "Accept": {"text/event-stream"}}},
	} {
		var body any
		if tc.method == http.MethodPost {
			body = mcpInitialize
		}
		resp := e.send(tc.method, "/mcp", tc.token, body, tc.header)
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		wantError(t, tc.what, resp, b.Bytes(), http.StatusUnauthorized, "unauthorized")
		if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") {
			t.Errorf("%s: WWW-Authenticate = %q, want Bearer", tc.what, h)
		}
	}
	// A valid token still opens a session and calls tools.
	sid := e.mcpMustOpen(e.alice)
	if resp, body := e.mcpPost(e.alice, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "search_sessions") {
		t.Fatalf("tools/list with a valid token: %d %s", resp.StatusCode, body)
	}
}

// A second initialize in a session is an invalid request, answered with
// JSON-RPC's code for one (-32600) and a message, never code 0; the
// session goes on working.
func TestMCPSecondInitialize(t *testing.T) {
	e := newEnv(t, withMCP(0, 0, time.Minute))
	sid := e.mcpMustOpen(e.alice)
	resp, body := e.mcpPost(e.alice, sid, strings.Replace(mcpInitialize, `"id":1`, `"id":7`, 1))
	var answer struct {
		ID    int `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(jsonRPCBody(body), &answer); err != nil {
		t.Fatalf("second initialize: %d %s: %v", resp.StatusCode, body, err)
	}
	if answer.ID != 7 || answer.Error == nil || answer.Error.Code != -32600 || !strings.Contains(answer.Error.Message, "initialize") {
		t.Fatalf("second initialize answered %d %s, want error -32600 naming initialize", resp.StatusCode, body)
	}
	if resp, body := e.mcpPost(e.alice, sid, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "search_sessions") {
		t.Fatalf("tools/list after a second initialize: %d %s", resp.StatusCode, body)
	}
}

// jsonRPCBody is the JSON-RPC message of an answer sent as JSON or as
// one Server-Sent Event.
func jsonRPCBody(b []byte) []byte {
	for _, line := range strings.Split(string(b), "\n") {
		if data, ok := strings.CutPrefix(line, "data:"); ok {
			return []byte(strings.TrimSpace(data))
		}
	}
	return b
}
