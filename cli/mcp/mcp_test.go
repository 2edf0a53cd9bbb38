package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/importer/agents"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/secrets"
)

// awsKey is a planted AWS access key id.
const awsKey = "AKIAQ3EGRB7XK2M4T6ZW"

// world is a SQLite store with alice's sessions about a pool in the
// projects api and web, one of them holding a secret, and bob's in api.
type world struct {
	st         loom.Engine
	api        loom.Project
	apiS, webS *loom.Session
	dirs       func() (paths.Dirs, error)
}

func newWorld(t *testing.T) *world {
	t.Helper()
	home := t.TempDir()
	w := &world{st: cmdtest.Store(t), api: loom.Project{ID: "p-api", Name: "api", Root: "/src/api"},
		dirs: func() (paths.Dirs, error) {
			return paths.Resolve(func(k string) string { return map[string]string{"LOOM_HOME": home}[k] })
		}}
	web := loom.Project{ID: "p-web", Name: "web", Root: "/src/web"}
	w.apiS = &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:api", Title: "api pool", Project: w.api}
	storetest.AppendTexts(t, w.st, w.apiS, "why does the connection pool time out with the key "+awsKey, "the idle timeout is 30 seconds")
	w.webS = &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:web", Title: "web pool", Project: web}
	storetest.AppendTexts(t, w.st, w.webS, "the web pool times out too", "raised it")
	storetest.AppendTexts(t, w.st, &loom.Session{ID: loom.NewID(), UserID: "bob", Key: "cli:bob", Title: "bob's pool", Project: w.api}, "bob's pool", "ok")
	return w
}

// options are loom mcp's options for alice in api on w, with cfg as
// config.toml, and its streams.
func (w *world) options(cfg *config.Config) (*Options, *term.IOStreams) {
	ios, _, _, _ := term.Test()
	return &Options{
		IO:        ios,
		ReadStore: func(context.Context) (loom.Engine, error) { return w.st, nil },
		Config:    func() (*config.Config, string, error) { return cfg, "config.toml", nil },
		MCPRedact: secrets.Default,
		Dirs:      w.dirs,
		Project:   func() (loom.Project, error) { return w.api, nil },
		Getenv:    func(string) string { return "" },
		Home:      func() string { return "/nonexistent" },
		Version:   "test",
		User:      "alice",
	}, ios
}

// call is a JSON-RPC request of an MCP client: method with params.
type call struct {
	method string
	params any
}

// serve runs loom mcp with opts on an initialize and calls, each with
// the id of its position from 1, and returns the results by id.
func serve(t *testing.T, opts *Options, calls ...call) map[int]json.RawMessage {
	t.Helper()
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i, c := range calls {
		params, err := json.Marshal(c.params)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", i+1, c.method, params)
	}
	opts.IO.In = strings.NewReader(in.String())
	if err := mcpRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	got := map[int]json.RawMessage{}
	for line := range strings.Lines(opts.IO.Out.(fmt.Stringer).String()) {
		var m struct {
			ID     int
			Result json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		if m.Error != nil {
			t.Fatalf("request %d: %s", m.ID, m.Error)
		}
		got[m.ID] = m.Result
	}
	if len(got) != len(calls)+1 {
		t.Fatalf("%d answers to %d requests:\n%s", len(got), len(calls)+1, opts.IO.Out.(fmt.Stringer).String())
	}
	return got
}

func tool(name string, args any) call {
	return call{"tools/call", map[string]any{"name": name, "arguments": args}}
}

// toolNames are the tools a tools/list result offers.
func toolNames(t *testing.T, result json.RawMessage) []string {
	t.Helper()
	var r struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// The command takes --user and no argument.
func TestNewCmdMCPOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, NewCmdMCP, "--user", "bob")
	if got.User != "bob" || got.ReadStore == nil || got.MCPRedact == nil || got.Searchers == nil || got.Dirs == nil || got.Project == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, NewCmdMCP); got.User != "local" {
		t.Errorf("the default user %q", got.User)
	}
	cmdtest.Rejects(t, NewCmdMCP, "serve")
}

