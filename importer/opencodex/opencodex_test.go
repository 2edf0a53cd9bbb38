package opencodex

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is what Open Codex 0.1.31 (npm's open-codex, `open-codex
// --provider ollama` on a terminal against a fake model on the Chat
// Completions API, OLLAMA_BASE_URL naming it) wrote in
// ~/.codex/sessions: a run that read notes.txt with its shell tool and
// then took a second prompt, saved as two files (first, the read;
// second, the whole conversation again with the greeting), and a run
// of one greeting (greeting).
var (
	real     = filepath.Join("testdata", "real")
	first    = "770d3dc5-45d5-455c-84dd-33da8b945211"
	second   = "0a86b004-88c3-40c9-8bda-06b4e856fc21"
	greeting = "502b5e74-f873-4ed6-a93a-7ee4763b4b11"
	file     = filepath.Join(real, "rollout-2026-11-27-"+first+".json")
)

// The two files of one conversation are one session, under the id of
// the first, each message dated by the file that first held it; the
// read is a completed call; the other run is a session of its own; no
// usage, as none is recorded.
func TestRead(t *testing.T) {
	bs, err := Format{}.Bundles(context.Background(), real)
	if err != nil || len(bs) != 1 || len(bs[0].Files) != 3 {
		t.Fatalf("bundles %v, %v; want the directory's 3 files as one", bs, err)
	}
	// Two sessions: two files of one conversation, one of another.
	res := importertest.ReadSessions(t, Format{}, real, 2)
	s := importertest.Session(t, res, first)
	importertest.CheckTexts(t, s, loom.RoleUser, "What is in notes.txt?", "Say hello in one line.")
	importertest.CheckTexts(t, s, loom.RoleAssistant, "It says alpha and beta.", "Hello there.")
	tl := importertest.TallyOf(s)
	if tl.Tools[loom.ToolCompleted] != 1 {
		t.Errorf("%+v, want one completed call", tl)
	}
	for _, p := range importertest.Parts(s, loom.PartTool) {
		if p.Name != "shell" || !strings.Contains(string(p.Output), `alpha\\nbeta`) {
			t.Errorf("call %s output %s", p.Name, p.Output)
		}
	}
	at := func(s string) time.Time { tm, _ := time.Parse(time.RFC3339Nano, s); return tm }
	saved1, saved2 := at("2026-11-27T17:38:04.050Z"), at("2026-11-27T17:38:15.739Z")
	if n := len(s.Messages); n < 2 || !s.Messages[0].CreatedAt.Equal(saved1) || !s.Messages[n-1].CreatedAt.Equal(saved2) || !s.UpdatedAt.Equal(saved2) {
		t.Errorf("%d messages, first at %s, last at %s, updated %s; want the files' times", n, s.Messages[0].CreatedAt, s.Messages[n-1].CreatedAt, s.UpdatedAt)
	}
	if s.Path != filepath.Join(real, "rollout-2026-11-27-"+second+".json") {
		t.Errorf("path %s, want the conversation's last file", s.Path)
	}
	importertest.CheckNoUsage(t, s)
	g := importertest.Session(t, res, greeting)
	if got := importertest.Roles(g); got != "user assistant" {
		t.Errorf("greeting: roles %s", got)
	}
}

// write writes a document of items as Open Codex does.
func write(t *testing.T, path, id, at string, items []any) {
	t.Helper()
	data, err := json.MarshalIndent(map[string]any{"session": map[string]any{"timestamp": at, "id": id, "instructions": ""}, "items": items}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	importertest.WriteFile(t, path, data, 0o600)
}

// items is the items of path.
func items(t *testing.T, path string) []any {
	t.Helper()
	data := importertest.ReadBytes(t, path)
	var doc struct{ Items []any }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Items
}

// Open Codex saves the conversation again, whole, in a new file after
// each pause: the session grows by the new messages only, under --watch.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 2, 7)
	root := importertest.CopyDir(t, real)
	importertest.Follows(t, Format{}, root, func() {
		more := append(items(t, filepath.Join(root, "rollout-2026-11-27-"+greeting+".json")),
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Thanks"}}},
			map[string]any{"role": "assistant", "content": "You are welcome."})
		write(t, filepath.Join(root, "rollout-2026-11-27-ffffffff-0000-4000-8000-000000000001.json"),
			"ffffffff-0000-4000-8000-000000000001", "2026-11-27T17:40:00.000Z", more)
	}, 2)
}

// A file whose items are not the start of any conversation's (a
// /clear, another run) is a conversation of its own, whatever the order
// of the names; of two that start the same, a file joins the one whose
// last items it goes on from.
func TestConversationsApart(t *testing.T) {
	dir := t.TempDir()
	base := items(t, file)
	user := func(s string) any {
		return map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": s}}}
	}
	reply := func(s string) any { return map[string]any{"role": "assistant", "content": s} }
	write(t, filepath.Join(dir, "rollout-z.json"), "a", "2026-11-27T10:00:00Z", base)
	write(t, filepath.Join(dir, "rollout-y.json"), "b", "2026-11-27T10:01:00Z", append(slices.Clone(base), user("left"), reply("L")))
	write(t, filepath.Join(dir, "rollout-x.json"), "c", "2026-11-27T10:02:00Z", append(slices.Clone(base), user("right"), reply("R")))
	write(t, filepath.Join(dir, "rollout-w.json"), "d", "2026-11-27T10:03:00Z", append(slices.Clone(base), user("left"), reply("L"), user("more"), reply("M")))
	write(t, filepath.Join(dir, "rollout-v.json"), "e", "2026-11-27T10:04:00Z", []any{user("cleared"), reply("C")})
	res := importertest.ReadAllValid(t, Format{}, dir)
	got := map[string][]string{}
	for _, s := range res.Sessions {
		got[s.SourceID] = importertest.Texts(s, loom.RoleAssistant)
	}
	want := map[string][]string{
		"a": {"It says alpha and beta.", "L", "M"},
		"c": {"It says alpha and beta.", "R"},
		"e": {"C"},
	}
	if len(got) != len(want) {
		t.Fatalf("sessions %q, want %q", got, want)
	}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("session %s: replies %q, want %q", id, got[id], w)
		}
	}
}

