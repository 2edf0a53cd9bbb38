package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const sample = "../../testdata/agent-sessions/gemini/vibecodingtracker-gemini.jsonl"

func read(t *testing.T, files ...string) *importer.Result {
	t.Helper()
	res, err := Format{}.Read(context.Background(), importer.Bundle{Files: files})
	if err != nil {
		t.Fatalf("Read(%v): %v", files, err)
	}
	check(t, res)
	return res
}

// check asserts what every result must satisfy, whatever its input.
func check(t testing.TB, res *importer.Result) {
	t.Helper()
	importertest.CheckTree(t, res)
	for _, s := range res.Sessions {
		if s.Kind == loom.KindMain && s.ParentSourceID != "" {
			t.Errorf("%s: main session with a parent", s.SourceID)
		}
	}
}

func tool(t *testing.T, s *importer.Session, callID string) loom.Part {
	t.Helper()
	for _, p := range importertest.Parts(s, loom.PartTool) {
		if p.CallID == callID {
			return p
		}
	}
	t.Fatalf("%s: no tool call %s", s.SourceID, callID)
	return loom.Part{}
}

// counts is what a session holds, of which these tests check messages by
// role, tool parts by status and agent parts.
type counts = importertest.Tally

func wantCounts(t *testing.T, s *importer.Session, want counts) {
	t.Helper()
	if want.Tools == nil {
		want.Tools = map[string]int{}
	}
	got := importertest.TallyOf(s)
	got.Reasoning, got.Files = 0, 0 // not counted here
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: counts = %+v, want %+v", s.SourceID, got, want)
	}
}

func ids(s *importer.Session) []string {
	var out []string
	for _, m := range s.Messages {
		out = append(out, m.ID)
	}
	return out
}

func output(p loom.Part) string {
	var s string
	_ = json.Unmarshal(p.Output, &s)
	return s
}

