package droid

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer/importertest"
)

// TestHandoffDroidLines: the session goes in the directory droid names
// after the working directory (each / a -), its session_start records
// the loom session, and its first message names no parent (droid 0.215
// refuses a session whose first message's parentId is null: "Existing
// session message is invalid"); each later one names the one before.
func TestHandoffDroidLines(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "my.proj dir")
	h := &handoff.Handoff{Session: &loom.Session{ID: "s1", Title: "T"}, Dir: dir, Home: home,
		Messages: []*loom.Message{
			{Role: loom.RoleUser, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "hi"}}},
			{Role: loom.RoleAssistant, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "hello"}}},
		}}
	out := importertest.HandOff(t, Format{}, h)
	want := filepath.Join(home, ".factory", "sessions", strings.ReplaceAll(dir, "/", "-"), out.SessionID+".jsonl")
	if out.Path != want {
		t.Errorf("written to %s, want %s", out.Path, want)
	}
	f, err := os.Open(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []map[string]any
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 3 || lines[0]["type"] != "session_start" || lines[0]["loomHandoff"] == nil {
		t.Fatalf("lines %v", lines)
	}
	if _, ok := lines[1]["parentId"]; ok {
		t.Errorf("the first message names a parent: %v", lines[1])
	}
	if lines[2]["parentId"] != lines[1]["id"] {
		t.Errorf("the second message's parent is %v, want %v", lines[2]["parentId"], lines[1]["id"])
	}
}
