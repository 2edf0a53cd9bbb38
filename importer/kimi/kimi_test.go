package kimi

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	hash      = "9413e71e4e637bdd9e5dc6443c2d621e"
	sessionID = "5e8f1c2a-7b3d-4a6e-9f10-2c3d4e5f6a7b"
	earlyID   = "1a2b3c4d-5e6f-4a0b-8c1d-2e3f4a5b6c7d"
)

var sessions = filepath.Join("testdata", "sessions")

// A session's context: each prompt and reply once, in order, with the
// reasoning, each call completed or failed by the tool message that
// answers it; the wire log's times and each model call's usage on the
// reply it made; the work directory from kimi.json.
func TestReadSession(t *testing.T) {
	res, s := importertest.ReadAllFor(t, Format{}, sessions, sessionID)
	if s.Cwd != "/home/u/kimi-proj" || s.Provider != "moonshot" {
		t.Errorf("session %+v", s)
	}
	if got := importertest.Roles(s); got != "user assistant assistant assistant user assistant" {
		t.Fatalf("roles %q", got)
	}
	r := s.Messages[1]
	if r.Parts[0].Type != loom.PartReasoning || r.Parts[1].Text != "Listing them." {
		t.Errorf("reply %+v", r.Parts)
	}
	if p := r.Parts[2]; p.Name != "Glob" || p.CallID != "Glob:0" || p.Status != loom.ToolCompleted || string(p.Input) != `{"pattern":"*.go"}` || string(p.Output) != `"main.go\nutil.go"` {
		t.Errorf("Glob %+v", p)
	}
	if p := s.Messages[2].Parts[1]; p.Status != loom.ToolError {
		t.Errorf("ReadFile %+v", p)
	}
	if u := s.Messages[2].Usage; u.InputTokens != 120 || u.CacheReadTokens != 1500 || u.OutputTokens != 30 || u.APICalls != 1 {
		t.Errorf("usage %+v", u)
	}
	if got := s.Messages[0].CreatedAt.UnixMilli(); got != 1763000000250 {
		t.Errorf("prompt at %d, the turn's beginning", got)
	}
	if got := s.Messages[5].CreatedAt.UnixMilli(); got != 1763000061250 {
		t.Errorf("last reply at %d", got)
	}
	if res.Skipped["_checkpoint"] != 2 || res.Skipped["_usage"] != 1 || res.Skipped["unknown:_future"] != 1 || len(res.Problems) != 1 {
		t.Errorf("skipped %v, problems %v", res.Skipped, res.Problems)
	}
	early := importertest.Session(t, res, earlyID)
	if importertest.Roles(early) != "user assistant" || early.Cwd != "/home/u/kimi-proj" {
		t.Errorf("early session %+v", early)
	}
}

// Imported once, a second import adds nothing, and --watch follows the
// turn Kimi appends.
func TestImportAndFollow(t *testing.T) {
	st := importertest.Store(t)
	if rep := importertest.Import(t, st, Format{}, sessions); rep.SessionsNew != 2 || rep.MessagesAdded != 8 {
		t.Fatalf("first import %+v", rep)
	}
	if rep := importertest.Import(t, st, Format{}, sessions); rep.SessionsNew != 0 || rep.MessagesAdded != 0 {
		t.Fatalf("second import %+v", rep)
	}
	dir := filepath.Join(t.TempDir(), hash, sessionID)
	os.MkdirAll(dir, 0o755)
	for _, n := range []string{contextFile, wireFile} {
		data := importertest.ReadBytes(t, filepath.Join(sessions, hash, sessionID, n))
		// Less the broken line the fixture ends with.
		data = bytes.TrimSuffix(data, []byte("{broken\n"))
		os.WriteFile(filepath.Join(dir, n), data, 0o644)
	}
	file := filepath.Join(dir, contextFile)
	importertest.Follows(t, Format{}, filepath.Dir(filepath.Dir(dir)), func() {
		importertest.AppendLines(t, file, `{"role":"user","content":"one more"}`, `{"role":"assistant","content":"Sure."}`)
	}, 2)
}

func TestRootsAndBundles(t *testing.T) {
	home := filepath.FromSlash("/home/u")
	if got := (Format{}).Roots(nil, home); !slices.Equal(got, []string{filepath.Join(home, ".kimi", "sessions"), filepath.Join(home, ".kimi-code", "sessions")}) {
		t.Errorf("roots %v", got)
	}
	if got := (Format{}).Roots(importertest.Getenv(envShare, "~"+string(filepath.Separator)+"k"), home); !slices.Equal(got, []string{filepath.Join(home, "k", "sessions")}) {
		t.Errorf("roots %v", got)
	}
	// The wire log names its session: the context first.
	bs, err := Format{}.Bundles(context.Background(), filepath.Join(sessions, hash, sessionID, wireFile))
	if err != nil || len(bs) != 1 || len(bs[0].Files) != 2 || filepath.Base(bs[0].Name()) != contextFile {
		t.Errorf("bundles %v %v", bs, err)
	}
}

// Kimi CLI marks a checkpoint with a user message of its own,
// <system>CHECKPOINT n</system> (Context.checkpoint in
// src/kimi_cli/soul/context.py of MoonshotAI/kimi-cli at
// 4a550effdfcb29a25a5d325bf935296cc50cd417, written by its okabe agent):
// no prompt.
func TestCheckpointsAreNoPrompts(t *testing.T) {
	_, s := importertest.ReadAllFor(t, Format{}, filepath.Join("testdata", "checkpoints"), "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f")
	if got := importertest.Roles(s); got != "user assistant" || s.Messages[0].Text() != "Rename util.go to helpers.go." {
		t.Errorf("roles %q, first %q", got, s.Messages[0].Text())
	}
}

// Kimi Code's kernel keeps a session as its agents' wire logs alone,
// ~/.kimi-code/sessions/wd_<dir>_<hash>/session_<id>/agents/<agent>/wire.jsonl
// (agentsview's reader of Kimi's wire logs, wesm/agentsview at
// a5de5daca0005d2794f6fe8e0412795cb2873e4b, internal/parser/kimi.go):
// `--from kimi` reads them as Kimi Work's are.
func TestReadKimiCodeKernel(t *testing.T) {
	root := filepath.Join("testdata", "kimi-code", "sessions")
	res := importertest.ReadSessions(t, Format{}, root, 1)
	s := res.Sessions[0]
	if importertest.Roles(s) != "user assistant assistant user assistant assistant user" || s.Cwd != "/home/u/site" {
		t.Errorf("session %s %q", importertest.Roles(s), s.Cwd)
	}
	importertest.ImportsOnce(t, Format{}, root, 1, 7)
}