// The tools search this project's sessions of the user, read them with
// secrets redacted, and append to the memory files.
func TestMCPRunServesTheTools(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options(&config.Config{})
	got := serve(t, opts,
		call{"tools/list", map[string]any{}},
		tool("search_sessions", map[string]any{"query": "pool"}),
		tool("read_session", map[string]any{"ref": w.apiS.ID}),
		tool("memory", map[string]any{"action": "append", "file": "memory", "text": "the pool idles for 30 seconds"}),
	)
	if names := toolNames(t, got[1]); !slices.Equal(names, []string{"blame", "list_sessions", "memory", "read_session", "recall", "search_sessions", "usage"}) {
		t.Errorf("tools %q, want the history tools without handoff", names)
	}
	var search struct {
		StructuredContent struct{ Hits []loom.SearchHit }
	}
	if err := json.Unmarshal(got[2], &search); err != nil || len(search.StructuredContent.Hits) != 1 || search.StructuredContent.Hits[0].SessionID != w.apiS.ID {
		t.Errorf("search_sessions: %s (%v), want only alice's api session", got[2], err)
	}
	if read := string(got[3]); strings.Contains(read, awsKey) || !strings.Contains(read, "[REDACTED:") || !strings.Contains(read, "the idle timeout is 30 seconds") {
		t.Errorf("read_session, want the key redacted: %s", read)
	}
	d, _ := w.dirs()
	if b, err := os.ReadFile(d.MemoryFile()); err != nil || !strings.Contains(string(b), "the pool idles for 30 seconds") {
		t.Errorf("MEMORY.md: %q (%v)", b, err)
	}
	if text(ios.ErrOut) != "" {
		t.Errorf("stderr %q", text(ios.ErrOut))
	}
}

// [mcp] handoff offers the handoff tool, which writes a session as
// another agent's; a configuration that cannot be
// read leaves it out, says why, and serves the others.
func TestMCPRunHandoffFollowsTheConfiguration(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cfg := &config.Config{}
	cfg.MCP.Handoff = true
	opts, _ := w.options(cfg)
	home, dir := t.TempDir(), t.TempDir()
	opts.Formats, opts.Home = agents.Formats(), func() string { return home }
	got := serve(t, opts, call{"tools/list", map[string]any{}}, tool("handoff", map[string]any{"ref": w.webS.ID, "to": "claude-code", "dir": dir}))
	if names := toolNames(t, got[1]); !slices.Contains(names, "handoff") {
		t.Errorf("with [mcp] handoff: tools %q", names)
	}
	// It writes the session into Claude Code's files under the home.
	var handed struct {
		StructuredContent struct{ Path, Resume string }
	}
	if err := json.Unmarshal(got[2], &handed); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(handed.StructuredContent.Path)
	if err != nil || !strings.HasPrefix(handed.StructuredContent.Path, filepath.Join(home, ".claude")) || !strings.Contains(string(b), "raised it") ||
		!strings.HasPrefix(handed.StructuredContent.Resume, "cd "+dir+" && claude --resume ") {
		t.Errorf("handoff to claude-code: %s (%v)", got[2], err)
	}
	opts, ios := w.options(nil)
	opts.Config = func() (*config.Config, string, error) { return nil, "", errors.New("config.toml: line 3: bad key") }
	if names := toolNames(t, serve(t, opts, call{"tools/list", map[string]any{}})[1]); slices.Contains(names, "handoff") || !slices.Contains(names, "search_sessions") {
		t.Errorf("with a broken configuration: tools %q", names)
	}
	if want := "loom mcp: config.toml: line 3: bad key; the handoff tool is off\n"; text(ios.ErrOut) != want {
		t.Errorf("stderr %q, want %q", text(ios.ErrOut), want)
	}
}

func text(w any) string { return w.(fmt.Stringer).String() }
