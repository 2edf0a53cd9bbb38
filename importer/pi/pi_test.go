package pi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

func readFile(t *testing.T, path string) *importer.Result {
	t.Helper()
	res := importertest.ReadFile(t, Format{}, path)
	importertest.CheckComplete(t, res)
	return res
}

// Files pi 0.73.1 wrote (TestImportRealPi in package cli): a session
// continued with --continue, and a file read with reasoning.
func TestReadReal(t *testing.T) {
	res := readFile(t, "testdata/real-0.73.1-continued.jsonl")
	s := importertest.Session(t, res, "01a210e9-9fa7-72b8-9d81-53be1b083f84")
	c := importertest.TallyOf(s)
	if !maps.Equal(c.Roles, map[string]int{"user": 2, "assistant": 2}) || c.Reasoning != 1 {
		t.Errorf("tally %+v", c)
	}
	if s.Cwd != "/tmp/TestImportRealPi2470235339/001/work" || s.Model != "gpt-fake" || s.Provider != "fake" {
		t.Errorf("session %+v", s)
	}
	a := importertest.Message(t, s, "6b4e0812")
	if a.Usage.InputTokens != 800 || a.Usage.CacheReadTokens != 200 || a.Usage.OutputTokens != 15 || a.Usage.APICalls != 1 || a.Usage.CostUSD == 0 {
		t.Errorf("usage %+v", a.Usage)
	}
	if !maps.Equal(res.Skipped, map[string]int{"model_change": 1, "thinking_level_change": 1}) || len(res.Problems) != 0 {
		t.Errorf("skipped %v, problems %v", res.Skipped, res.Problems)
	}

	res = readFile(t, "testdata/real-0.73.1-tool.jsonl")
	s = res.Sessions[0]
	c = importertest.TallyOf(s)
	if !maps.Equal(c.Roles, map[string]int{"user": 1, "assistant": 2}) || !maps.Equal(c.Tools, map[string]int{"completed": 1}) || c.Reasoning != 2 {
		t.Errorf("tally %+v", c)
	}
	p := importertest.Message(t, s, "3a7301c7").Parts[1]
	if p.Name != "read" || string(p.Input) != `{"path":"notes.txt"}` || string(p.Output) != `"alpha\nbeta\n"` || p.EndedAt == nil {
		t.Errorf("tool part %+v", p)
	}
}

