package chatgpt

import (
	"archive/zip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const sample = "testdata/conversations.json"

func readFile(t *testing.T, path string) *importer.Result {
	t.Helper()
	return importertest.ReadFile(t, Format, path)
}

func TestReadExport(t *testing.T) {
	res := readFile(t, sample)
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Reason, "conversation 4") {
		t.Errorf("problems %v", res.Problems)
	}
	want := map[string]int{"hidden:system": 3, "hidden:user": 1, "reasoning_recap": 1, "empty-conversation": 1}
	for k, v := range want {
		if res.Skipped[k] != v {
			t.Errorf("skipped %v, want %v", res.Skipped, want)
			break
		}
	}
	main := importertest.Session(t, res, "6650a1b2-0000-4000-8000-000000000001")
	if got := importertest.Roles(main); got != "user assistant user assistant" {
		t.Fatalf("main path: %s", got)
	}
	if main.Title != "Regex that fails" || main.Model != "o3" || !main.CreatedAt.Equal(time.Unix(1717000000, 500000000)) {
		t.Errorf("session %q %q %v", main.Title, main.Model, main.CreatedAt)
	}
	u := main.Messages[0]
	if u.ID != "u1" || u.Text() != "Why does my regex fail on 'aaa'?" || len(u.Parts) != 3 || u.Parts[1].URL != "file-service://file-abc" || u.Parts[2].Filename != "re.py" {
		t.Errorf("prompt %+v", u)
	}
	a := main.Messages[1]
	c := importertest.TallyOf(main)
	if a.Model != "o3" || c.Reasoning != 1 || c.Tools[loom.ToolCompleted] != 1 || a.Text() != "The pattern matches: the bug is elsewhere." {
		t.Errorf("reply %+v, tally %+v", a, c)
	}
	for _, p := range a.Parts {
		if p.Type == loom.PartTool {
			var in map[string]string
			json.Unmarshal(p.Input, &in)
			if p.Name != "python" || !strings.Contains(in["code"], "re.match") || !strings.Contains(string(p.Output), "span=(0, 3)") {
				t.Errorf("python call %+v", p)
			}
		}
	}
	if !a.CreatedAt.Equal(time.Unix(1717000011, 0)) || !a.CompletedAt.Equal(time.Unix(1717000015, 0)) {
		t.Errorf("reply times %v %v", a.CreatedAt, a.CompletedAt)
	}

	edit := importertest.Session(t, res, main.SourceID+"@u1old")
	if edit.Kind != loom.KindFork || edit.ParentSourceID != main.SourceID || edit.ForkTurn != 0 || importertest.Roles(edit) != "user assistant" {
		t.Errorf("edited prompt's branch: %+v %s", edit, importertest.Roles(edit))
	}
	regen := importertest.Session(t, res, main.SourceID+"@a4old")
	if regen.ForkTurn != 1 || importertest.Roles(regen) != "user assistant user assistant" || regen.Messages[3].Text() != "regexp.MustCompile(`a+`) (first try)" {
		t.Errorf("regenerated reply's branch: turn %d, %s", regen.ForkTurn, importertest.Roles(regen))
	}

	old := importertest.Session(t, res, "old-conv-2")
	if got := importertest.Roles(old); got != "user assistant" {
		t.Fatalf("older export: %s", got)
	}
	c = importertest.TallyOf(old)
	if c.Tools[loom.ToolCompleted] != 1 || c.Files != 1 || old.Messages[1].Text() != "Here is your cat." || old.Messages[1].Provider != Provider {
		t.Errorf("DALL-E turn: %+v", c)
	}
	if len(res.Sessions) != 4 {
		t.Errorf("%d sessions", len(res.Sessions))
	}
}

func TestNotChatGPT(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"claude.json": `[{"uuid":"x","name":"n","chat_messages":[]}]`,
		"obj.json":    `{"mapping":{}}`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		if _, err := Format.Read(context.Background(), importer.Bundle{Files: []string{p}}); err == nil {
			t.Errorf("%s was read", name)
		}
	}
	p := filepath.Join(dir, "cut.json")
	b, _ := os.ReadFile(sample)
	os.WriteFile(p, b[:len(b)*3/4], 0o644)
	res := readFile(t, p)
	if len(res.Sessions) < 1 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Reason, "ends early") {
		t.Errorf("cut export: %d sessions, %v", len(res.Sessions), res.Problems)
	}
}

