package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// The tools and their arguments as docs/mcp.md names them (each may take
// more).
var mcpTools = map[string]struct{ args, required []string }{
	"search_sessions": {[]string{"query", "limit", "project", "all_projects", "surface", "role", "since", "until"}, []string{"query"}},
	"list_sessions":   {[]string{"limit", "all_projects", "surface", "query"}, nil},
	"read_session":    {[]string{"ref", "limit", "before_seq", "turn"}, []string{"ref"}},
	"memory":          {[]string{"action", "file", "text"}, []string{"action"}},
	"usage":           {[]string{"by", "breakdown", "since", "until", "tz", "agent", "project", "all_projects"}, nil},
	"recall":          {[]string{"prompt", "tokens", "project", "all_projects"}, nil},
	"blame":           {[]string{"path", "lines", "rev"}, []string{"path"}},
}

// stdioTools are the tools of loom mcp, sorted.
var stdioTools = []string{"blame", "list_sessions", "memory", "read_session", "recall", "search_sessions", "usage"}

func checkToolList(t *testing.T, cs *sdk.ClientSession, want ...string) {
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
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	toolsDocumented(t, names)
}

// toolsDocumented fails where the README, docs/mcp.md's table or loom
// mcp --help leave out one of the tools the server offers, or count
// them otherwise.
func toolsDocumented(t *testing.T, names []string) {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	help := clitest.NewEmptyFixture(t).MustExec(t, "mcp", "--help")
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
	fx := clitest.NewFixture(t)
	// A session with a tool output too long to return whole.
	long := strings.Repeat("0123456789", 1000)
	st := fx.OpenStore(t)
	big := &loom.Session{ID: clitest.IDAt(clitest.Base.Add(time.Hour)), UserID: "local", Key: "cli:api:big", Project: fx.Proj, Cwd: fx.Project, Title: "Long output"}
	if err := st.Append(context.Background(), big, clitest.TextMsg(loom.RoleUser, "dump the log", clitest.Base.Add(time.Hour)),
		&loom.Message{Role: loom.RoleAssistant, CreatedAt: clitest.Base.Add(time.Hour), Parts: []loom.Part{{Type: loom.PartTool, CallID: "c1", Name: "shell",
			Status: loom.ToolCompleted, Input: json.RawMessage(`{"cmd":"cat log"}`), Output: json.RawMessage(`"` + long + `"`)}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	cs := clitest.ConnectStdio(t, fx)
	if got := cs.InitializeResult().ServerInfo.Name; got != "loom" {
		t.Fatalf("server name %q", got)
	}
	checkToolList(t, cs, stdioTools...)

	// search_sessions: the working directory's project by default; every
	// project on request; never another user's sessions.
	c := clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "clock"})
	hits := ids(t, c.Data, "hits", "session_id")
	if len(hits) == 0 || !strings.Contains(c.Text, fx.Main.ID) || !strings.Contains(c.Text, "**clock**") {
		t.Fatalf("search clock: %v\n%s", hits, c.Text)
	}
	for _, id := range hits {
		if id != fx.Main.ID && id != fx.Sub.ID && id != fx.Fork.ID {
			t.Fatalf("search clock found session %s outside the api project", id)
		}
	}
	c = clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "deploy"})
	if len(ids(t, c.Data, "hits", "session_id")) != 0 || !strings.Contains(c.Text, "all_projects=true") {
		t.Fatalf("search deploy in api: %s", c.Text)
	}
	c = clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "deploy", "all_projects": true, "role": "user"})
	if got := ids(t, c.Data, "hits", "session_id"); !slices.Equal(got, []string{fx.Web.ID}) {
		t.Fatalf("search deploy everywhere: %v\n%s", got, c.Text)
	}
	c = clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "flake", "all_projects": true})
	bobs := clitest.IDAt(clitest.Base.Add(50 * time.Minute))
	if got := ids(t, c.Data, "hits", "session_id"); slices.Contains(got, bobs) || !slices.Contains(got, fx.Main.ID) {
		t.Fatalf("search reached another user's session or missed ours: %s", c.Text)
	}
	c = clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "clock", "limit": 1})
	if len(ids(t, c.Data, "hits", "session_id")) != 1 || c.Data["more"] != true || !strings.Contains(c.Text, "more:") {
		t.Fatalf("search with limit 1: %s", c.Text)
	}
	c = clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "deploy", "project": "web"})
	if got := ids(t, c.Data, "hits", "session_id"); len(got) != 2 || got[0] != fx.Web.ID {
		t.Fatalf("search in project web by name: %v", got)
	}

	// recall: the project's turns about a prompt, each with its session
	// and date, within the tokens asked for.
	c = clitest.MustCall(t, cs, "recall", map[string]any{"prompt": "clock", "tokens": 200})
	if got := ids(t, c.Data, "turns", "session_id"); len(got) == 0 || !strings.Contains(c.Text, got[0]) || c.Data["tokens"].(float64) > 200 {
		t.Fatalf("recall clock: %v\n%s", got, c.Text)
	}

	// list_sessions: the project's sessions, newest first, paged by cursor.
	c = clitest.MustCall(t, cs, "list_sessions", map[string]any{})
	listed := ids(t, c.Data, "sessions", "id")
	for _, want := range []string{fx.Main.ID, fx.Sub.ID, fx.Fork.ID, fx.Twin1.ID, big.ID} {
		if !slices.Contains(listed, want) {
			t.Fatalf("list misses %s: %v", want, listed)
		}
	}
	if slices.Contains(listed, fx.Web.ID) || slices.Contains(listed, fx.Tg.ID) {
		t.Fatalf("list of project api has other projects' sessions: %v", listed)
	}
	c = clitest.MustCall(t, cs, "list_sessions", map[string]any{"limit": 2, "all_projects": true})
	next, _ := c.Data["next"].(string)
	if len(ids(t, c.Data, "sessions", "id")) != 2 || next == "" || !strings.Contains(c.Text, "cursor=") {
		t.Fatalf("list limit 2: %s", c.Text)
	}
	c2 := clitest.MustCall(t, cs, "list_sessions", map[string]any{"limit": 2, "all_projects": true, "cursor": next})
	if page2 := ids(t, c2.Data, "sessions", "id"); len(page2) != 2 || slices.Contains(ids(t, c.Data, "sessions", "id"), page2[0]) {
		t.Fatalf("second page %v repeats the first", page2)
	}
	c = clitest.MustCall(t, cs, "list_sessions", map[string]any{"all_projects": true, "surface": "telegram"})
	if got := ids(t, c.Data, "sessions", "id"); !slices.Equal(got, []string{fx.Tg.ID}) {
		t.Fatalf("list telegram: %v", got)
	}

	// read_session: newest messages, paging back, one turn.
	c = clitest.MustCall(t, cs, "read_session", map[string]any{"ref": fx.Main.ID[:13], "limit": 3})
	msgs := c.Data["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if len(msgs) != 3 || int(last["seq"].(float64)) != fx.Main.MessageCount || !strings.Contains(c.Text, "welcome") {
		t.Fatalf("read newest 3: %s", c.Text)
	}
	nb := int(c.Data["next_before"].(float64))
	if nb != fx.Main.MessageCount-2 || !strings.Contains(c.Text, fmt.Sprintf("before_seq=%d", nb)) {
		t.Fatalf("read: next_before %d\n%s", nb, c.Text)
	}
	c = clitest.MustCall(t, cs, "read_session", map[string]any{"ref": fx.Main.ID, "turn": 1})
	if msgs := c.Data["messages"].([]any); len(msgs) != 4 || !strings.Contains(c.Text, "read_file") || !strings.Contains(c.Text, "FAIL TestRetry") {
		t.Fatalf("read turn 1: %s", c.Text)
	}
	c = clitest.MustCall(t, cs, "read_session", map[string]any{"ref": "Long output"})
	if !strings.Contains(c.Text, "offset=2000") || strings.Contains(c.Text, long) {
		t.Fatalf("a long tool output is not cut with a way to read on:\n%s", c.Text)
	}
	c = clitest.MustCall(t, cs, "read_session", map[string]any{"ref": big.ID, "seq": 2, "offset": 2000})
	if !strings.Contains(c.Text, long[2000:]) {
		t.Fatalf("reading on from offset 2000 does not give the rest")
	}

	// memory: append, then read back; the file is loom's MEMORY.md.
	clitest.MustCall(t, cs, "memory", map[string]any{"action": "append", "text": "Retries back off exponentially, capped at 30 s."})
	c = clitest.MustCall(t, cs, "memory", map[string]any{"action": "read"})
	if !strings.Contains(c.Text, "capped at 30 s") || c.Data["file"] != "MEMORY.md" {
		t.Fatalf("memory read: %s %v", c.Text, c.Data)
	}
	if b, err := os.ReadFile(filepath.Join(fx.Home, "data", "MEMORY.md")); err != nil || !strings.Contains(string(b), "capped at 30 s") {
		t.Fatalf("MEMORY.md: %q, %v", b, err)
	}

	// Bad calls are tool errors with a sentence to act on.
	clitest.WantToolError(t, cs, "search_sessions", map[string]any{}, "query is required")
	clitest.WantToolError(t, cs, "search_sessions", map[string]any{"query": strings.Repeat("flaky clock ", 20000)}, "query")
	clitest.WantToolError(t, cs, "search_sessions", map[string]any{"query": "clock", "limit": 1000000}, "limit must be between 1 and 100")
	clitest.WantToolError(t, cs, "search_sessions", map[string]any{"query": "clock", "limit": "ten"}, `"limit" must be a whole number`)
	clitest.WantToolError(t, cs, "search_sessions", map[string]any{"query": "clock", "since": "last tuesday"}, "since")
	clitest.WantToolError(t, cs, "read_session", map[string]any{"ref": "no-such-session"}, "no session matches")
	clitest.WantToolError(t, cs, "read_session", map[string]any{"ref": fx.Main.ID, "turn": 99}, "there is no turn 99")
	clitest.WantToolError(t, cs, "read_session", map[string]any{}, "ref is required")
	clitest.WantToolError(t, cs, "list_sessions", map[string]any{"colour": "red"}, `unknown argument "colour"`)
	clitest.WantToolError(t, cs, "memory", map[string]any{"action": "erase"}, `action must be "read" or "append"`)
	// … and the server still answers.
	clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "clock"})
}