// A tree: the path to the last entry is the session, a branch left by
// /tree is a fork, a compaction a summary, a call without its result at
// the end is waiting for it; what is not a message is counted, and bad
// lines are problems.
func TestReadTree(t *testing.T) {
	res := readFile(t, "testdata/tree.jsonl")
	s := importertest.Session(t, res, "tree-session")
	var ids []string
	for _, m := range s.Messages {
		ids = append(ids, m.Role+":"+m.ID)
	}
	want := []string{"user:u1", "assistant:a1", "system:b1", "assistant:a3", "summary:k1", "user:u2", "assistant:a4"}
	if !slices.Equal(ids, want) {
		t.Errorf("messages %v, want %v", ids, want)
	}
	if s.Title != "Bug hunt" || s.Cwd != "/home/u/proj" || s.Model != "claude-x" || s.Provider != "anthropic" {
		t.Errorf("session %+v", s)
	}
	a1 := importertest.Message(t, s, "a1")
	if a1.Usage != (loom.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 100, CacheWriteTokens: 20, CostUSD: 0.25, APICalls: 1}) {
		t.Errorf("a1 usage %+v", a1.Usage)
	}
	if r := a1.Parts[0]; r.Type != loom.PartReasoning || r.Text != "Look first." || string(r.Metadata) != `{"signature":"sig1"}` {
		t.Errorf("reasoning %+v", r)
	}
	if p := a1.Parts[2]; p.Status != loom.ToolCompleted || string(p.Output) != `"main.go"` || string(p.Metadata) != `{"details":{"exitCode":0}}` {
		t.Errorf("tool %+v", p)
	}
	if k := importertest.Message(t, s, "k1"); k.Usage.Compactions != 1 || !strings.Contains(string(k.Parts[0].Metadata), `"tokensBefore":5000`) {
		t.Errorf("compaction %+v", k)
	}
	if u2 := importertest.Message(t, s, "u2"); len(u2.Parts) != 2 || u2.Parts[1].URL != "data:image/png;base64,aGk=" {
		t.Errorf("u2 %+v", u2.Parts)
	}
	if p := importertest.Message(t, s, "a4").Parts[0]; p.Status != loom.ToolError || p.Error != importer.NoResult {
		t.Errorf("unanswered call %+v", p)
	}

	fk := importertest.Session(t, res, "tree-session@a2")
	if fk.Kind != loom.KindFork || fk.ParentSourceID != "tree-session" || fk.ForkTurn != 0 || len(fk.Messages) != 3 || fk.Messages[2].Text() != "First attempt." {
		t.Errorf("fork %+v", fk)
	}
	if fk.Messages[1].Parts[2].Status != loom.ToolCompleted {
		t.Errorf("the fork's tool call: %+v", fk.Messages[1].Parts[2])
	}
	// x1's parent is not read: the line before it that is not JSON
	// could be it, so it hangs on the last entry read (s1), a branch
	// of its own beside u2's.
	orphan := importertest.Session(t, res, "tree-session@x1")
	if orphan.Kind != loom.KindFork || orphan.Messages[len(orphan.Messages)-1].Text() != "orphan" {
		t.Errorf("orphan %+v", orphan)
	}
	if len(res.Sessions) != 3 {
		t.Errorf("%d sessions", len(res.Sessions))
	}
	if want := map[string]int{"model_change": 1, "label": 1, "session_info": 1, "unknown:future_thing": 1}; !maps.Equal(res.Skipped, want) {
		t.Errorf("skipped %v, want %v", res.Skipped, want)
	}
	var lines []int
	for _, p := range res.Problems {
		lines = append(lines, p.Line)
	}
	if !slices.Equal(lines, []int{7}) {
		t.Errorf("problems %v", res.Problems)
	}
}

// A version 1 file has no ids: its entries are one chain.
func TestReadV1(t *testing.T) {
	res := readFile(t, "testdata/v1.jsonl")
	s := importertest.Session(t, res, "old-one")
	var roles []string
	for _, m := range s.Messages {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"user", "assistant", "system"}) || len(res.Sessions) != 1 {
		t.Errorf("roles %v, %d sessions", roles, len(res.Sessions))
	}
}

// A file that is not pi's is an error; an empty one holds nothing.
func TestReadNotPi(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "x.jsonl")
	os.WriteFile(other, []byte(`{"type":"user","message":"hi"}`+"\n"), 0o644)
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{other}}); err == nil {
		t.Error("a file without a session header was read")
	}
	empty := filepath.Join(dir, "e.jsonl")
	os.WriteFile(empty, nil, 0o644)
	if res, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{empty}}); err != nil || len(res.Sessions) != 0 {
		t.Errorf("empty file: %v, %v", res, err)
	}
}

