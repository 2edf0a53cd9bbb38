package cursor

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	mainID = "3f1c9a2e-0000-4000-8000-000000000001"
	subID  = "7d2e0b11-0000-4000-8000-000000000002"
	textID = "5b7a0c3d-0000-4000-8000-000000000003"
)

var projects = filepath.Join("testdata", "projects")

func bundles(t testing.TB, root string) []importer.Bundle {
	t.Helper()
	bs, err := Format{}.Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

func readAll(t testing.TB, root string) *importer.Result {
	t.Helper()
	return importertest.ReadAllValid(t, Format{}, root)
}

// TestBundles: a session's transcript and its sub-agents' are one
// bundle, parent first; a transcript of the text form is one of its own.
func TestBundles(t *testing.T) {
	bs := bundles(t, projects)
	if len(bs) != 2 {
		t.Fatalf("bundles %v", bs)
	}
	var names []string
	for _, b := range bs {
		var files []string
		for _, f := range b.Files {
			files = append(files, filepath.Base(f))
		}
		names = append(names, strings.Join(files, " "))
	}
	want := []string{mainID + ".jsonl " + subID + ".jsonl", textID + ".txt"}
	if !slices.Equal(names, want) {
		t.Errorf("bundles %q, want %q", names, want)
	}
}

// TestReadJSONL reads the CLI's JSONL transcript: every prompt (the
// text inside <user_query>), reply, reasoning block and tool call once
// and in order, each call with its result, a call whose result Cursor
// did not write closed when its turn ends, and the sub-agent linked to
// its parent.
func TestReadJSONL(t *testing.T) {
	res := readAll(t, filepath.Join(projects, "home-u-app", "agent-transcripts", mainID))
	if len(res.Sessions) != 2 {
		t.Fatalf("sessions %d", len(res.Sessions))
	}
	s := importertest.Session(t, res, mainID)
	if got := importertest.Roles(s); got != "user assistant assistant user assistant" {
		t.Errorf("roles %q", got)
	}
	if s.Messages[0].Text() != "why does the build fail?" || s.Messages[3].Text() != "thanks" {
		t.Errorf("prompts %q %q", s.Messages[0].Text(), s.Messages[3].Text())
	}
	reply := s.Messages[1]
	if p := reply.Parts[0]; p.Type != loom.PartReasoning || p.Text != "Run the build first." {
		t.Errorf("reasoning %+v", p)
	}
	if p := reply.Parts[2]; p.Name != "Shell" || p.Status != loom.ToolError || p.Error != "main.go:3: undefined: x" || !strings.Contains(string(p.Input), `"command":"go build ./..."`) {
		t.Errorf("shell %+v", p)
	}
	if p := s.Messages[2].Parts[1]; p.Name != "Subagent" || p.Status != loom.ToolCompleted || string(p.Metadata) != `{"result":"not recorded"}` {
		t.Errorf("sub-agent call %+v", p)
	}
	if s.Messages[0].ID != mainID+":1" || s.Cwd != "" {
		t.Errorf("first id %q, cwd %q", s.Messages[0].ID, s.Cwd)
	}
	sub := importertest.Session(t, res, subID)
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != mainID || importertest.Roles(sub) != "user assistant assistant" {
		t.Errorf("sub-agent %+v", sub)
	}
	if p := sub.Messages[1].Parts[0]; p.Status != loom.ToolCompleted || string(p.Output) != `"old.go:7: x := 1"` {
		t.Errorf("sub-agent's call %+v", p)
	}
	if res.Skipped["unknown:hologram"] != 1 || res.Skipped["turn_ended"] != 1 || len(res.Problems) != 1 || res.Problems[0].Line != 8 {
		t.Errorf("skipped %v problems %v", res.Skipped, res.Problems)
	}
}

// TestReadText reads the text form of older CLI versions.
func TestReadText(t *testing.T) {
	res := importertest.ReadFile(t, Format{}, filepath.Join(projects, "home-u-app", "agent-transcripts", textID+".txt"))
	s := importertest.Session(t, res, textID)
	if got := importertest.Roles(s); got != "user assistant user assistant" {
		t.Fatalf("roles %q", got)
	}
	if s.Messages[0].Text() != "list the files" {
		t.Errorf("prompt %q", s.Messages[0].Text())
	}
	r := s.Messages[1]
	if len(r.Parts) != 4 || r.Parts[0].Type != loom.PartReasoning || !strings.HasPrefix(r.Parts[0].Text, "The user wants a listing.") || r.Parts[1].Text != "Listing them now." {
		t.Fatalf("reply %+v", r.Parts)
	}
	if p := r.Parts[2]; p.Name != "Shell" || string(p.Input) != `{"command":"ls -a","working_directory":"/home/u/app"}` || string(p.Output) != `"main.go\ngo.mod"` {
		t.Errorf("call %+v", p)
	}
	if r.Parts[3].Text != "There are two files: main.go and go.mod." {
		t.Errorf("last text %q", r.Parts[3].Text)
	}
	if p := s.Messages[3].Parts[0]; p.Name != "Read" || p.Status != loom.ToolCompleted || string(p.Input) != `{"path":"go.mod"}` {
		t.Errorf("unanswered call %+v", p)
	}
}

// TestProjectDir: the project's directory is found from Cursor's name
// for it when it exists, with "-" standing for "/", "." or "-".
func TestProjectDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "src", "my-app.v2")
	importertest.MkdirAll(t, dir)
	name := strings.NewReplacer(string(filepath.Separator), "-", ".", "-", ":", "-").Replace(strings.TrimPrefix(dir, string(filepath.Separator)))
	if got := projectDir(name); got != dir {
		t.Errorf("projectDir(%q) = %q, want %q", name, got, dir)
	}
	if got := projectDir("no-such-place-here"); got != "" {
		t.Errorf("a directory that is not there: %q", got)
	}
}