// The sample: 28 lines; 16 message lines give 11 messages (5 replies
// are written twice as their tool calls complete), 11 $set lines move
// lastUpdated. Counts checked with jq:
//
//	jq -s 'map(select(.id)) | group_by(.id) | length'           # 11
//	jq -s 'map(select(.type=="gemini")) | group_by(.id) |
//	       map(last | .toolCalls // [] | length) | add'         # 12
func TestSample(t *testing.T) {
	res := read(t, sample)
	if len(res.Sessions) != 1 || len(res.Skipped) != 0 || len(res.Problems) != 0 {
		t.Fatalf("sessions %d, skipped %v, problems %v", len(res.Sessions), res.Skipped, res.Problems)
	}
	s := importertest.Session(t, res, "0ab84937-9fe7-4284-986a-33c832af0b6a")
	// info "Empty GEMINI.md created…", the expansion of /init, the
	// continuation sent after update_topic and "Request cancelled." are
	// system messages; /init and one prompt are the user's.
	wantCounts(t, s, counts{
		Roles: map[string]int{loom.RoleUser: 2, loom.RoleAssistant: 6, loom.RoleSystem: 4},
		Tools: map[string]int{loom.ToolCompleted: 12},
	})
	wantIDs := []string{
		"0cf1a565-3230-4426-bdfc-d4d7af19f867",
		"8828dd6a-d778-464f-8160-eb2e1604a122",
		"8828dd6a-d778-464f-8160-eb2e1604a122/content",
		"52e62e67-5d6b-4a2c-b12d-11b87fe3e4a4",
		"a4173396-3649-48f8-8fa8-e2624684806e",
		"cda8a342-ea1f-4815-ac7c-4dad891733a6",
		"edf94f05-ab0f-46aa-8811-d3db8103da28",
		"1b8df650-1638-435e-b736-1f1f42357da9",
		"0752be32-e23d-4786-bc5f-e06ee1d8a56c",
		"231038fa-bbfb-4b43-9a30-b8b7fcf54895",
		"42a121a5-b72a-43e2-9e9d-640b17ea8978",
		"9a505a5d-d89f-4df6-b74b-c8fc0e07711b",
	}
	if got := ids(s); !slices.Equal(got, wantIDs) {
		t.Errorf("ids = %v\nwant %v", got, wantIDs)
	}
	if s.Kind != loom.KindMain || s.Title != "" || s.Cwd != "" || s.Version != "" || s.GitBranch != "" {
		t.Errorf("kind %q title %q cwd %q version %q branch %q", s.Kind, s.Title, s.Cwd, s.Version, s.GitBranch)
	}
	if s.Model != "gemini-3.1-pro-preview" || s.Provider != "google" {
		t.Errorf("model %q provider %q", s.Model, s.Provider)
	}
	if !s.CreatedAt.Equal(importertest.Time(t, "2026-04-23T12:52:52.759Z")) || !s.UpdatedAt.Equal(importertest.Time(t, "2026-04-23T12:58:35.591Z")) {
		t.Errorf("created %v updated %v", s.CreatedAt, s.UpdatedAt)
	}
	if s.Path != sample {
		t.Errorf("path %q", s.Path)
	}

	init := importertest.Message(t, s, "8828dd6a-d778-464f-8160-eb2e1604a122")
	if init.Role != loom.RoleUser || init.Text() != "/init" || !init.CreatedAt.Equal(importertest.Time(t, "2026-04-23T12:53:05.283Z")) {
		t.Errorf("/init: %s %q %v", init.Role, init.Text(), init.CreatedAt)
	}
	expansion := importertest.Message(t, s, "8828dd6a-d778-464f-8160-eb2e1604a122/content")
	if expansion.Role != loom.RoleSystem || !strings.HasPrefix(expansion.Text(), "\nYou are an AI agent that brings the power of Gemini directly into the terminal.") {
		t.Errorf("expansion: %s %.80q", expansion.Role, expansion.Text())
	}
	cont := importertest.Message(t, s, "1b8df650-1638-435e-b736-1f1f42357da9")
	if cont.Role != loom.RoleSystem || cont.Text() != "System: Please continue." {
		t.Errorf("continuation: %s %q", cont.Role, cont.Text())
	}
	prompt := importertest.Message(t, s, "231038fa-bbfb-4b43-9a30-b8b7fcf54895")
	if prompt.Role != loom.RoleUser || prompt.Text() != "幫我做一個小修改 請幫我將上面確保執行時要透過 uv run 來執行 避免環境有問題" {
		t.Errorf("prompt: %s %q", prompt.Role, prompt.Text())
	}
	if m := importertest.Message(t, s, "9a505a5d-d89f-4df6-b74b-c8fc0e07711b"); m.Role != loom.RoleSystem || m.Text() != "Request cancelled." {
		t.Errorf("cancelled: %s %q", m.Role, m.Text())
	}

	// The second copy of the first reply, with its five tool calls, wins.
	first := importertest.Message(t, s, "52e62e67-5d6b-4a2c-b12d-11b87fe3e4a4")
	if len(first.Parts) != 6 || first.Parts[0].Type != loom.PartReasoning ||
		!strings.HasPrefix(first.Parts[0].Text, "**Initiating File Generation**\n\nI'm now focused on generating the `GEMINI.md` file") {
		t.Errorf("first reply parts: %+v", first.Parts)
	}
	if first.Model != "gemini-3-flash-preview" || first.Provider != "google" {
		t.Errorf("first reply model %q provider %q", first.Model, first.Provider)
	}
	// tokens {input 13906, output 185, cached 0, thoughts 306}
	if want := (loom.Usage{InputTokens: 13906, OutputTokens: 185 + 306, ReasoningTokens: 306, APICalls: 1}); first.Usage != want {
		t.Errorf("first usage %+v, want %+v", first.Usage, want)
	}
	// tokens {input 29082, output 89, cached 8156, thoughts 642}
	second := importertest.Message(t, s, "a4173396-3649-48f8-8fa8-e2624684806e")
	if want := (loom.Usage{InputTokens: 29082 - 8156, OutputTokens: 89 + 642, ReasoningTokens: 642, CacheReadTokens: 8156, APICalls: 1}); second.Usage != want {
		t.Errorf("second usage %+v, want %+v", second.Usage, want)
	}
	if c := first.CompletedAt; c == nil || !c.Equal(importertest.Time(t, "2026-04-23T12:53:11.257Z")) {
		t.Errorf("first completed %v", c)
	}

	readme := tool(t, s, "aao1q07o")
	if readme.Name != "read_file" || string(readme.Input) != `{"file_path":"README.md"}` || readme.Title != "README.md" ||
		!strings.HasPrefix(output(readme), `<div align="center" markdown="1">`) {
		t.Errorf("read_file: %s %s %q %.40q", readme.Name, readme.Input, readme.Title, output(readme))
	}
	if readme.StartedAt == nil || !readme.StartedAt.Equal(importertest.Time(t, "2026-04-23T12:53:11.257Z")) ||
		readme.EndedAt == nil || !readme.EndedAt.Equal(importertest.Time(t, "2026-04-23T12:53:11.357Z")) {
		t.Errorf("read_file times %v %v", readme.StartedAt, readme.EndedAt)
	}
	write := tool(t, s, "4o2js0r9")
	var meta struct {
		DisplayName   string `json:"displayName"`
		ResultDisplay struct {
			FileName string `json:"fileName"`
		} `json:"resultDisplay"`
	}
	if err := json.Unmarshal(write.Metadata, &meta); err != nil || meta.DisplayName != "WriteFile" || meta.ResultDisplay.FileName != "GEMINI.md" {
		t.Errorf("write_file metadata %s: %v", write.Metadata, err)
	}
	if got := output(tool(t, s, "jyi4d5mc")); got != "Strategic Intent: 已成功產生 GEMINI.md 檔案並完成專案分析。" {
		t.Errorf("update_topic output %q", got)
	}
}