func TestRoots(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want []string
	}{
		{nil, []string{"/h/.pi/agent/sessions"}},
		{map[string]string{EnvAgentDir: "~/pi"}, []string{"/h/pi/sessions"}},
		{map[string]string{EnvSessionDir: "/s", EnvAgentDir: "/a"}, []string{"/s", "/a/sessions"}},
		{map[string]string{EnvSessionDir: "/h/.pi/agent/sessions"}, []string{"/h/.pi/agent/sessions"}},
	} {
		if got := (Format{}).Roots(env(c.env), "/h"); !slices.Equal(got, c.want) {
			t.Errorf("Roots(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

// Bundles: every .jsonl below the root, one each; an import of them
// twice adds nothing the second time.
func TestBundlesAndImport(t *testing.T) {
	root := t.TempDir()
	for i, f := range []string{"real-0.73.1-continued.jsonl", "real-0.73.1-tool.jsonl", "tree.jsonl"} {
		b := importertest.ReadBytes(t, filepath.Join("testdata", f))
		os.MkdirAll(filepath.Join(root, "--p"+string(rune('a'+i))+"--"), 0o755)
		os.WriteFile(filepath.Join(root, "--p"+string(rune('a'+i))+"--", f), b, 0o644)
	}
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("x"), 0o644)
	bs, err := Format{}.Bundles(context.Background(), root)
	if err != nil || len(bs) != 3 {
		t.Fatalf("bundles %v, %v", bs, err)
	}
	st := importertest.Store(t)
	first := importertest.Import(t, st, Format{}, root)
	if first.SessionsNew != 5 || first.MessagesAdded == 0 {
		t.Errorf("first import %+v", first)
	}
	// A new time makes the next import read the file again.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(root, "--pc--", "tree.jsonl"), later, later)
	again := importertest.Import(t, st, Format{}, root)
	if again.MessagesAdded != 0 || again.SessionsNew != 0 {
		b, _ := json.Marshal(again)
		t.Errorf("second import %s", b)
	}
}

// A file imported while pi waits for a tool (the call written, its
// result not yet) grows in place: the next import completes the call
// and adds the rest, with no fork and nothing twice.
func TestImportGrowsInPlace(t *testing.T) {
	data := importertest.ReadBytes(t, "testdata/real-0.73.1-tool.jsonl")
	lines := strings.SplitAfter(strings.TrimSpace(string(data)), "\n")
	file := filepath.Join(t.TempDir(), "--w--", "s.jsonl")
	os.MkdirAll(filepath.Dir(file), 0o755)
	// Up to the reply that calls read.
	importertest.WriteFile(t, file, []byte(strings.Join(lines[:5], "")), 0o644)
	st := importertest.Store(t)
	first := importertest.Import(t, st, Format{}, file)
	if first.SessionsNew != 1 || first.MessagesAdded != 2 {
		t.Fatalf("first import %+v", first)
	}
	importertest.WriteFile(t, file, data, 0o644)
	later := time.Now().Add(time.Hour)
	os.Chtimes(file, later, later)
	second := importertest.Import(t, st, Format{}, file)
	if second.SessionsNew != 0 || second.SessionsGrown != 1 || second.MessagesAdded != 1 {
		t.Errorf("second import %+v", second)
	}
	list, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Surface: Tool})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %v, %v", list, err)
	}
	msgs, err := st.Messages(context.Background(), list[0].ID, loom.MessageQuery{})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	if p := msgs[1].Parts[1]; p.Status != loom.ToolCompleted || string(p.Output) != `"alpha\nbeta\n"` {
		t.Errorf("the call after its result came: %+v", p)
	}
}

// Branches that add no message (a label on every entry, each a leaf of
// its own) make no fork, and cost a look at their own entries only, not
// a walk of the whole chain each.
func TestBranchesWithoutMessages(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"many","timestamp":"2026-01-02T10:00:00Z","cwd":"/w"}` + "\n")
	const n = 20000
	prev := "null"
	for i := range n {
		id := fmt.Sprintf(`"m%d"`, i)
		fmt.Fprintf(&b, `{"type":"message","id":%s,"parentId":%s,"timestamp":"2026-01-02T10:00:01Z","message":{"role":"user","content":"p%d"}}`+"\n", id, prev, i)
		fmt.Fprintf(&b, `{"type":"label","id":"l%d","parentId":%s,"timestamp":"2026-01-02T10:00:01Z","targetId":%s,"label":"x"}`+"\n", i, id, id)
		prev = id
	}
	res, err := read(context.Background(), "many.jsonl", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 1 || len(res.Sessions[0].Messages) != n || res.Skipped["label"] != n || len(res.Problems) != 0 {
		t.Errorf("%d sessions, skipped %v, problems %v", len(res.Sessions), res.Skipped, res.Problems)
	}
}
