package reasonix

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

var projects = filepath.Join("testdata", "projects")

// The log Reasonix 1.38.11 wrote of four turns run with -p and -c
// against a fake model: a greeting with reasoning; a read_file call
// and its result; a compress call that failed; and a compress call
// that compacted the conversation (its summary, the fake's answer to
// Reasonix's summary request, is a summary message). The system prompt
// and the session context Reasonix sends before each prompt are what it
// was told: system messages, never prompts; the working directory is
// the one the context names; the query cache beside the session is no
// session.
func TestReadWhatReasonixWrote(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, projects, 1, "7bcce35e75a60c987f8f5364e932a339",
		"system system user assistant system user assistant assistant system user assistant assistant system user assistant summary assistant")
	if s.Cwd != "/tmp/agents71b/rh/work" || s.Model != "gpt-fake" || s.Provider != "fake" {
		t.Errorf("cwd %q model %q provider %q", s.Cwd, s.Model, s.Provider)
	}
	if res.Skipped["session-context"] != 0 || res.Skipped["system-prompt"] != 0 {
		t.Errorf("skipped %v", res.Skipped)
	}
	// The conversation: every message but what Reasonix was told.
	var m []*loom.Message
	for _, x := range s.Messages {
		if x.Role != loom.RoleSystem {
			m = append(m, x)
		}
	}
	if told := s.Messages[0].Text() + s.Messages[1].Text(); !strings.Contains(told, "/tmp/agents71b/rh/work") {
		t.Errorf("the session context is not kept: %.300q", told)
	}
	if p := m[0].Parts; len(p) != 1 || p[0].Text != "Say hello in one line." {
		t.Errorf("first prompt %+v", p)
	}
	if p := m[1].Parts; len(p) != 2 || p[0].Type != loom.PartReasoning || p[0].Text != "A greeting." || p[1].Text != "Hello there 1." {
		t.Errorf("first reply %+v", p)
	}
	read := m[3].Parts[1]
	if read.Type != loom.PartTool || read.Name != "read_file" || read.Status != loom.ToolCompleted ||
		!strings.Contains(string(read.Output), "beta") || string(read.Input) != `{"path":"notes.txt"}` {
		t.Errorf("read %+v", read)
	}
	failed := m[6].Parts[1]
	if failed.Name != "compress" || failed.Status != loom.ToolError || !strings.Contains(failed.Error, "anchor matched 2") {
		t.Errorf("failed call %+v", failed)
	}
	if p := m[10].Parts; len(p) != 1 || p[0].Text != "Hello there 4." {
		t.Errorf("summary %+v", p)
	}
	if !m[0].CreatedAt.Before(*m[11].CompletedAt) || m[1].CreatedAt.IsZero() {
		t.Errorf("times %v %v", m[0].CreatedAt, m[1].CreatedAt)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, projects, 1, 17)
}

// copyLog is the testdata log at dir/events.frames cut to n bytes.
func copyLog(t *testing.T, n int) string {
	t.Helper()
	data := importertest.ReadBytes(t, filepath.Join(projects, "-tmp-agents71b-rh-work", "sessions-v4", "7bcce35e75a60c987f8f5364e932a339", "events.frames"))
	if n < 0 || n > len(data) {
		n = len(data)
	}
	dir := filepath.Join(t.TempDir(), "p", "sessions-v4", "abc")
	importertest.MkdirAll(t, dir)
	p := filepath.Join(dir, "events.frames")
	importertest.WriteFile(t, p, data[:n], 0o644)
	return p
}

// A log cut anywhere (Reasonix still writing it) reads up to the last
// whole frame, without a problem, never more messages than the whole
// log; cut before its commit, the first reply is not read; a file that
// is no Reasonix log is an error, and garbage after the frames one
// problem.
func TestCutLogAndOthers(t *testing.T) {
	data := importertest.ReadBytes(t, copyLog(t, -1))
	read := func(n int) *importer.Result {
		t.Helper()
		res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{copyLog(t, n)}})
		if err != nil || len(res.Problems) != 0 {
			t.Fatalf("cut at %d: %v %v", n, err, res.Problems)
		}
		return res
	}
	messages := func(res *importer.Result) int {
		if len(res.Sessions) == 0 {
			return 0
		}
		return len(res.Sessions[0].Messages)
	}
	whole := messages(read(-1))
	commit := -1 // where the first commit's frame starts
	last := 0
	for off := 0; off+12 <= len(data); {
		size := int(binary.BigEndian.Uint32(data[off+4:]))
		frames(context.Background(), "x", data[off:off+12+size], &importer.Result{}, func(rec []byte) {
			var r record
			if json.Unmarshal(rec, &r) == nil && r.Event != nil && r.Event.Kind == "assistant/attempt" && commit < 0 {
				p, _ := base64.StdEncoding.DecodeString(r.Event.Payload)
				if bytes.Contains(p, []byte(`"commit"`)) {
					commit = off
				}
			}
		})
		for _, cut := range []int{off, off + 5, off + 12 + size/2} {
			n := messages(read(cut))
			if n < last || n > whole {
				t.Fatalf("cut at %d: %d messages after %d (whole: %d)", cut, n, last, whole)
			}
			last = n
		}
		off += 12 + size
	}
	if commit < 0 {
		t.Fatal("no commit in the log")
	}
	before := read(commit)
	// The system prompt, the session context and the prompt.
	if messages(before) != 3 || before.Skipped["discarded-attempt"] != 1 {
		t.Errorf("before the first commit: %d messages, skipped %v", messages(before), before.Skipped)
	}
	if messages(read(len(data))) != whole {
		t.Error("the whole log cut at its end")
	}
	importertest.RefusesFile(t, Format{}, "events.frames", `{"not":"frames"}`, "")
	withJunk := copyLog(t, -1)
	f, _ := os.OpenFile(withJunk, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("garbage that is not a frame at all")
	f.Close()
	res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{withJunk}})
	if err != nil || len(res.Problems) != 1 || messages(res) != whole {
		t.Errorf("junk after the log: %v, %v", err, res.Problems)
	}
}

// $REASONIX_HOME replaces ~/.reasonix.
func TestRoots(t *testing.T) {
	got := Format{}.Roots(importertest.Getenv("REASONIX_HOME", "/x/rh"), "/home/u")
	if len(got) != 1 || got[0] != filepath.Join("/x/rh", "projects") {
		t.Errorf("roots %v", got)
	}
	if got := (Format{}).Roots(nil, "/home/u"); got[0] != filepath.Join("/home/u", ".reasonix", "projects") {
		t.Errorf("roots %v", got)
	}
}