func TestOneDocument(t *testing.T) {
	res := read(t, filepath.Join("testdata", "tmp", "604d4331967fb6b76ad7112ac89983c76dd7208b059b54a7df4fc4ab34c4ddf9", "chats", "session-2025-11-20T10-00-22222222.json"))
	if len(res.Sessions) != 1 || len(res.Skipped) != 0 || len(res.Problems) != 0 {
		t.Fatalf("sessions %d skipped %v problems %v", len(res.Sessions), res.Skipped, res.Problems)
	}
	s := res.Sessions[0]
	if s.SourceID != "22222222-0000-4000-8000-000000000022" || s.Cwd != "" || s.Title != "" {
		t.Errorf("id %q cwd %q title %q", s.SourceID, s.Cwd, s.Title)
	}
	if got, want := ids(s), []string{"l1", "l2", "l3", "l4", "l5"}; !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	wantCounts(t, s, counts{
		Roles: map[string]int{loom.RoleUser: 2, loom.RoleAssistant: 1, loom.RoleSystem: 2},
		Tools: map[string]int{loom.ToolError: 1},
	})
	if m := importertest.Message(t, s, "l1"); m.Text() != "list the files" || !m.CreatedAt.Equal(importertest.Time(t, "2025-11-20T10:00:01Z")) {
		t.Errorf("l1 %q %v", m.Text(), m.CreatedAt)
	}
	l2 := importertest.Message(t, s, "l2")
	if l2.Parts[0].Type != loom.PartReasoning || l2.Parts[0].Text != "**Listing**" || l2.Parts[1].Text != "I will list them." {
		t.Errorf("l2 parts %+v", l2.Parts)
	}
	p := tool(t, s, "list_directory-1")
	if p.Error != "[Operation Cancelled] Reason: User cancelled" || p.Title != "Lists files" || !p.EndedAt.Equal(importertest.Time(t, "2025-11-20T10:00:09Z")) {
		t.Errorf("cancelled call %+v", p)
	}
	if m := importertest.Message(t, s, "l4"); m.Role != loom.RoleSystem || m.Text() != "[API Error: quota exceeded]" {
		t.Errorf("l4 %s %q", m.Role, m.Text())
	}
	if !s.UpdatedAt.Equal(importertest.Time(t, "2025-11-20T10:05:00Z")) {
		t.Errorf("updated %v", s.UpdatedAt)
	}
}

