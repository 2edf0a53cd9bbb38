package deepseekharness

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	root    = filepath.Join("testdata", "sessions")
	project = filepath.Join(root, "--home-u-ledger--")
)

const (
	mainID = "0d1f5a6e-7c2b-4f3a-9e8d-1a2b3c4d5e6f"
	subID  = "sub:0d1f5a6e/scout"
	subDir = "sub~003A0d1f5a6e~002Fscout"
)

// The session: the instructions a plugin injected (a system message),
// the prompt, the reply that reasons and reads (its call completed by
// its result) with its tokens and model, the answer; the next prompt and
// the reply dsh was streaming when it stopped, made of its stream; the
// title dsh gave it. The sub-agent's session, in the shape earlier
// versions wrote, is a sub-agent session of it.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, root, 2, mainID, "system user assistant assistant user assistant")
	if s.Title != "Ledger total drifts by a cent" || s.Cwd != "/home/u/ledger" || s.Model != "deepseek-v4-flash" || s.Provider != "deepseek" {
		t.Fatalf("session %q %q %q %q", s.Title, s.Cwd, s.Model, s.Provider)
	}
	if s.CreatedAt.UnixMilli() != 1791104399500 {
		t.Errorf("created %v", s.CreatedAt)
	}
	importertest.CheckTexts(t, s, loom.RoleUser, "Why does the ledger total drift by a cent?", "Send a scout to find every other float sum.")
	importertest.CheckTexts(t, s, loom.RoleSystem, "# AGENTS.md\nRun go test before you say it works.")
	p := s.Messages[2].Parts
	if len(p) != 2 || p[0].Type != loom.PartReasoning || p[1].Name != "read_file" || p[1].Status != loom.ToolCompleted ||
		!bytes.Contains(p[1].Output, []byte("func Total")) {
		t.Fatalf("reply %+v", p)
	}
	if u := s.Messages[2].Usage; u.InputTokens != 5200 || u.OutputTokens != 60 || u.CacheReadTokens != 1280 || u.ReasoningTokens != 24 {
		t.Errorf("usage %+v", u)
	}
	if m := s.Messages[3]; m.ID != "m-reply-2" {
		t.Errorf("answer %s", m.ID)
	}
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Total adds float64s: sum the amounts in cents as int64 instead.", "Sending a scout through the packages")
	if res.Skipped["approval/asked"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	sub := importertest.Session(t, res, subID)
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != mainID || importertest.Roles(sub) != "user assistant assistant" {
		t.Fatalf("sub-agent %s of %q: %s", sub.Kind, sub.ParentSourceID, importertest.Roles(sub))
	}
	if c := sub.Messages[1].Parts[0]; c.Name != "grep" || c.Status != loom.ToolCompleted || string(c.Output) != `"ledger/total.go:3\nledger/fees.go:12"` {
		t.Errorf("sub-agent's call %+v", c)
	}
}

// A log dsh compressed (session.jsonl.zstd) is read as the plain one;
// where both are (dsh compressing it), the plain one is.
func TestReadCompressed(t *testing.T) {
	dir := importertest.CopyDir(t, root)
	plain := filepath.Join(dir, "--home-u-ledger--", mainID, plainName)
	data := importertest.ReadBytes(t, plain)
	importertest.WriteFile(t, filepath.Join(filepath.Dir(plain), compressedName), importertest.Zstd(t, data), 0o644)
	if got := importertest.BundlesUnder(t, Format{}, dir); len(got) != 2 {
		t.Fatalf("bundles %v", got)
	}
	if err := os.Remove(plain); err != nil {
		t.Fatal(err)
	}
	res := importertest.ReadSessions(t, Format{}, dir, 2)
	if s := importertest.Session(t, res, mainID); importertest.Roles(s) != "system user assistant assistant user assistant" {
		t.Errorf("roles %s", importertest.Roles(s))
	}
}

// A line made non-JSON in the middle is one problem line; the others
// are read, the result's call completed all the same. A session whose
// header is lost keeps its id, its directory's name decoded.
func TestDamagedLine(t *testing.T) {
	dir := importertest.CopyDir(t, root)
	path := filepath.Join(dir, "--home-u-ledger--", subDir, plainName)
	lines := bytes.Split(bytes.TrimRight(importertest.ReadBytes(t, path), "\n"), []byte("\n"))
	lines[0] = []byte(`{"type":"session", not json`)
	lines[2] = []byte(`{"type":"user/message","seq":1, not json`)
	importertest.WriteFile(t, path, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644)
	res := importertest.ReadAll(t, Format{}, dir)
	if len(res.Problems) != 2 || res.Problems[0].Line != 1 || res.Problems[1].Line != 3 {
		t.Fatalf("problems %v", res.Problems)
	}
	s := importertest.Session(t, res, subID)
	if importertest.Roles(s) != "assistant assistant" || s.Messages[0].Parts[0].Status != loom.ToolCompleted {
		t.Errorf("roles %s", importertest.Roles(s))
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, root, 2, 9)
	importertest.ImportsAndFollows(t, Format{}, root, 2, 9, filepath.Join("--home-u-ledger--", subDir, plainName),
		`{"type":"user/message","seq":11,"time":1791104471000,"data":{"id":"m-sub-2","role":"user","content":[{"type":"text","text":"And in the tests?"}],"source":{"kind":"user"}},"surfaceOp":"append"}`)
}

// Its places: ~/.dsh/sessions; $DSH_HOME replaces ~/.dsh.
func TestRoots(t *testing.T) {
	if roots := (Format{}).Roots(nil, "/home/u"); len(roots) != 1 || roots[0] != "/home/u/.dsh/sessions" {
		t.Errorf("roots %v", roots)
	}
	if got := (Format{}).Roots(importertest.Getenv("DSH_HOME", "/x/dsh"), "/home/u"); len(got) != 1 || got[0] != "/x/dsh/sessions" {
		t.Errorf("with $DSH_HOME: %v", got)
	}
}

func TestDecodeSegment(t *testing.T) {
	for enc, want := range map[string]string{subDir: subID, "~002E~002E": "..", "a~00E9b": "aéb", "plain-id.1": "plain-id.1", "~zz": "~zz"} {
		if got := decodeSegment(enc); got != want {
			t.Errorf("decodeSegment(%q) = %q, want %q", enc, got, want)
		}
	}
}