// A file that is not JSON (cut off as it was written) is one problem
// naming it, and the other files are read.
func TestReadCut(t *testing.T) {
	root := importertest.CopyDir(t, real)
	path := filepath.Join(root, "rollout-2026-11-27-"+greeting+".json")
	data := importertest.ReadBytes(t, path)
	importertest.WriteFile(t, path, data[:len(data)/2], 0o600)
	bs, err := Format{}.Bundles(context.Background(), root)
	if err != nil || len(bs) != 1 {
		t.Fatalf("bundles %v, %v", bs, err)
	}
	res, err := Format{}.Read(context.Background(), importer.Bundle{Files: bs[0].Files})
	if err != nil || len(res.Sessions) != 1 || len(res.Problems) != 1 || res.Problems[0].File != path {
		t.Errorf("sessions %d, problems %v, %v", len(res.Sessions), res.Problems, err)
	}
}

// A document of the Responses API's items (each with a type, as the
// first Codex CLI saved them in the same place) is not Open Codex's: no
// session, no problem, counted as skipped.
func TestResponsesItemsAreNotOpenCodex(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "rollout-2025-04-20-x.json"), "x", "2025-04-20T10:00:00Z", []any{
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "hi"}}},
		map[string]any{"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
	})
	res := importertest.ReadAll(t, Format{}, dir)
	if len(res.Sessions) != 0 || len(res.Problems) != 0 || res.Skipped["responses-rollout"] != 1 {
		t.Errorf("sessions %d, problems %v, skipped %v", len(res.Sessions), res.Problems, res.Skipped)
	}
}

// Bytes that are not UTF-8 in a text of one file (the first file of
// the two-file conversation, whose items the second repeats, or a cut
// letter of the second) are one problem line naming that file, and the
// conversation is still one session of its four messages: before, the
// damaged copy no longer matched its twin byte for byte, so the
// conversation split at it in silence.
func TestNotUTF8InOneFile(t *testing.T) {
	for _, tc := range []struct {
		name, id, in, bad string
	}{
		{"bytes inserted in the first", first, "notes.txt", "not\xff\xfees.txt"},
		{"a letter cut in the second", second, "Hello there.", "Hello ther\xc3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := importertest.CopyDir(t, real)
			path := filepath.Join(root, "rollout-2026-11-27-"+tc.id+".json")
			data := importertest.ReadBytes(t, path)
			if !bytes.Contains(data, []byte(tc.in)) {
				t.Fatalf("%s holds no %q", path, tc.in)
			}
			importertest.WriteFile(t, path, bytes.Replace(data, []byte(tc.in), []byte(tc.bad), 1), 0o600)
			bs, err := Format{}.Bundles(context.Background(), root)
			if err != nil || len(bs) != 1 {
				t.Fatalf("bundles %v, %v", bs, err)
			}
			res, err := Format{}.Read(context.Background(), bs[0])
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) != 1 || res.Problems[0].File != path || !strings.Contains(res.Problems[0].String(), "UTF-8") {
				t.Errorf("problems %v, want one naming %s", res.Problems, path)
			}
			if len(res.Sessions) != 2 {
				t.Fatalf("%d sessions, want 2 (the conversation kept whole, and the greeting)", len(res.Sessions))
			}
			s := importertest.Session(t, res, first)
			importertest.CheckTexts(t, s, loom.RoleUser, "What is in notes.txt?", "Say hello in one line.")
		})
	}
}