// The editor's database: cursorDiskKV as Cursor creates it.
const kvSchema = `CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);`

const chatID = "c0ffee00-0000-4000-8000-00000000000a"

func put(t testing.TB, db *sql.DB, key string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	importertest.Exec(t, db, `INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)`, key, b)
}

type obj = map[string]any

// editorBubbles are a chat of the split form: a prompt, a reply that
// thinks, a tool call, the reply after it, a bubble of an unknown type,
// and a second prompt and reply.
var editorBubbles = []obj{
	{"_v": 3, "type": 1, "bubbleId": "b1", "text": "rename foo to bar", "createdAt": "2025-11-20T10:00:00.000Z", "workspaceUris": []string{"file:///home/u/app"}},
	{"_v": 3, "type": 2, "bubbleId": "b2", "text": "", "thinking": obj{"text": "Find foo first.", "signature": "s"}, "createdAt": "2025-11-20T10:00:02.000Z"},
	{"_v": 3, "type": 2, "bubbleId": "b3", "text": "", "toolFormerData": obj{"name": "grep_search", "toolCallId": "tc1", "status": "completed", "rawArgs": `{"query":"foo"}`, "result": `{"matches":["a.go:1"]}`}, "createdAt": "2025-11-20T10:00:03.000Z"},
	{"_v": 3, "type": 2, "bubbleId": "b4", "text": "Renamed in a.go.", "tokenCount": obj{"inputTokens": 1200, "outputTokens": 80}, "modelInfo": obj{"modelName": "claude-4.5-sonnet"}, "createdAt": "2025-11-20T10:00:05.000Z", "timingInfo": obj{"clientEndTime": 1763632807000}},
	{"_v": 3, "type": 7, "bubbleId": "b5"},
	{"_v": 3, "type": 1, "bubbleId": "b6", "text": "run the tests", "createdAt": "2025-11-20T10:01:00.000Z"},
	{"_v": 3, "type": 2, "bubbleId": "b7", "toolFormerData": obj{"name": "run_terminal_cmd", "toolCallId": "tc2", "status": "error", "params": `{"command":"go test"}`, "result": "exit 1"}, "createdAt": "2025-11-20T10:01:02.000Z"},
}