// cancelAfter is a context that reports itself cancelled from its n-th
// look on (never when n is 0), and counts the looks: a cancellation at a
// chosen point of a read.
type cancelAfter struct {
	context.Context
	n, looks int
}

func (c *cancelAfter) Err() error {
	c.looks++
	if c.n > 0 && c.looks >= c.n {
		return context.Canceled
	}
	return nil
}

// A read of a one-document recording cancelled at any point, between two
// messages of its list too, is an error, never a session cut short.
func TestCancelledReadIsAnError(t *testing.T) {
	msgs := make([]any, 3000)
	for i := range msgs {
		msgs[i] = map[string]any{"id": "m" + strconv.Itoa(i), "timestamp": "2026-01-01T00:00:00.000Z", "type": "user", "content": "prompt " + strconv.Itoa(i)}
	}
	file := filepath.Join(t.TempDir(), "session-2026-01-01T00-00-cancel00.json")
	writeJSON(t, file, map[string]any{"sessionId": "cancel", "projectHash": "h", "messages": msgs})
	b := importer.Bundle{Files: []string{file}}

	whole := &cancelAfter{Context: context.Background()}
	res, err := Format{}.Read(whole, b)
	if err != nil {
		t.Fatalf("read whole: %v", err)
	}
	if len(res.Sessions) != 1 {
		t.Fatalf("read whole: %d sessions", len(res.Sessions))
	}
	want := len(res.Sessions[0].Messages)
	if want != len(msgs) {
		t.Fatalf("read whole: %d messages, want %d", want, len(msgs))
	}
	for n := 1; n <= whole.looks; n++ {
		res, err := Format{}.Read(&cancelAfter{Context: context.Background(), n: n}, b)
		if !errors.Is(err, context.Canceled) {
			got := 0
			if res != nil && len(res.Sessions) > 0 {
				got = len(res.Sessions[0].Messages)
			}
			t.Errorf("cancelled at look %d of %d: error %v, %d of %d messages", n, whole.looks, err, got, want)
		}
	}
}

// A JSONL recording named .json (as a file renamed by hand) is read as
// lines.
func TestJSONLNamedJSON(t *testing.T) {
	raw := importertest.ReadBytes(t, filepath.Join("testdata", "snapshot.jsonl"))
	file := filepath.Join(t.TempDir(), "session-x.json")
	importertest.WriteFile(t, file, raw, 0o600)
	a, b := read(t, file), read(t, filepath.Join("testdata", "snapshot.jsonl"))
	a.Sessions[0].Path, b.Sessions[0].Path = "", ""
	if !reflect.DeepEqual(a, b) {
		t.Error("the same lines read differently under .json")
	}
}

// The migrated copy of a .json session and a sub-agent whose parent is
// gone.
func TestMigratedAndOrphan(t *testing.T) {
	chats := filepath.Join("testdata", "tmp", "example", "chats")
	res := read(t, filepath.Join(chats, "session-2026-09-01T08-00-11111111.jsonl"))
	s := importertest.Session(t, res, "11111111-0000-4000-8000-000000000011")
	if got, want := ids(s), []string{"r1", "r2", "r3"}; !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	if s.Cwd != "/Users/dev/code/example" || !s.UpdatedAt.Equal(importertest.Time(t, "2026-09-06T10:00:00Z")) {
		t.Errorf("cwd %q updated %v", s.Cwd, s.UpdatedAt)
	}

	res = read(t, filepath.Join(chats, "99999999-0000-4000-8000-000000000009", "c3d4e5f6-0000-4000-8000-000000000010.jsonl"))
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	o := res.Sessions[0]
	if o.SourceID != "99999999-0000-4000-8000-000000000009/c3d4e5f6-0000-4000-8000-000000000010" ||
		o.Kind != loom.KindSubagent || o.ParentSourceID != "99999999-0000-4000-8000-000000000009" || o.Cwd != "/Users/dev/code/example" {
		t.Errorf("orphan %q %q %q %q", o.SourceID, o.Kind, o.ParentSourceID, o.Cwd)
	}
	wantCounts(t, o, counts{Roles: map[string]int{loom.RoleUser: 1, loom.RoleAssistant: 1}})
}

