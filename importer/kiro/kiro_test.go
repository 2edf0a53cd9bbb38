package kiro

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	cliID = "9a1c2e3d-0000-4000-8000-000000000001"
	newID = "sess_01hx"
)

var fixture = filepath.Join("testdata", "sessions")

// TestRead reads both layouts: every prompt, reply and tool call once
// and in order, each call with its result (an error status an error),
// the metadata's title, directory, times and model.
func TestRead(t *testing.T) {
	res := importertest.ReadSessions(t, Format{}, fixture, 2)
	s := importertest.Session(t, res, cliID)
	if got := importertest.Roles(s); got != "user assistant assistant" {
		t.Errorf("roles %q", got)
	}
	if s.Title != "What main.go does" || s.Cwd != "/home/u/app" || s.CreatedAt.IsZero() {
		t.Errorf("session %+v", s)
	}
	r := s.Messages[1]
	if r.ID != "a-1" || r.Model != "claude-sonnet-4.5" || r.Parts[0].Text != "Let me read it." {
		t.Errorf("reply %+v", r)
	}
	if p := r.Parts[1]; p.Name != "read" || p.Status != loom.ToolCompleted || string(p.Output) != `"package main\nfunc main() {}"` {
		t.Errorf("read %+v", p)
	}
	if p := r.Parts[2]; p.Name != "shell" || p.Status != loom.ToolError || p.Error != `{"exit_status":"1","stderr":"vet: x"}` {
		t.Errorf("shell %+v", p)
	}
	if res.Skipped["orphan-tool-result"] != 1 || res.Skipped["unknown:Compaction"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	n := importertest.Session(t, res, newID)
	if got := importertest.Roles(n); got != "user assistant assistant assistant" {
		t.Errorf("later layout roles %q", got)
	}
	if n.Title != "Sum test" || n.Cwd != "/home/u/calc" || n.Messages[1].Model != "claude-opus-4.5" {
		t.Errorf("later layout %+v", n)
	}
	if p := n.Messages[2].Parts[0]; p.Name != "write" || p.Status != loom.ToolCompleted || string(p.Output) != `"created sum_test.go"` || n.Messages[2].CreatedAt.UnixMilli() != 1772355603000 {
		t.Errorf("call %+v", p)
	}
}

// TestImportTwice: a session Kiro appends to brings only its new
// messages, followed by --watch; an import after adds nothing.
func TestImportTwice(t *testing.T) {
	dir := t.TempDir()
	data := importertest.ReadBytes(t, filepath.Join(fixture, "cli", cliID+".jsonl"))
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	file := filepath.Join(dir, cliID+".jsonl")
	importertest.WriteFile(t, file, joinLines(lines[:3]), 0o644)
	st := importertest.Store(t)
	w := importertest.ImportThenWatch(t, st, Format{}, dir)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(joinLines(lines[3:4])); err != nil {
		t.Fatal(err)
	}
	f.Close()
	w.Follows(t, "the reply Kiro appended")
	importertest.NothingNew(t, st, Format{}, dir)
}

func TestRoots(t *testing.T) {
	got := Format{}.Roots(func(k string) string { return map[string]string{homeEnv: "/k"}[k] }, "/home/u")
	if !slices.Equal(got, []string{filepath.Join("/k", "sessions")}) {
		t.Errorf("roots %v", got)
	}
}

func joinLines(lines [][]byte) []byte { return append(bytes.Join(lines, []byte("\n")), '\n') }
