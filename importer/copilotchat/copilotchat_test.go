package copilotchat

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	panelID = "4f0c2a9e-8b1d-4c3e-9a5f-6d7e8f9a0b1c"
	emptyID = "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d"
	logID   = "7c6b5a49-3827-4160-9f8e-7d6c5b4a3928"
)

var user = filepath.Join("testdata", "User")

// A version 3 session: every prompt and reply once, in order; the
// response's text around an inline reference one text; reasoning; a
// tool call with the arguments the model sent and the result Copilot
// kept; a canceled call; the workspace's folder as working directory.
func TestReadSession(t *testing.T) {
	res, s := importertest.ReadAllFor(t, Format{}, filepath.Join(user, "workspaceStorage"), panelID)
	if s.Title != "Explain main.go" || s.Cwd != filepath.FromSlash("/home/u/web") || s.Model != "claude-sonnet-4" || s.Provider != "github-copilot" {
		t.Errorf("session %+v", s)
	}
	if got := importertest.Roles(s); got != "user assistant user assistant" {
		t.Fatalf("roles %q", got)
	}
	prompt := s.Messages[0]
	if prompt.Text() != "explain main.go" || prompt.Parts[1].Type != loom.PartFile || prompt.Parts[1].Source.Path != "/home/u/web/main.go" {
		t.Errorf("prompt %+v", prompt.Parts)
	}
	reply := s.Messages[1]
	if reply.Model != "gpt-4.1" || reply.CreatedAt.UnixMilli() != 1762100001000 || reply.CompletedAt.UnixMilli() != 1762100006000 {
		t.Errorf("reply %s %v %v", reply.Model, reply.CreatedAt, reply.CompletedAt)
	}
	if got := reply.Parts[0].Text; got != "It starts the server in `server.go`. Let me check." {
		t.Errorf("text %q", got)
	}
	if p := reply.Parts[1]; p.Type != loom.PartReasoning || p.Text != "The user wants the entry point." {
		t.Errorf("reasoning %+v", p)
	}
	call := reply.Parts[2]
	if call.Name != "copilot_readFile" || call.CallID != "call_1" || call.Status != loom.ToolCompleted ||
		string(call.Input) != `{"filePath":"/home/u/web/main.go"}` || !strings.Contains(string(call.Output), "serve(") {
		t.Errorf("call %+v", call)
	}
	if p := reply.Parts[3]; p.Text != "It listens on :8080." {
		t.Errorf("last text %+v", p)
	}
	run := s.Messages[3]
	if p := run.Parts[0]; p.Status != loom.ToolError || p.Error != "canceled" || string(p.Input) != `{"command":"npm test","message":"Running `+"`npm test`"+`"}` {
		t.Errorf("canceled call %+v %s", p, p.Input)
	}
	if run.Error == nil || run.Error.Message != "Canceled" {
		t.Errorf("error %+v", run.Error)
	}
	for _, k := range []string{"textEditGroup", "codeblockUri", "prepareToolInvocation", "unknown:hologram"} {
		if res.Skipped[k] != 1 {
			t.Errorf("skipped %v: want one %s", res.Skipped, k)
		}
	}
}

// An empty window's session of an early version: no ids on requests,
// no model, no folder.
func TestReadEmptyWindowSession(t *testing.T) {
	res, s := importertest.ReadAllFor(t, Format{}, filepath.Join(user, "globalStorage", emptyWindowDir), emptyID)
	if got := importertest.Roles(s); got != "user assistant" || s.Cwd != "" || s.Messages[0].ID != "request-0" {
		t.Errorf("roles %q, cwd %q, id %s", got, s.Cwd, s.Messages[0].ID)
	}
	if res.Skipped["empty-prompt"] != 1 || res.Skipped["empty-response"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// The .jsonl log: its changes replayed make the session; a line that is
// no change, or that changes what is not there, is a problem, and the
// rest is read.
func TestReadLog(t *testing.T) {
	res, s := importertest.ReadAllFor(t, Format{}, filepath.Join(user, "workspaceStorage", "d4e5f6"), logID)
	if s.Title != "Health check" || s.Cwd != filepath.FromSlash("/home/u/api") || s.Model != "gpt-5" {
		t.Errorf("session %+v", s)
	}
	if got := importertest.Roles(s); got != "user assistant" {
		t.Fatalf("roles %q", got)
	}
	reply := s.Messages[1]
	if len(reply.Parts) != 2 || reply.Parts[0].Text != "Adding " || string(reply.Parts[1].Input) != `{"filePath":"health.go"}` || string(reply.Parts[1].Output) != `"Created health.go"` {
		t.Errorf("reply %+v", reply.Parts)
	}
	if len(res.Problems) != 2 || res.Skipped["unknown-change:7"] != 1 {
		t.Errorf("problems %v, skipped %v", res.Problems, res.Skipped)
	}
}

// Imported once; a second import adds nothing; the log's next request
// is added alone, followed by --watch.
func TestImportAndFollowLog(t *testing.T) {
	st := importertest.Store(t)
	rep := importertest.Import(t, st, Format{}, user)
	if rep.SessionsNew != 3 || rep.MessagesAdded != 8 {
		t.Fatalf("first import %+v", rep)
	}
	if rep = importertest.Import(t, st, Format{}, user); rep.SessionsNew != 0 || rep.MessagesAdded != 0 {
		t.Fatalf("second import %+v", rep)
	}

	dir := filepath.Join(t.TempDir(), "chatSessions")
	os.MkdirAll(dir, 0o755)
	data := importertest.ReadBytes(t, filepath.Join(user, "workspaceStorage", "d4e5f6", "chatSessions", logID+".jsonl"))
	data = data[:bytes.Index(data, []byte("not json"))]
	file := filepath.Join(dir, logID+".jsonl")
	importertest.WriteFile(t, file, data, 0o644)
	importertest.Follows(t, Format{}, dir, func() {
		importertest.AppendLines(t, file, `{"kind":2,"k":["requests"],"v":[{"requestId":"request_b","message":{"text":"and a test"},"response":[{"value":"Added health_test.go."}],"timestamp":1762100210000}]}`)
	}, 2)
}

func TestRootsAndBundles(t *testing.T) {
	roots := Format{}.Roots(func(k string) string {
		if k == "XDG_CONFIG_HOME" || k == "APPDATA" {
			return filepath.FromSlash("/cfg")
		}
		return ""
	}, filepath.FromSlash("/home/u"))
	if len(roots) != 6 || filepath.Base(roots[0]) != "workspaceStorage" || filepath.Base(roots[1]) != emptyWindowDir {
		t.Errorf("roots %v", roots)
	}
	bs, err := Format{}.Bundles(context.Background(), user)
	if err != nil || len(bs) != 3 {
		t.Errorf("bundles %v %v: workspace.json is no session", bs, err)
	}
	// Other extensions' storage beside chatSessions is not walked.
	dir := t.TempDir()
	for _, p := range []string{"workspaceStorage/h/chatSessions/a.json", "workspaceStorage/h/ms-python.python/x/chatSessions/b.json"} {
		p = filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(`{}`), 0o644)
	}
	if bs, err := (Format{}).Bundles(context.Background(), dir); err != nil || len(bs) != 1 || filepath.Base(bs[0].Name()) != "a.json" {
		t.Errorf("bundles %v %v", bs, err)
	}
}