func TestMalformed(t *testing.T) {
	file := filepath.Join("testdata", "malformed.jsonl")
	res := read(t, file)
	var lines []int
	for _, p := range res.Problems {
		if p.File != file {
			t.Errorf("problem in %s", p.File)
		}
		lines = append(lines, p.Line)
	}
	if want := []int{2, 4, 7, 9, 11, 13}; !slices.Equal(lines, want) {
		t.Errorf("problem lines %v, want %v (%v)", lines, want, res.Problems)
	}
	wantSkipped := map[string]int{
		"unknown:compression":     1,
		"unknown:record":          1,
		"part:executableCode":     1,
		"orphan:functionResponse": 1,
		"empty:info":              1,
	}
	if !reflect.DeepEqual(res.Skipped, wantSkipped) {
		t.Errorf("skipped %v, want %v", res.Skipped, wantSkipped)
	}
	s := importertest.Session(t, res, "bad-1")
	if got, want := ids(s), []string{"m1", "m4"}; !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	// A timestamp that does not parse takes the time of the message
	// before.
	if m := importertest.Message(t, s, "m4"); m.Text() != "ok" || !m.CreatedAt.Equal(importertest.Time(t, "2026-01-01T00:00:01Z")) {
		t.Errorf("m4 %q %v", m.Text(), m.CreatedAt)
	}
}

func TestRereadIsStable(t *testing.T) {
	chats := filepath.Join("testdata", "tmp", "example", "chats")
	files := []string{
		filepath.Join(chats, "session-2026-09-05T09-00-0a1b2c3d.jsonl"),
		filepath.Join(chats, "0a1b2c3d-0000-4000-8000-000000000001", "b2c3d4e5-0000-4000-8000-000000000002.jsonl"),
	}
	if a, b := read(t, files...), read(t, files...); !reflect.DeepEqual(a, b) {
		t.Error("two reads differ")
	}
	if a, b := read(t, sample), read(t, sample); !reflect.DeepEqual(a, b) {
		t.Error("two reads of the sample differ")
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"garbage.jsonl": "this is not json\nnor this\n",
		"array.json":    `[1, 2, 3]`,
		"broken.json":   "{\n  \"sessionId\": \"x\",\n",
		"object.json":   `{"hello": "world"}`,
	} {
		file := filepath.Join(dir, name)
		writeOld(t, file, body)
		if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{file}}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{filepath.Join(dir, "missing.jsonl")}}); err == nil {
		t.Error("missing file: no error")
	}
	empty := filepath.Join(dir, "session-empty.jsonl")
	importertest.WriteFile(t, empty, nil, 0o600)
	if res := read(t, empty); len(res.Sessions) != 0 {
		t.Errorf("empty file: %d sessions", len(res.Sessions))
	}
	// A header and nothing yet: no session until a message comes.
	header := filepath.Join(dir, "session-new.jsonl")
	importertest.WriteFile(t, header, []byte(`{"sessionId":"new","projectHash":"h","startTime":"2026-01-01T00:00:00Z"}`+"\n"), 0o600)
	if res := read(t, header); len(res.Sessions) != 0 || res.Skipped["empty-session"] != 1 {
		t.Errorf("header only: %d sessions, skipped %v", len(res.Sessions), res.Skipped)
	}
}