func TestBundles(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"export/conversations.json", "export/chat.html", "export/user.json", "big/conversations-001.json"} {
		p = filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("[]"), 0o644)
	}
	bs, err := Format.Bundles(context.Background(), root)
	if err != nil || len(bs) != 2 {
		t.Fatalf("%v %v", bs, err)
	}
}

// grown is the export b with one prompt more at the end of its first
// conversation, as a later export of the same account holds it.
func grown(t *testing.T, b []byte) []byte {
	t.Helper()
	var convs []map[string]any
	if err := json.Unmarshal(b, &convs); err != nil {
		t.Fatal(err)
	}
	m := convs[0]["mapping"].(map[string]any)
	m["a4"].(map[string]any)["children"] = []string{"u3"}
	m["u3"] = map[string]any{"id": "u3", "parent": "a4", "children": []string{}, "message": map[string]any{
		"id": "u3", "author": map[string]any{"role": "user"}, "create_time": 1717000100.0,
		"content": map[string]any{"content_type": "text", "parts": []string{"one more"}}}}
	convs[0]["current_node"] = "u3"
	b, err := json.Marshal(convs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A newer export of the same account adds only what is new.
func TestImportNewerExport(t *testing.T) {
	st := importertest.Store(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "conversations.json")
	b, _ := os.ReadFile(sample)
	os.WriteFile(path, b, 0o644)
	tr := importertest.Import(t, st, Format, dir)
	if tr.SessionsNew != 4 || tr.ProblemCount != 1 {
		t.Fatalf("first import: %+v", tr)
	}
	os.WriteFile(path, grown(t, b), 0o644)
	tr = importertest.Import(t, st, Format, dir)
	if tr.SessionsNew != 0 || tr.SessionsGrown != 1 || tr.MessagesAdded != 1 {
		t.Fatalf("newer export: %+v", tr)
	}
}

// --watch on the folder exports are downloaded to follows a newer export
// that replaces the old one (written beside it and renamed over it, as a
// download ends), from the file system's notification.
func TestWatchFollowsNewerExport(t *testing.T) {
	b, _ := os.ReadFile(sample)
	var convs []json.RawMessage
	if err := json.Unmarshal(b, &convs); err != nil {
		t.Fatal(err)
	}
	// The sample's malformed conversation is left out: the watch's first
	// run must find no problem.
	var clean []json.RawMessage
	for _, c := range convs {
		if !strings.Contains(string(c), `"conv-4"`) {
			clean = append(clean, c)
		}
	}
	b, _ = json.Marshal(clean)
	dir := t.TempDir()
	path := filepath.Join(dir, "conversations.json")
	importertest.WriteFile(t, path, b, 0o644)
	importertest.Follows(t, Format, dir, func() {
		tmp := filepath.Join(dir, ".conversations.json.part")
		importertest.WriteFile(t, tmp, grown(t, b), 0o644)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}, 1)
}

// The zip archive ChatGPT sends reads as its conversations.json.
func TestReadZippedExport(t *testing.T) {
	dir := t.TempDir()
	data, _ := os.ReadFile(sample)
	write := func(name string, files map[string][]byte) string {
		p := filepath.Join(dir, name)
		f, _ := os.Create(p)
		zw := zip.NewWriter(f)
		for n, b := range files {
			w, _ := zw.Create(n)
			w.Write(b)
		}
		zw.Close()
		f.Close()
		return p
	}
	res := readFile(t, write("export.zip", map[string][]byte{"chat.html": []byte("<html>"), "conversations.json": data}))
	plain := readFile(t, sample)
	if len(res.Sessions) != len(plain.Sessions) || len(res.Problems) != 1 || res.Skipped["hidden:system"] != plain.Skipped["hidden:system"] {
		t.Errorf("zipped: %d sessions, %v, %v; plain %d", len(res.Sessions), res.Problems, res.Skipped, len(plain.Sessions))
	}
	if _, err := Format.Read(context.Background(), importer.Bundle{Files: []string{write("other.zip", map[string][]byte{"a.txt": nil})}}); err == nil {
		t.Error("a zip without conversations.json was read")
	}
}
