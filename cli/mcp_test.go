package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/openai/openaitest"
)

// mcpCall is one tool call's outcome: the text the model reads, the
// structured content decoded as JSON, and whether it is a tool error.
type mcpCall struct {
	text    string
	data    map[string]any
	isError bool
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any) mcpCall {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v", name, args, err)
	}
	var c mcpCall
	c.isError = res.IsError
	for _, ct := range res.Content {
		if tc, ok := ct.(*sdk.TextContent); ok {
			c.text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &c.data); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, raw, err)
		}
	}
	return c
}

func mustCall(t *testing.T, cs *sdk.ClientSession, name string, args any) mcpCall {
	t.Helper()
	c := callTool(t, cs, name, args)
	if c.isError {
		t.Fatalf("%s(%v) is a tool error: %s", name, args, c.text)
	}
	return c
}

func wantToolError(t *testing.T, cs *sdk.ClientSession, name string, args any, says string) {
	t.Helper()
	c := callTool(t, cs, name, args)
	if !c.isError || !strings.Contains(c.text, says) {
		t.Fatalf("%s(%.200v) = error %v, %.300q; want a tool error saying %q", name, args, c.isError, c.text, says)
	}
}

// ids returns the values of field in the objects of list.
func ids(t *testing.T, data map[string]any, list, field string) []string {
	t.Helper()
	items, ok := data[list].([]any)
	if !ok {
		t.Fatalf("structured content has no %s list: %v", list, data)
	}
	var out []string
	for _, it := range items {
		out = append(out, it.(map[string]any)[field].(string))
	}
	return out
}

