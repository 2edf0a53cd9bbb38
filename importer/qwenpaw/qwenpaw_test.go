package qwenpaw

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

var workspaces = filepath.Join("testdata", "workspaces")

// The console's session: a prompt; thinking and a shell call, which a
// system message of its result completes; the answer; a system reminder
// (skipped); a prompt of plain text and a reply with an image block
// (skipped). A DingTalk session whose memory holds plain messages
// (memories, not content); chats.json beside is no session.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, workspaces, 2, "console/default",
		"user assistant assistant user assistant")
	p := s.Messages[1].Parts
	if len(p) != 2 || p[0].Type != loom.PartReasoning || p[1].Name != "execute_shell_command" || p[1].Status != loom.ToolCompleted ||
		string(p[1].Output) != `"11 notes.txt"` || string(p[1].Input) != `{"command":"wc -c notes.txt"}` {
		t.Errorf("call %+v", p)
	}
	if s.Messages[3].Parts[0].Text != "Thanks!" || res.Skipped["system-message"] != 1 || res.Skipped["block:image"] != 1 {
		t.Errorf("prompt %+v, skipped %v", s.Messages[3].Parts, res.Skipped)
	}
	if !s.Messages[0].CreatedAt.Before(s.Messages[4].CreatedAt) || s.Messages[0].CreatedAt.IsZero() {
		t.Errorf("times %v %v", s.Messages[0].CreatedAt, s.Messages[4].CreatedAt)
	}
	dm := importertest.Session(t, res, "dingtalk/dingtalk--dm--8812")
	if importertest.Roles(dm) != "user assistant" {
		t.Errorf("dingtalk %s", importertest.Roles(dm))
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, workspaces, 2, 7)
	broken := filepath.Join(t.TempDir(), "sessions", "console", "x.json")
	os.MkdirAll(filepath.Dir(broken), 0o755)
	os.WriteFile(broken, []byte(`{"agent": {"memory": {"content": [`), 0o644)
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{broken}}); err == nil {
		t.Error("a broken document read without an error")
	}
}

// $QWENPAW_WORKING_DIR, else $COPAW_WORKING_DIR, names the directory.
func TestRoots(t *testing.T) {
	for _, v := range []string{"QWENPAW_WORKING_DIR", "COPAW_WORKING_DIR"} {
		got := Format{}.Roots(importertest.Getenv(v, "/x/qp"), "/home/u")
		if len(got) != 1 || got[0] != filepath.Join("/x/qp", "workspaces") {
			t.Errorf("%s: roots %v", v, got)
		}
	}
}
