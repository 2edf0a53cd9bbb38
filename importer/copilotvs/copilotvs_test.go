package copilotvs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var traces = filepath.Join("testdata", "traces")

// Two trace files of one directory, two conversations: the first's
// turn of two calls (a get_file call whose result is in the second
// file, flushed there again in full, then the answer, flushed twice)
// and a second turn (a terminal call, a tool span whose call no reply
// holds, the answer); the second conversation's one call. Each call's
// usage, once; the agent's own span and a span of no conversation are
// no messages.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, traces, 2, "6f1a2b3c-4d5e-4f60-8a9b-0c1d2e3f4a5b",
		"user assistant assistant user assistant assistant assistant")
	m := s.Messages
	if m[0].Parts[0].Text != "Why does the build fail?" || m[3].Parts[0].Text != "Fix it and build." {
		t.Errorf("prompts %+v %+v", m[0].Parts, m[3].Parts)
	}
	read := m[1].Parts[1]
	if read.Name != "get_file" || read.Status != loom.ToolCompleted || !strings.Contains(string(read.Output), "CS1002") {
		t.Errorf("get_file %+v", read)
	}
	if u := m[1].Usage; u.InputTokens != 1200 || u.OutputTokens != 30 || u.APICalls != 1 || m[1].Model != "gpt-4.1-2025-04-14" {
		t.Errorf("first call %+v %s", u, m[1].Model)
	}
	if m[2].Parts[0].Text != "Line 12 misses a semicolon." || m[2].Usage.InputTokens != 1400 {
		t.Errorf("answer %+v %+v", m[2].Parts, m[2].Usage)
	}
	if p := m[4].Parts[0]; p.Name != "run_command_in_terminal" || string(p.Input) != `{"command":"dotnet build"}` || string(p.Output) != `"Build succeeded."` {
		t.Errorf("terminal call %+v", p)
	}
	if p := m[5].Parts[0]; p.Name != "get_errors" || p.Status != loom.ToolCompleted {
		t.Errorf("lone tool span %+v", p)
	}
	var calls int64
	for _, msg := range m {
		calls += msg.Usage.APICalls
	}
	if calls != 4 || res.Skipped["span-without-conversation"] != 1 || res.Skipped["span:invoke_agent"] != 1 {
		t.Errorf("%d calls, skipped %v", calls, res.Skipped)
	}
	other := importertest.Session(t, res, "0b9e8d7c-6a5f-4e3d-9c2b-1a0f9e8d7c6b")
	if importertest.Roles(other) != "user assistant" {
		t.Errorf("second conversation %s", importertest.Roles(other))
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, traces, 2, 9)
}