func connectStdio(t *testing.T, fx *fixture, extraEnv ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(loomBinary(t), "mcp")
	cmd.Dir = fx.project
	cmd.Env = fx.binEnv(extraEnv...)
	client := sdk.NewClient(&sdk.Implementation{Name: "loom-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to loom mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// The tools and their arguments as docs/mcp.md names them (each may take
// more).
var mcpTools = map[string]struct{ args, required []string }{
	"search_sessions": {[]string{"query", "limit", "project", "all_projects", "surface", "role", "since", "until"}, []string{"query"}},
	"list_sessions":   {[]string{"limit", "all_projects", "surface", "query"}, nil},
	"read_session":    {[]string{"ref", "limit", "before_seq", "turn"}, []string{"ref"}},
	"memory":          {[]string{"action", "file", "text"}, []string{"action"}},
	"usage":           {[]string{"by", "breakdown", "since", "until", "tz", "agent", "project", "all_projects"}, nil},
	"recall":          {[]string{"prompt", "tokens", "project", "all_projects"}, nil},
}

func checkToolList(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		want, ok := mcpTools[tl.Name]
		if !ok {
			continue
		}
		raw, _ := json.Marshal(tl.InputSchema)
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil || schema.Type != "object" {
			t.Fatalf("%s: input schema %s", tl.Name, raw)
		}
		for _, a := range want.args {
			var p struct{ Description string }
			if err := json.Unmarshal(schema.Properties[a], &p); err != nil || p.Description == "" {
				t.Errorf("%s: argument %s missing or undescribed: %s", tl.Name, a, schema.Properties[a])
			}
		}
		if !slices.Equal(schema.Required, want.required) {
			t.Errorf("%s: required %v, want %v", tl.Name, schema.Required, want.required)
		}
		if len(tl.Description) < 100 {
			t.Errorf("%s: description too thin for a model: %q", tl.Name, tl.Description)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"list_sessions", "memory", "read_session", "recall", "search_sessions", "usage"}) {
		t.Fatalf("tools = %v", names)
	}
	toolsDocumented(t, names)
}

// toolsDocumented fails where the README, docs/mcp.md's table or loom
// mcp --help leave out one of the tools the server offers, or count
// them otherwise.
func toolsDocumented(t *testing.T, names []string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	help := newEmptyFixture(t).mustExec(t, "mcp", "--help")
	for _, n := range names {
		if !strings.Contains(string(readme), "`"+n+"`") || !strings.Contains(string(doc), "| `"+n+"` |") || !strings.Contains(help, n) {
			t.Errorf("tool %s: in the README %v, docs/mcp.md's table %v, loom mcp --help %v", n,
				strings.Contains(string(readme), "`"+n+"`"), strings.Contains(string(doc), "| `"+n+"` |"), strings.Contains(help, n))
		}
	}
	for _, wrong := range []string{"four tools", "three tools", "six tools"} {
		if strings.Contains(string(doc), wrong) || strings.Contains(string(readme), wrong) {
			t.Errorf("the docs say %q", wrong)
		}
	}
}

// loom mcp, started as an agent starts it, answers the Go SDK's client
// over real pipes: the tools of docs/mcp.md with their schemas, each called
// on the fixture's store with its text and structured content checked,
// and bad calls that are tool errors while the server keeps answering.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	// A session with a tool output too long to return whole.
	long := strings.Repeat("0123456789", 1000)
	st := fx.openStore(t)
	big := &loom.Session{ID: idAt(base.Add(time.Hour)), UserID: "local", Key: "cli:api:big", Project: fx.proj, Cwd: fx.project, Title: "Long output"}
	if err := st.Append(context.Background(), big, textMsg(loom.RoleUser, "dump the log", base.Add(time.Hour)),
		&loom.Message{Role: loom.RoleAssistant, CreatedAt: base.Add(time.Hour), Parts: []loom.Part{{Type: loom.PartTool, CallID: "c1", Name: "shell",
			Status: loom.ToolCompleted, Input: json.RawMessage(`{"cmd":"cat log"}`), Output: json.RawMessage(`"` + long + `"`)}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	cs := connectStdio(t, fx)
	if got := cs.InitializeResult().ServerInfo.Name; got != "loom" {
		t.Fatalf("server name %q", got)
	}
	checkToolList(t, cs)

	// search_sessions: the working directory's project by default; every
	// project on request; never another user's sessions.
	c := mustCall(t, cs, "search_sessions", map[string]any{"query": "clock"})
	hits := ids(t, c.data, "hits", "session_id")
	if len(hits) == 0 || !strings.Contains(c.text, fx.main.ID) || !strings.Contains(c.text, "**clock**") {
		t.Fatalf("search clock: %v\n%s", hits, c.text)
	}
	for _, id := range hits {
		if id != fx.main.ID && id != fx.sub.ID && id != fx.fork.ID {
			t.Fatalf("search clock found session %s outside the api project", id)
		}
	}
	c = mustCall(t, cs, "search_sessions", map[string]any{"query": "deploy"})
	if len(ids(t, c.data, "hits", "session_id")) != 0 || !strings.Contains(c.text, "all_projects=true") {
		t.Fatalf("search deploy in api: %s", c.text)
	}
	c = mustCall(t, cs, "search_sessions", map[string]any{"query": "deploy", "all_projects": true, "role": "user"})
	if got := ids(t, c.data, "hits", "session_id"); !slices.Equal(got, []string{fx.web.ID}) {
		t.Fatalf("search deploy everywhere: %v\n%s", got, c.text)
	}
	c = mustCall(t, cs, "search_sessions", map[string]any{"query": "flake", "all_projects": true})
	bobs := idAt(base.Add(50 * time.Minute))
	if got := ids(t, c.data, "hits", "session_id"); slices.Contains(got, bobs) || !slices.Contains(got, fx.main.ID) {
		t.Fatalf("search reached another user's session or missed ours: %s", c.text)
	}
	c = mustCall(t, cs, "search_sessions", map[string]any{"query": "clock", "limit": 1})
	if len(ids(t, c.data, "hits", "session_id")) != 1 || c.data["more"] != true || !strings.Contains(c.text, "more:") {
		t.Fatalf("search with limit 1: %s", c.text)
	}
	c = mustCall(t, cs, "search_sessions", map[string]any{"query": "deploy", "project": "web"})
	if got := ids(t, c.data, "hits", "session_id"); len(got) != 2 || got[0] != fx.web.ID {
		t.Fatalf("search in project web by name: %v", got)
	}

	// recall: the project's turns about a prompt, each with its session
	// and date, within the tokens asked for.
	c = mustCall(t, cs, "recall", map[string]any{"prompt": "clock", "tokens": 200})
	if got := ids(t, c.data, "turns", "session_id"); len(got) == 0 || !strings.Contains(c.text, got[0]) || c.data["tokens"].(float64) > 200 {
		t.Fatalf("recall clock: %v\n%s", got, c.text)
	}

	// list_sessions: the project's sessions, newest first, paged by cursor.
	c = mustCall(t, cs, "list_sessions", map[string]any{})
	listed := ids(t, c.data, "sessions", "id")
	for _, want := range []string{fx.main.ID, fx.sub.ID, fx.fork.ID, fx.twin1.ID, big.ID} {
		if !slices.Contains(listed, want) {
			t.Fatalf("list misses %s: %v", want, listed)
		}
	}
	if slices.Contains(listed, fx.web.ID) || slices.Contains(listed, fx.tg.ID) {
		t.Fatalf("list of project api has other projects' sessions: %v", listed)
	}
	c = mustCall(t, cs, "list_sessions", map[string]any{"limit": 2, "all_projects": true})
	next, _ := c.data["next"].(string)
	if len(ids(t, c.data, "sessions", "id")) != 2 || next == "" || !strings.Contains(c.text, "cursor=") {
		t.Fatalf("list limit 2: %s", c.text)
	}
	c2 := mustCall(t, cs, "list_sessions", map[string]any{"limit": 2, "all_projects": true, "cursor": next})
	if page2 := ids(t, c2.data, "sessions", "id"); len(page2) != 2 || slices.Contains(ids(t, c.data, "sessions", "id"), page2[0]) {
		t.Fatalf("second page %v repeats the first", page2)
	}
	c = mustCall(t, cs, "list_sessions", map[string]any{"all_projects": true, "surface": "telegram"})
	if got := ids(t, c.data, "sessions", "id"); !slices.Equal(got, []string{fx.tg.ID}) {
		t.Fatalf("list telegram: %v", got)
	}

	// read_session: newest messages, paging back, one turn.
	c = mustCall(t, cs, "read_session", map[string]any{"ref": fx.main.ID[:13], "limit": 3})
	msgs := c.data["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if len(msgs) != 3 || int(last["seq"].(float64)) != fx.main.MessageCount || !strings.Contains(c.text, "welcome") {
		t.Fatalf("read newest 3: %s", c.text)
	}
	nb := int(c.data["next_before"].(float64))
	if nb != fx.main.MessageCount-2 || !strings.Contains(c.text, fmt.Sprintf("before_seq=%d", nb)) {
		t.Fatalf("read: next_before %d\n%s", nb, c.text)
	}
	c = mustCall(t, cs, "read_session", map[string]any{"ref": fx.main.ID, "turn": 1})
	if msgs := c.data["messages"].([]any); len(msgs) != 4 || !strings.Contains(c.text, "read_file") || !strings.Contains(c.text, "FAIL TestRetry") {
		t.Fatalf("read turn 1: %s", c.text)
	}
	c = mustCall(t, cs, "read_session", map[string]any{"ref": "Long output"})
	if !strings.Contains(c.text, "offset=2000") || strings.Contains(c.text, long) {
		t.Fatalf("a long tool output is not cut with a way to read on:\n%s", c.text)
	}
	c = mustCall(t, cs, "read_session", map[string]any{"ref": big.ID, "seq": 2, "offset": 2000})
	if !strings.Contains(c.text, long[2000:]) {
		t.Fatalf("reading on from offset 2000 does not give the rest")
	}

	// memory: append, then read back; the file is loom's MEMORY.md.
	mustCall(t, cs, "memory", map[string]any{"action": "append", "text": "Retries back off exponentially, capped at 30 s."})
	c = mustCall(t, cs, "memory", map[string]any{"action": "read"})
	if !strings.Contains(c.text, "capped at 30 s") || c.data["file"] != "MEMORY.md" {
		t.Fatalf("memory read: %s %v", c.text, c.data)
	}
	if b, err := os.ReadFile(filepath.Join(fx.home, "data", "MEMORY.md")); err != nil || !strings.Contains(string(b), "capped at 30 s") {
		t.Fatalf("MEMORY.md: %q, %v", b, err)
	}

	// Bad calls are tool errors with a sentence to act on.
	wantToolError(t, cs, "search_sessions", map[string]any{}, "query is required")
	wantToolError(t, cs, "search_sessions", map[string]any{"query": strings.Repeat("flaky clock ", 20000)}, "query")
	wantToolError(t, cs, "search_sessions", map[string]any{"query": "clock", "limit": 1000000}, "limit must be between 1 and 100")
	wantToolError(t, cs, "search_sessions", map[string]any{"query": "clock", "limit": "ten"}, `"limit" must be a whole number`)
	wantToolError(t, cs, "search_sessions", map[string]any{"query": "clock", "since": "last tuesday"}, "since")
	wantToolError(t, cs, "read_session", map[string]any{"ref": "no-such-session"}, "no session matches")
	wantToolError(t, cs, "read_session", map[string]any{"ref": fx.main.ID, "turn": 99}, "there is no turn 99")
	wantToolError(t, cs, "read_session", map[string]any{}, "ref is required")
	wantToolError(t, cs, "list_sessions", map[string]any{"colour": "red"}, `unknown argument "colour"`)
	wantToolError(t, cs, "memory", map[string]any{"action": "erase"}, `action must be "read" or "append"`)
	// … and the server still answers.
	mustCall(t, cs, "search_sessions", map[string]any{"query": "clock"})
}

// The same tools at /mcp of loom serve, over streamable HTTP: the token's
// user's sessions only, another user's token sees none of them, and no
// token is 401.
func TestMCPServe(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	bob := strings.TrimSpace(fx.mustRun(t, "token", "create", "--user", "bob"))
	sv := startServe(t, fx, nil, "local")

	connect := func(token string) *sdk.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: bearerTransport(token)}
		client := sdk.NewClient(&sdk.Implementation{Name: "loom-test", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: sv.base + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connect to /mcp: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connect(sv.token)
	checkToolList(t, cs)
	c := mustCall(t, cs, "search_sessions", map[string]any{"query": "clock"})
	if hits := ids(t, c.data, "hits", "session_id"); len(hits) == 0 || !slices.Contains(hits, fx.main.ID) {
		t.Fatalf("search over HTTP: %s", c.text)
	}
	c = mustCall(t, cs, "list_sessions", map[string]any{"limit": 200})
	if got := ids(t, c.data, "sessions", "id"); !slices.Contains(got, fx.web.ID) || !slices.Contains(got, fx.tg.ID) {
		t.Fatalf("a served list is over every project: %v", got)
	}
	c = mustCall(t, cs, "read_session", map[string]any{"ref": fx.web.ID})
	if !strings.Contains(c.text, "deploy script") {
		t.Fatalf("read over HTTP: %s", c.text)
	}
	mustCall(t, cs, "memory", map[string]any{"action": "read"})
	wantToolError(t, cs, "read_session", map[string]any{"ref": "nope"}, "no session matches")

	// Bob reads only Bob's.
	bc := connect(bob)
	c = mustCall(t, bc, "list_sessions", map[string]any{"limit": 200})
	if got := ids(t, c.data, "sessions", "id"); len(got) != 1 || slices.Contains(got, fx.main.ID) {
		t.Fatalf("bob lists %v", got)
	}
	c = mustCall(t, bc, "search_sessions", map[string]any{"query": "clock"})
	if len(ids(t, c.data, "hits", "session_id")) != 0 {
		t.Fatalf("bob finds local's messages: %s", c.text)
	}
	wantToolError(t, bc, "read_session", map[string]any{"ref": fx.main.ID}, "no session matches")
	wantToolError(t, bc, "memory", map[string]any{"action": "read"}, "no memory files")

	// No token, or a wrong one: 401 before any MCP.
	for _, auth := range []string{"", "Bearer nope"} {
		req, _ := http.NewRequest(http.MethodPost, sv.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("/mcp with %q: %d, want 401", auth, resp.StatusCode)
		}
	}
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// loom's own agent offers the tools of an MCP server config.toml names,
// here loom mcp itself: the model sees mcp__history__search_sessions
// next to the built-in tools, calls it, and gets loom mcp's answer.
func TestAgentUsesMCPServer(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	seed := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:seed", Project: fx.proj, Cwd: fx.project, Title: "Backoff decision"}
	st := fx.openStore(t)
	if err := st.Append(context.Background(), seed, textMsg(loom.RoleUser, "we settled on jittered exponential backoff", time.Now())); err != nil {
		t.Fatal(err)
	}
	st.Close()
	conf := fmt.Sprintf("compact_after = 100000\n\n[mcp_servers.history]\ncommand = %q\nargs = [\"mcp\"]\n\n[mcp_servers.broken]\ncommand = %q\n",
		loomBinary(t), filepath.Join(fx.home, "no-such-server"))
	os.MkdirAll(filepath.Join(fx.home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(fx.home, "config", "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_m", Name: "mcp__history__search_sessions", Args: `{"query":"backoff"}`}}},
		openaitest.Reply{Text: "You chose jittered exponential backoff."},
	)
	r := fx.mustLoom(t, "", "run", "what did we decide about backoff?")
	if !strings.Contains(r.stdout, "jittered exponential backoff") {
		t.Fatalf("reply: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "MCP server broken") || strings.Count(r.stderr, "MCP server broken") != 1 {
		t.Fatalf("an unreachable server is not reported once: %q", r.stderr)
	}
	reqs := fx.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var tools []string
	for _, tl := range reqs[0].Body["tools"].([]any) {
		tools = append(tools, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	for _, want := range []string{"session_search", "mcp__history__search_sessions", "mcp__history__read_session", "mcp__history__memory"} {
		if !slices.Contains(tools, want) {
			t.Fatalf("tools offered: %v, missing %s", tools, want)
		}
	}
	got := wireMessages(t, reqs[1].Body)
	res := got[len(got)-1]
	if res.Role != "tool" || res.ToolCallID != "call_m" || !strings.Contains(res.Content, seed.ID) || !strings.Contains(res.Content, "**backoff**") {
		t.Fatalf("the tool result the model got: %+v", res)
	}
}

// A store that cannot be reached makes every call a tool error that
// says so; loom mcp itself keeps answering.
func TestMCPStoreUnavailable(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	cs := connectStdio(t, fx, "LOOM_DB=postgres://loom@127.0.0.1:1/none?connect_timeout=1")
	for range 2 {
		wantToolError(t, cs, "search_sessions", map[string]any{"query": "anything"}, "the session store cannot be opened")
	}
	checkToolList(t, cs)
}