// buildEditor writes state.vscdb in dir with the split chat's first n
// bubbles, an inline chat of an older version, and an empty chat.
func buildEditor(t testing.TB, dir string, n int) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(dir, stateDB)
	db := importertest.SQLiteWriter(t, path)
	importertest.Exec(t, db, kvSchema)
	importertest.Exec(t, db, `INSERT INTO ItemTable (key, value) VALUES ('cursorAuth/cachedEmail', 'u@example.com')`)
	setHeaders(t, db, n)
	for _, b := range editorBubbles[:n] {
		put(t, db, "bubbleId:"+chatID+":"+b["bubbleId"].(string), b)
	}
	put(t, db, "composerData:old-chat", obj{"composerId": "old-chat", "createdAt": 1731000000000, "conversation": []obj{
		{"type": 1, "bubbleId": "o1", "text": "what is a goroutine?"},
		{"type": 2, "bubbleId": "o2", "text": "A lightweight thread."},
	}})
	put(t, db, "composerData:empty", obj{"_v": 10, "composerId": "empty", "createdAt": 1763632800000, "fullConversationHeadersOnly": []obj{}})
	return path, db
}

func setHeaders(t testing.TB, db *sql.DB, n int) {
	var headers []obj
	for _, b := range editorBubbles[:n] {
		headers = append(headers, obj{"bubbleId": b["bubbleId"], "type": b["type"]})
	}
	put(t, db, "composerData:"+chatID, obj{"_v": 10, "composerId": chatID, "name": "Rename foo", "createdAt": 1763632800000, "lastUpdatedAt": 1763632862000,
		"modelConfig": obj{"modelName": "default"}, "fullConversationHeadersOnly": headers})
}

// TestReadEditor reads the editor's chats: bubbles in the order the
// chat lists them, thinking, tool calls with their results, usage on
// the reply that recorded it, and an older version's inline chat.
func TestReadEditor(t *testing.T) {
	dir := t.TempDir()
	_, db := buildEditor(t, dir, len(editorBubbles))
	db.Close()
	res := readAll(t, dir)
	if len(res.Sessions) != 2 || res.Skipped["empty-chat"] != 1 || res.Skipped["unknown:bubble-type-7"] != 1 {
		t.Fatalf("sessions %d skipped %v", len(res.Sessions), res.Skipped)
	}
	s := importertest.Session(t, res, chatID)
	if got := importertest.Roles(s); got != "user assistant assistant assistant user assistant" {
		t.Errorf("roles %q", got)
	}
	if s.Title != "Rename foo" || s.Cwd != "/home/u/app" || !s.CreatedAt.Equal(time.UnixMilli(1763632800000)) {
		t.Errorf("session %+v", s)
	}
	if p := s.Messages[1].Parts[0]; p.Type != loom.PartReasoning || p.Text != "Find foo first." {
		t.Errorf("thinking %+v", p)
	}
	if p := s.Messages[2].Parts[0]; p.Name != "grep_search" || p.CallID != "tc1" || string(p.Input) != `{"query":"foo"}` || string(p.Output) != `{"matches":["a.go:1"]}` || p.Status != loom.ToolCompleted {
		t.Errorf("call %+v", p)
	}
	r := s.Messages[3]
	if r.Usage.InputTokens != 1200 || r.Usage.OutputTokens != 80 || r.Model != "claude-4.5-sonnet" || !r.CompletedAt.Equal(time.UnixMilli(1763632807000)) {
		t.Errorf("reply %+v", r)
	}
	if p := s.Messages[5].Parts[0]; p.Status != loom.ToolError || p.Error != "exit 1" || string(p.Input) != `{"command":"go test"}` {
		t.Errorf("failed call %+v", p)
	}
	old := importertest.Session(t, res, "old-chat")
	if importertest.Roles(old) != "user assistant" || old.Messages[1].Text() != "A lightweight thread." {
		t.Errorf("inline chat %+v", old)
	}
}

// TestImportTwice: a chat that grows in the editor brings only its new
// messages on the next import, and an import after that adds nothing.
func TestImportTwice(t *testing.T) {
	dir := t.TempDir()
	_, db := buildEditor(t, dir, 4)
	defer db.Close()
	st := importertest.Store(t)
	rep := importertest.Import(t, st, Format{}, dir)
	if rep.SessionsNew != 2 || rep.FilesFailed != 0 {
		t.Fatalf("first import %+v", rep)
	}
	for _, b := range editorBubbles[4:] {
		put(t, db, "bubbleId:"+chatID+":"+b["bubbleId"].(string), b)
	}
	setHeaders(t, db, len(editorBubbles))
	importertest.GrowsBy(t, st, Format{}, 2, dir)
	if u := importertest.StoredUsage(t, st, Tool, chatID); u.InputTokens != 1200 {
		t.Errorf("usage %+v", u)
	}
}