// The same tools at /mcp of loom serve, over streamable HTTP: the token's
// user's sessions only, another user's token sees none of them, and no
// token is 401.
func TestMCPServe(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	bob := strings.TrimSpace(fx.MustRun(t, "token", "create", "--user", "bob"))
	sv := clitest.StartServe(t, fx, nil, "local")

	connect := func(token string) *sdk.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: bearerTransport(token)}
		client := sdk.NewClient(&sdk.Implementation{Name: "loom-test", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: sv.Base + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connect to /mcp: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connect(sv.Token)
	// blame reads the machine's files: never offered at /mcp.
	checkToolList(t, cs, "list_sessions", "memory", "read_session", "recall", "search_sessions", "usage")
	c := clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "clock"})
	if hits := ids(t, c.Data, "hits", "session_id"); len(hits) == 0 || !slices.Contains(hits, fx.Main.ID) {
		t.Fatalf("search over HTTP: %s", c.Text)
	}
	c = clitest.MustCall(t, cs, "list_sessions", map[string]any{"limit": 200})
	if got := ids(t, c.Data, "sessions", "id"); !slices.Contains(got, fx.Web.ID) || !slices.Contains(got, fx.Tg.ID) {
		t.Fatalf("a served list is over every project: %v", got)
	}
	c = clitest.MustCall(t, cs, "read_session", map[string]any{"ref": fx.Web.ID})
	if !strings.Contains(c.Text, "deploy script") {
		t.Fatalf("read over HTTP: %s", c.Text)
	}
	clitest.MustCall(t, cs, "memory", map[string]any{"action": "read"})
	clitest.WantToolError(t, cs, "read_session", map[string]any{"ref": "nope"}, "no session matches")

	// Bob reads only Bob's.
	bc := connect(bob)
	c = clitest.MustCall(t, bc, "list_sessions", map[string]any{"limit": 200})
	if got := ids(t, c.Data, "sessions", "id"); len(got) != 1 || slices.Contains(got, fx.Main.ID) {
		t.Fatalf("bob lists %v", got)
	}
	c = clitest.MustCall(t, bc, "search_sessions", map[string]any{"query": "clock"})
	if len(ids(t, c.Data, "hits", "session_id")) != 0 {
		t.Fatalf("bob finds local's messages: %s", c.Text)
	}
	clitest.WantToolError(t, bc, "read_session", map[string]any{"ref": fx.Main.ID}, "no session matches")
	clitest.WantToolError(t, bc, "memory", map[string]any{"action": "read"}, "no memory files")

	// No token, or a wrong one: 401 before any MCP.
	for _, auth := range []string{"", "Bearer nope"} {
		req, _ := http.NewRequest(http.MethodPost, sv.Base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
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
	fx := clitest.NewAgentFixture(t)
	seed := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:seed", Project: fx.Proj, Cwd: fx.Project, Title: "Backoff decision"}
	st := fx.OpenStore(t)
	if err := st.Append(context.Background(), seed, clitest.TextMsg(loom.RoleUser, "we settled on jittered exponential backoff", time.Now())); err != nil {
		t.Fatal(err)
	}
	st.Close()
	conf := fmt.Sprintf("compact_after = 100000\n\n[mcp_servers.history]\ncommand = %q\nargs = [\"mcp\"]\n\n[mcp_servers.broken]\ncommand = %q\n",
		clitest.LoomBinary(t), filepath.Join(fx.Home, "no-such-server"))
	os.MkdirAll(filepath.Join(fx.Home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(fx.Home, "config", "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.Srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_m", Name: "mcp__history__search_sessions", Args: `{"query":"backoff"}`}}},
		openaitest.Reply{Text: "You chose jittered exponential backoff."},
	)
	r := fx.MustLoom(t, "", "run", "what did we decide about backoff?")
	if !strings.Contains(r.Stdout, "jittered exponential backoff") {
		t.Fatalf("reply: %q", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "MCP server broken") || strings.Count(r.Stderr, "MCP server broken") != 1 {
		t.Fatalf("an unreachable server is not reported once: %q", r.Stderr)
	}
	reqs := fx.Srv.Requests()
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
	got := clitest.WireMessages(t, reqs[1].Body)
	res := got[len(got)-1]
	if res.Role != "tool" || res.ToolCallID != "call_m" || !strings.Contains(res.Content, seed.ID) || !strings.Contains(res.Content, "**backoff**") {
		t.Fatalf("the tool result the model got: %+v", res)
	}
}

// A store that cannot be reached makes every call a tool error that
// says so; loom mcp itself keeps answering.
func TestMCPStoreUnavailable(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	cs := clitest.ConnectStdio(t, fx, "LOOM_DB=postgres://loom@127.0.0.1:1/none?connect_timeout=1")
	for range 2 {
		clitest.WantToolError(t, cs, "search_sessions", map[string]any{"query": "anything"}, "the session store cannot be opened")
	}
	checkToolList(t, cs, stdioTools...)
}