// TestWatch: --watch follows a transcript the CLI appends to, and the
// editor's database as it writes.
func TestWatch(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "projects", "home-u-app", transcriptsDir)
	importertest.MkdirAll(t, dir)
	file := filepath.Join(dir, "w1.jsonl")
	write := func(lines ...string) {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, l := range lines {
			if _, err := f.WriteString(l + "\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(`{"role":"user","message":{"content":[{"type":"text","text":"hello"}]}}`, `{"role":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}`)
	global := filepath.Join(home, "globalStorage")
	importertest.MkdirAll(t, global)
	_, db := buildEditor(t, global, 4)
	defer db.Close()
	w := importertest.Watch(t, importertest.Store(t), Format{}, filepath.Join(home, "projects"), global)
	if r := w.First(t); r.SessionsNew != 3 {
		t.Fatalf("first run %+v", r)
	}
	write(`{"role":"user","message":{"content":[{"type":"text","text":"more"}]}}`)
	w.Follows(t, "a line appended to a transcript")
	put(t, db, "bubbleId:"+chatID+":b6", editorBubbles[5])
	setHeaders(t, db, 6)
	w.Follows(t, "a bubble the editor wrote")
}

// TestBadInput: values the editor did not write are problems or
// skipped, never a failure of the whole database.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	_, db := buildEditor(t, dir, 2)
	importertest.Exec(t, db, `INSERT INTO cursorDiskKV (key, value) VALUES ('composerData:broken', 'not json')`)
	importertest.Exec(t, db, `INSERT INTO cursorDiskKV (key, value) VALUES ('bubbleId:`+chatID+`:b1', '{"type":"x"')`)
	put(t, db, "composerData:odd", obj{"composerId": "odd", "conversation": []any{5, obj{"type": 2, "bubbleId": "z", "toolFormerData": obj{"name": "x", "status": "weird"}}}})
	db.Close()
	res := readAll(t, dir)
	if len(res.Problems) < 3 {
		t.Errorf("problems %v", res.Problems)
	}
	odd := importertest.Session(t, res, "odd")
	if p := odd.Messages[0].Parts[0]; p.Status != loom.ToolRunning {
		t.Errorf("call of an unknown status %+v", p)
	}
	importertest.RefusesOtherDB(t, Format{}, "x.vscdb")
}

// TestRoots: the CLI's projects and the editor's global storage, moved
// by $CURSOR_CONFIG_DIR and $VSCODE_APPDATA.
func TestRoots(t *testing.T) {
	env := map[string]string{configEnv: "/c", appDataEnv: "/a"}
	got := Format{}.Roots(func(k string) string { return env[k] }, "/home/u")
	want := []string{filepath.Join("/c", "projects"), filepath.Join("/a", "Cursor", "User", "globalStorage")}
	if !slices.Equal(got, want) {
		t.Errorf("roots %v, want %v", got, want)
	}
}

// On Linux the editor's data is under $XDG_CONFIG_HOME when it is an
// absolute path; a relative one is ignored, as the XDG Base Directory
// specification says, and ~/.config is read instead.
func TestRootsXDGConfigHome(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("XDG_CONFIG_HOME moves the editor's data on Linux only")
	}
	for xdg, want := range map[string]string{
		"/x":      filepath.Join("/x", "Cursor", "User", "globalStorage"),
		"rel/dir": filepath.Join("/home/u", ".config", "Cursor", "User", "globalStorage"),
	} {
		env := map[string]string{"XDG_CONFIG_HOME": xdg}
		got := Format{}.Roots(func(k string) string { return env[k] }, "/home/u")
		if len(got) != 2 || got[1] != want {
			t.Errorf("XDG_CONFIG_HOME=%s: roots %v, want the editor's at %s", xdg, got, want)
		}
	}
}
